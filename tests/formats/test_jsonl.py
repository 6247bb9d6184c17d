"""agent-memory/0.1: parsing, validation, the view, appends, compaction and the prompt block."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import canonical_json, is_header, parse_record
from memsync.formats.jsonl.parse import check_memory_file, parse_memory, read_memory
from memsync.formats.jsonl.prompt import render_prompt
from memsync.formats.jsonl.records import FORMAT, Entry, Tombstone
from memsync.formats.jsonl.timestamps import parse_expiry
from memsync.formats.jsonl.view import build_view, scope_matches
from memsync.memoryfile.file import MemoryFile, NewEntry

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
HEADER = {"format": FORMAT, "created_at": "2026-11-01T00:00:00Z"}


def entry(id: str, minute: int = 0, **fields: Any) -> dict[str, Any]:
    """A valid entry object created ``minute`` minutes after 2026-11-01T00:00Z."""
    created = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=minute)
    obj: dict[str, Any] = {
        "id": id,
        "kind": "fact",
        "text": f"text of {id}",
        "scope": "global",
        "tags": [],
        "source": "session:s1",
        "confidence": 0.8,
        "expires_at": None,
        "supersedes": None,
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    obj.update(fields)
    return obj


def tomb(id: str, minute: int = 0) -> dict[str, Any]:
    created = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=minute)
    return {"id": id, "deleted": True, "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ")}


def file_bytes(*objs: dict[str, Any], header: bool = True) -> bytes:
    lines = ([HEADER] if header else []) + list(objs)
    return b"".join(json.dumps(o, ensure_ascii=False).encode() + b"\n" for o in lines)


def view_ids(*objs: dict[str, Any], now: datetime = NOW) -> list[str]:
    return [e.id for e in parse_memory(file_bytes(*objs)).view(now)]


# --- lines and records -------------------------------------------------------------------------------


def test_canonical_json_sorts_keys_without_spaces_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": "é→🟥"}) == '{"a":"é→🟥","b":1}'.encode()


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe{}", b"[1, 2]", b'"text"', b'{"a": NaN}', b""])
def test_parse_record_returns_none_for_anything_but_a_json_object(raw: bytes) -> None:
    assert parse_record(raw) is None


def test_parse_record_and_is_header() -> None:
    assert parse_record(b'{"id": "x"}\r') == {"id": "x"}
    assert is_header({"format": FORMAT})
    assert not is_header({"format": FORMAT, "id": "x"})
    assert not is_header({"id": "x"})


def test_malformed_lines_are_reported_with_line_and_field_and_skipped() -> None:
    data = file_bytes(
        entry("aaaaaaaaaaa1"),
        entry("aaaaaaaaaaa2", kind="opinion"),
        entry("aaaaaaaaaaa3", confidence=1.5),
        entry("aaaaaaaaaaa4", confidence=True),
        entry("aaaaaaaaaaa5", created_at="2026-11-01T00:00:00"),
        entry("aaaaaaaaaaa6", created_at="2026-11-01T02:00:00+02:00"),
        entry("aaaaaaaaaaa7", expires_at="next week"),
        {k: v for k, v in entry("x").items() if k != "id"},
        entry("aaaaaaaaaaa9", tags="one,two"),
        entry("aaaaaaaaaa10", text=42),
        {"id": "aaaaaaaaaa11", "deleted": "yes"},
    )
    data += b"{broken\n" + b'{"id": "bad-utf8", "text": "\xff"}\n' + b"[1]\n"
    data += file_bytes(entry("ok2"), header=False)
    parsed = parse_memory(data)
    found = {(p.line, p.field) for p in parsed.problems}
    assert found == {
        (3, "kind"),
        (4, "confidence"),
        (5, "confidence"),
        (6, "created_at"),
        (7, "created_at"),
        (8, "expires_at"),
        (9, "id"),
        (10, "tags"),
        (11, "text"),
        (12, "deleted"),
        (13, None),
        (14, None),
        (15, None),
    }
    messages = {p.line: p.message for p in parsed.problems}
    assert "UTF-8" in messages[14] and "JSON" in messages[13] and "object" in messages[15]
    assert [r.line for r in parsed.records] == [2, 16]
    assert [e.id for e in parsed.view(NOW)] == ["aaaaaaaaaaa1", "ok2"]
    assert [n for n, _ in parsed.malformed] == list(range(3, 16))


def test_partial_last_line_is_not_part_of_the_view() -> None:
    data = file_bytes(entry("aaaaaaaaaaa1")) + json.dumps(entry("aaaaaaaaaaa2")).encode()
    parsed = parse_memory(data)
    assert parsed.partial_tail.startswith(b'{"id": "aaaaaaaaaaa2"')
    assert [e.id for e in parsed.view(NOW)] == ["aaaaaaaaaaa1"]
    assert [(p.line, "no newline" in p.message) for p in parsed.problems] == [(3, True)]


def test_missing_header_is_reported_but_entries_still_count() -> None:
    parsed = parse_memory(file_bytes(entry("aaaaaaaaaaa1"), header=False))
    assert parsed.header is None
    assert [(p.line, "header" in p.message) for p in parsed.problems] == [(1, True)]
    assert [e.id for e in parsed.view(NOW)] == ["aaaaaaaaaaa1"]


def test_unknown_fields_round_trip() -> None:
    original = entry("aaaaaaaaaaa1", extension={"nested": [1, "é"]}, weight=3)
    parsed = parse_memory(file_bytes(original, {"id": "bbbbbbbbbbbb", "deleted": True, "by": "alice"}))
    first, second = (r.record for r in parsed.records)
    assert isinstance(first, Entry) and first.extra == {"extension": {"nested": [1, "é"]}, "weight": 3}
    assert canonical_json(first.to_obj()) == canonical_json(original)
    assert isinstance(second, Tombstone)
    assert second.to_obj() == {"id": "bbbbbbbbbbbb", "deleted": True, "by": "alice"}


# --- the view ------------------------------------------------------------------------------------------


def test_later_created_at_wins_not_file_position() -> None:
    newer = entry("aaaaaaaaaaa1", 5, text="new")
    older = entry("aaaaaaaaaaa1", 1, text="old")
    for order in ((newer, older), (older, newer)):
        view = parse_memory(file_bytes(*order)).view(NOW)
        assert [e.text for e in view] == ["new"]


def test_tombstone_is_final_even_before_a_later_entry_with_that_id() -> None:
    assert view_ids(entry("aaaaaaaaaaa1", 1), tomb("aaaaaaaaaaa1", 2), entry("aaaaaaaaaaa1", 9)) == []
    assert view_ids(tomb("aaaaaaaaaaa1", 0), entry("aaaaaaaaaaa1", 5), entry("b", 6)) == ["b"]


def test_supersede_chain_and_deleted_superseder() -> None:
    a, b, c = entry("a", 1), entry("b", 2, supersedes="a"), entry("c", 3, supersedes="b")
    assert view_ids(c, a, b) == ["c"]
    # a stays gone whatever happens to b later: tombstoned, expired, or rewritten without supersedes.
    assert view_ids(a, b, tomb("b", 4)) == []
    assert view_ids(a, entry("b", 2, supersedes="a", expires_at="2026-11-02T00:00:00Z")) == []
    assert view_ids(a, b, entry("b", 9, supersedes=None)) == ["b"]


def test_supersede_cycle_keeps_the_latest_member() -> None:
    assert view_ids(entry("a", 1, supersedes="b"), entry("b", 2, supersedes="a")) == ["b"]
    three = (entry("a", 1, supersedes="c"), entry("b", 2, supersedes="a"), entry("c", 3, supersedes="b"))
    assert view_ids(*three) == ["c"]
    # equal created_at: the id breaks the tie
    assert view_ids(entry("x", 1, supersedes="y"), entry("y", 1, supersedes="x")) == ["y"]
    assert view_ids(entry("s", 1, supersedes="s")) == ["s"]


def test_inferred_entry_cannot_supersede_a_user_entry() -> None:
    user = entry("u", 1, source="user", confidence=1.0)
    assert view_ids(user, entry("i", 2, supersedes="u")) == ["u", "i"]
    assert view_ids(user, entry("v", 2, source="user", supersedes="u")) == ["v"]
    assert view_ids(entry("i", 1), entry("u", 2, source="user", supersedes="i")) == ["u"]


def test_user_version_of_an_id_outranks_an_inferred_rewrite() -> None:
    user = entry("a", 1, source="user", text="said by the user")
    view = parse_memory(file_bytes(entry("a", 5, text="inferred"), user)).view(NOW)
    assert [e.text for e in view] == ["said by the user"]


def test_expiry_uses_the_clock_parameter() -> None:
    e = entry("a", 1, expires_at="2026-11-10T00:00:00Z")
    assert view_ids(e, now=datetime(2026, 11, 9, 23, 59, 59, tzinfo=UTC)) == ["a"]
    assert view_ids(e, now=datetime(2026, 11, 10, tzinfo=UTC)) == []


def test_duplicate_ids_with_different_content_pick_one_winner_and_check_reports(tmp_path: Path) -> None:
    same_time = [entry("a", 1, text="one"), entry("a", 1, text="two")]
    winners = {parse_memory(file_bytes(*order)).view(NOW)[0].text for order in (same_time, same_time[::-1])}
    assert len(winners) == 1
    path = tmp_path / "m.jsonl"
    path.write_bytes(file_bytes(*same_time, entry("a", 1, text="one")))
    assert check_memory_file(path) == [
        f"{path}:3: field 'id': duplicate id 'a' with different content (first at line 2); the view keeps one"
    ]


times = st.integers(min_value=0, max_value=6)
ids = st.sampled_from(["a", "b", "c", "d", "e"])
entry_objs = st.builds(
    lambda i, t, sup, src, exp, text: entry(
        i, t, supersedes=sup, source=src, text=text, expires_at="2026-11-01T00:03:00Z" if exp else None
    ),
    ids,
    times,
    st.none() | ids,
    st.sampled_from(["user", "session:x"]),
    st.booleans(),
    st.sampled_from(["x", "y"]),
)
records_strategy = st.lists(entry_objs | st.builds(tomb, ids, times), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), objs=records_strategy)
def test_view_is_the_same_for_every_permutation_of_the_lines(
    data: st.DataObject, objs: list[dict[str, Any]]
) -> None:
    # Ties in created_at and duplicate ids are generated on purpose: they must not break the property.
    shuffled = data.draw(st.permutations(objs))
    now = datetime(2026, 11, 1, 0, 2, tzinfo=UTC)
    first = parse_memory(file_bytes(*objs))
    second = parse_memory(file_bytes(*shuffled))
    expected = [canonical_json(e.to_obj()) for e in first.view(now)]
    assert [canonical_json(e.to_obj()) for e in second.view(now)] == expected
    reversed_records = [r.record for r in reversed(first.records)]
    assert [canonical_json(e.to_obj()) for e in build_view(reversed_records, now)] == expected


# --- writing -------------------------------------------------------------------------------------------


def test_remember_creates_the_file_with_a_header_and_appends_canonical_lines(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "sub" / "m.jsonl")
    first = memory.remember(NewEntry("Prefers tabs.", "preference", tags=("style",)), now=NOW)
    second = memory.remember(
        NewEntry("Docs at x.", "source", scope="example.org", source="session:1", confidence=0.7),
        now=NOW + timedelta(seconds=1),
    )
    lines = memory.path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert json.loads(lines[0]) == {"format": FORMAT, "created_at": "2026-11-30T12:00:00Z"}
    assert lines[1] == canonical_json(first.to_obj()) and lines[2] == canonical_json(second.to_obj())
    assert re.fullmatch(r"[0-9a-f]{12}", first.id) and first.id != second.id
    assert first.to_obj() == {
        "id": first.id,
        "kind": "preference",
        "text": "Prefers tabs.",
        "scope": "global",
        "tags": ["style"],
        "source": "user",
        "confidence": 1.0,
        "expires_at": None,
        "supersedes": None,
        "created_at": "2026-11-30T12:00:00Z",
    }
    assert [e.id for e in memory.view(NOW + timedelta(seconds=2))] == [first.id, second.id]


def test_invalid_entries_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "m.jsonl")
    memory.create(NOW)
    before = memory.path.read_bytes()
    with pytest.raises(MemsyncError, match="'kind'"):
        memory.remember(NewEntry("x", "opinion"))
    with pytest.raises(MemsyncError, match="'confidence'"):
        memory.remember(NewEntry("x", "fact", confidence=2.0))
    with pytest.raises(MemsyncError, match="secret"):
        memory.remember(NewEntry("The deploy key is ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "fact"))
    assert memory.path.read_bytes() == before


def test_forget_and_supersede(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "m.jsonl")
    user = memory.remember(NewEntry("Use tabs.", "preference"), now=NOW)
    inferred = memory.remember(NewEntry("Lint first.", "lesson", source="session:a", confidence=0.6), now=NOW)
    with pytest.raises(MemsyncError, match="cannot replace"):
        memory.remember(NewEntry("Use spaces.", source="session:b", confidence=0.5, supersedes=user.id))
    newer = memory.remember(
        NewEntry("Lint and type-check first.", source="session:b", confidence=0.7, supersedes=inferred.id),
        now=NOW + timedelta(seconds=1),
    )
    assert (newer.kind, newer.supersedes) == ("lesson", inferred.id)
    tombstone = memory.forget(user.id, now=NOW + timedelta(seconds=2))
    assert tombstone.to_obj() == {"id": user.id, "deleted": True, "created_at": "2026-11-30T12:00:02Z"}
    assert [e.id for e in memory.view(NOW + timedelta(seconds=3))] == [newer.id]
    with pytest.raises(MemsyncError, match="already deleted"):
        memory.forget(user.id)
    with pytest.raises(MemsyncError, match="no entry with that id"):
        memory.forget("000000000000")


def test_read_memory_of_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(MemsyncError, match="no such memory file"):
        read_memory(tmp_path / "absent.jsonl")


def test_parse_expiry_accepts_durations_and_utc_timestamps() -> None:
    assert parse_expiry("30d", NOW) == "2026-12-30T12:00:00Z"
    assert parse_expiry("12h", NOW) == "2026-12-01T00:00:00Z"
    assert parse_expiry("2026-12-31T00:00:00+00:00", NOW) == "2026-12-31T00:00:00Z"
    with pytest.raises(MemsyncError, match="expiry"):
        parse_expiry("tomorrow", NOW)


# --- compaction ----------------------------------------------------------------------------------------


def test_compact_keeps_exactly_the_live_view_plus_tombstones(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    keep = entry("keep", 1, extension="kept verbatim")
    data = (
        file_bytes(
            entry("old", 0),
            entry("new", 2, supersedes="old"),
            keep,
            entry("gone", 3),
            tomb("gone", 4),
            entry("dup", 5, text="v1"),
            entry("dup", 6, text="v2"),
            keep,
            entry("exp", 7, expires_at="2026-11-02T00:00:00Z"),
        )
        + b"{malformed kept\n"
    )
    path.write_bytes(data)
    before = read_memory(path)
    report = MemoryFile(path).compact(now=NOW)
    after_bytes = path.read_bytes()
    after = read_memory(path)
    assert [e.to_obj() for e in after.view(NOW)] == [e.to_obj() for e in before.view(NOW)]
    kept_lines = after_bytes.split(b"\n")
    assert kept_lines[0] == json.dumps(HEADER).encode()
    assert [json.loads(line) for line in kept_lines[1:-2]] == [
        entry("new", 2, supersedes="old"),
        keep,
        tomb("gone", 4),
        entry("dup", 6, text="v2"),
    ]
    assert kept_lines[-2:] == [b"{malformed kept", b""]
    assert (report.lines_before, report.lines_after) == (11, 6)


def test_compact_refuses_a_file_with_an_unfinished_last_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(file_bytes(entry("a", 1)) + b'{"id": "b"')
    with pytest.raises(MemsyncError, match="unfinished"):
        MemoryFile(path).compact(now=NOW)
    assert path.read_bytes().endswith(b'{"id": "b"')


# --- the prompt block ----------------------------------------------------------------------------------


def _entries(*objs: dict[str, Any]) -> list[Entry]:
    return parse_memory(file_bytes(*objs)).view(NOW)


def test_scope_matching() -> None:
    assert scope_matches("global", "project:x")
    assert scope_matches("github.com", "github.com") and scope_matches("github.com", "API.GitHub.com")
    assert not scope_matches("api.github.com", "github.com")
    assert not scope_matches("hub.com", "github.com")
    assert scope_matches("project:acmp", "project:acmp")
    assert not scope_matches("project:acmp", "project:other")
    assert not scope_matches("github.com", "project:acmp")
    assert scope_matches("project:acmp", None)


def test_prompt_groups_by_kind_filters_by_scope_and_puts_user_entries_first() -> None:
    entries = _entries(
        entry("l1", 1, kind="lesson", text="Inferred lesson.", confidence=0.9),
        entry("l2", 2, kind="lesson", text="User lesson.", source="user", confidence=1.0),
        entry("p1", 3, kind="preference", text="Plain English.", source="user"),
        entry("f1", 4, kind="fact", text="Other project.", scope="project:other"),
        entry("s1", 5, kind="source", text="Check the\nwiki.", scope="github.com"),
        entry("a1", 6, kind="avoid", text="Never force-push.", scope="project:acmp"),
    )
    text = render_prompt(entries, scope="project:acmp")
    assert text == (
        '# Memory (project:acmp)\n## Preferences\n- Plain English. (source: "user")\n'
        '## Lessons\n- User lesson. (source: "user")\n- Inferred lesson.\n## Avoid\n- Never force-push.\n'
    )
    assert "- Check the wiki." in render_prompt(entries, scope="api.github.com")
    assert render_prompt(entries, kinds=["avoid"]) == "# Memory\n## Avoid\n- Never force-push.\n"
    assert render_prompt(entries, scope="project:none", kinds=["fact"]) == ""
    assert render_prompt(entries[::-1], scope="project:acmp") == text
    with pytest.raises(MemsyncError, match="unknown kind"):
        render_prompt(entries, kinds=["opinion"])


def test_prompt_is_cut_at_whole_entries_to_max_bytes() -> None:
    entries = _entries(
        *(entry(f"e{i}", i, text=f"Entry number {i} — ünïcode.", confidence=0.5 + i / 100) for i in range(30))
    )
    full = render_prompt(entries, max_bytes=100_000)
    for cap in (60, 120, 333, 700):
        text = render_prompt(entries, max_bytes=cap)
        assert len(text.encode()) <= cap
        body = [line for line in text.splitlines() if line.startswith("- ")]
        assert all(line in full.splitlines() for line in body)
        assert text.endswith("left out to fit the size limit)\n")
    # highest confidence first, so the cut keeps the top entries
    assert "- Entry number 29 — ünïcode." in render_prompt(entries, max_bytes=120)
    # nothing fits: the note alone says what was left out, rather than an empty block
    assert render_prompt(entries, max_bytes=10) == "(30 more entries left out to fit the size limit)\n"
    assert render_prompt(entries[:1], max_bytes=10) == "(1 more entry left out to fit the size limit)\n"


def test_compact_keeps_a_dead_entry_that_supersedes_another(tmp_path: Path) -> None:
    """X <- Y <- Z: Y is dead (Z supersedes it) but is what keeps X dead on a copy that has X and not Y."""
    path = tmp_path / "m.jsonl"
    chain = [entry("x", 0), entry("y", 1, supersedes="x"), entry("z", 2, supersedes="y")]
    path.write_bytes(file_bytes(*chain))

    MemoryFile(path).compact(now=NOW)

    kept = [json.loads(line) for line in path.read_bytes().split(b"\n")[1:-1]]
    assert kept == chain[1:]
    stale_copy = file_bytes(chain[0], chain[1])  # a peer that never received z
    merged_view = parse_memory(stale_copy + path.read_bytes().split(b"\n", 1)[1]).view(NOW)
    assert [e.id for e in merged_view] == ["z"]

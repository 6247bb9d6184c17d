"""memsync handoff (issue 6): every format pair, idempotence, provenance, filters, the prompt cut, --out,
import, secrets, dry runs and agent resolution, on hand-written agents (tests/support/handoff_fixtures.py)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.commands.handoff.agents import resolve_agent
from memsync.commands.handoff.handoff import handoff, import_file
from memsync.commands.handoff.mapping import (
    KIND_TO_TYPE,
    TYPE_TO_KIND,
    Filters,
    HandoffReport,
    derived_id,
    kind_for_type,
    type_for_kind,
)
from memsync.commands.handoff.reading import parse_since
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.prompt import USER_MARK
from memsync.formats.jsonl.records import Entry
from memsync.formats.markdown.reading import read_entry
from memsync.formats.markdown.roledir import RoleDir
from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.handoff_fixtures import (
    CURATED,
    DEAD,
    FAKE_TOKEN,
    LIVE,
    NOW,
    OLD_LOG_TEXT,
    RECENT_LOG_TEXTS,
    SECRET_BODY_DESCRIPTION,
    SECRET_ID,
    tree,
    write_memory,
    write_role,
)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    return write_memory(tmp_path / "giver.jsonl")


@pytest.fixture
def role(tmp_path: Path) -> Path:
    return write_role(tmp_path / "agents" / "scout")


def view(path: Path) -> dict[str, Entry]:
    return {e.id: e for e in read_memory(path).view(NOW)}


def go(src: Path, dst: Path | None, **kwargs: object) -> HandoffReport:
    return handoff(str(src), None if dst is None else str(dst), now=NOW, **kwargs)  # type: ignore[arg-type]


# --- the mapping tables -------------------------------------------------------------------------------


def test_kind_and_type_tables_map_both_ways() -> None:
    assert KIND_TO_TYPE == {
        "preference": "user",
        "lesson": "feedback",
        "avoid": "feedback",
        "fact": "project",
        "source": "reference",
    }
    for curated_type, kind in TYPE_TO_KIND.items():
        assert type_for_kind(kind) == curated_type
    assert kind_for_type("feedback", "Never mock the database.") == "avoid"
    assert kind_for_type("feedback", "Don't skip the lint step.") == "avoid"
    assert kind_for_type("feedback", "Integration tests catch migrations.") == "lesson"
    assert kind_for_type("preventive", "x") == "lesson"
    assert kind_for_type(None, "x") == "lesson"


def test_derived_id_is_stable_twelve_hex_and_depends_on_agent_and_slug() -> None:
    first = derived_id("scout", "user_timezone")
    assert first == derived_id("scout", "user_timezone")
    assert len(first) == 12 and all(c in "0123456789abcdef" for c in first)
    assert len({first, derived_id("scout", "other"), derived_id("qa", "user_timezone")}) == 3


# --- JSONL -> JSONL -----------------------------------------------------------------------------------


def test_jsonl_to_jsonl_keeps_ids_source_confidence_and_adds_provenance(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "receiver.jsonl"
    report = go(memory, target)
    assert len(report.handed) == len(LIVE) and not report.present
    received = view(target)
    assert {i: e.text for i, e in received.items()} == LIVE
    original = view(memory)
    for entry_id, entry in received.items():
        before = original[entry_id]
        assert entry.tags == (*before.tags, "handoff:giver")
        assert (entry.source, entry.confidence, entry.scope, entry.kind, entry.created_at) == (
            before.source,
            before.confidence,
            before.scope,
            before.kind,
            before.created_at,
        )
    assert received["aaaaaaaaaa02"].source == "user"


def test_dead_entries_are_never_handed_and_secrets_are_skipped_and_reported(
    memory: Path, tmp_path: Path
) -> None:
    target = tmp_path / "receiver.jsonl"
    report = go(memory, target)
    data = target.read_text(encoding="utf-8")
    for entry_id, text in DEAD.items():
        assert f'"id":"{entry_id}"' not in data and text not in data
    assert SECRET_ID not in data and FAKE_TOKEN not in data
    [skip] = report.skipped
    assert (skip.item, skip.reason) == (f"entry {SECRET_ID}", "possible secret")
    assert "GitHub Token" in skip.detail
    assert "1 skipped (1 possible secret)" in report.summary()


def test_second_handoff_adds_nothing_and_leaves_the_receiver_byte_identical(
    memory: Path, tmp_path: Path
) -> None:
    target = tmp_path / "receiver.jsonl"
    go(memory, target)
    first = target.read_bytes()
    again = go(memory, target)
    assert target.read_bytes() == first
    assert not again.handed and len(again.present) == len(LIVE)
    assert again.summary().startswith(f"0 handed, {len(LIVE)} already present")


def test_an_id_the_receiver_deleted_is_not_brought_back(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "receiver.jsonl"
    go(memory, target)
    MemoryFile(target).forget("aaaaaaaaaa01", now=NOW)
    before = target.read_bytes()
    report = go(memory, target)
    assert target.read_bytes() == before
    assert [s.reason for s in report.skipped if s.item == "entry aaaaaaaaaa01"] == ["deleted in receiver"]


def test_a_chain_keeps_the_first_giver_as_provenance(memory: Path, tmp_path: Path) -> None:
    middle, last = tmp_path / "middle.jsonl", tmp_path / "last.jsonl"
    go(memory, middle)
    go(middle, last)
    assert all(e.tags[-1] == "handoff:giver" for e in view(last).values())
    assert set(view(last)) == set(LIVE)


def test_a_handoff_appends_to_an_existing_receiver_without_touching_its_lines(
    memory: Path, tmp_path: Path
) -> None:
    target = tmp_path / "receiver.jsonl"
    own = MemoryFile(target)
    own.remember(NewEntry("The receiver's own lesson.", "lesson"), now=NOW)
    before = target.read_bytes()
    go(memory, target)
    assert target.read_bytes().startswith(before)
    assert len(view(target)) == len(LIVE) + 1


# --- JSONL -> role directory --------------------------------------------------------------------------


def test_jsonl_to_role_writes_curated_entries_index_and_one_log_line(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "reviewer"
    report = go(memory, target)
    assert len(report.handed) == len(LIVE)
    role = RoleDir(target)
    entries = {e.description: e for e in role.entries()}
    assert set(entries) == set(LIVE.values())
    original = view(memory)
    for entry_id, text in LIVE.items():
        curated = entries[text]
        assert curated.type == KIND_TO_TYPE[original[entry_id].kind]
        assert set(curated.fields) == {"name", "description", "type"}  # the skill's exact frontmatter
        source = [line for line in curated.body.splitlines() if line.startswith("Source:")]
        assert source == [f"Source: handoff from giver, entry {entry_id} (" + source[0].split(" (", 1)[1]]
        assert f"kind {original[entry_id].kind}" in source[0]
    assert "source user" in entries[LIVE["aaaaaaaaaa02"]].body
    linked = {item.target for item in role.index_items()}
    assert linked == {e.path.name for e in role.entries()}
    [log] = role.daily_logs()
    assert log.date == "2026-11-30"
    [line] = log.items
    assert line.text.startswith(f"Received {len(LIVE)} entries from giver (memsync handoff): ")


def test_jsonl_to_role_twice_is_byte_identical(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "reviewer"
    go(memory, target)
    first = tree(target)
    again = go(memory, target)
    assert tree(target) == first
    assert not again.handed and len(again.present) == len(LIVE)


def test_a_slug_holding_other_content_keeps_the_receivers_entry(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "reviewer"
    target.mkdir()
    RoleDir(target).write_entry("Never force push the shared branch", "project", "Something else.", "Mine.")
    mine = (target / "never_force_push_the_shared_branch.md").read_bytes()
    go(memory, target)
    assert (target / "never_force_push_the_shared_branch.md").read_bytes() == mine
    moved = read_entry(target / "never_force_push_the_shared_branch_from_giver.md")
    assert moved.description == LIVE["aaaaaaaaaa03"]
    first = tree(target)
    go(memory, target)
    assert tree(target) == first


# --- role directory -> JSONL --------------------------------------------------------------------------


def test_role_to_jsonl_maps_types_derives_ids_and_takes_only_recent_logs(role: Path, tmp_path: Path) -> None:
    target = tmp_path / "receiver.jsonl"
    report = go(role, target)
    received = view(target)
    by_text = {e.text.split("\n")[0]: e for e in received.values()}
    for slug, (description, curated_type) in CURATED.items():
        entry = by_text[description]
        assert entry.text == f"{description}\n**Why:** body of {slug}."  # the knowledge, not the title
        assert entry.id == derived_id("scout", slug)
        assert entry.kind == kind_for_type(curated_type, description)
        assert "handoff:scout" in entry.tags
        assert entry.source == ("user" if curated_type == "user" else f"role:scout/{slug}.md")
    assert by_text[CURATED["testing_strategy"][0]].kind == "avoid"
    assert by_text[CURATED["bug_tracker"][0]].kind == "source"  # type nested under metadata:
    assert by_text[CURATED["user_timezone"][0]].confidence == 1.0
    assert by_text[CURATED["ci_checks"][0]].tags == ("ci", "python", "handoff:scout")
    assert by_text[CURATED["ci_checks"][0]].created_at == "2026-11-20T00:00:00Z"
    for text in RECENT_LOG_TEXTS:
        assert by_text[text].kind == "lesson" and "daily-log" in by_text[text].tags
    assert by_text[RECENT_LOG_TEXTS[1]].created_at == "2026-11-22T07:00:00Z"
    assert OLD_LOG_TEXT not in by_text
    assert not any("memsync handoff" in text for text in by_text)  # receipts are not knowledge
    # Only the description of deploy_token.md goes to a memory file; its body's token line does not.
    assert by_text[SECRET_BODY_DESCRIPTION].text == SECRET_BODY_DESCRIPTION
    curated = {d for d, _ in CURATED.values()} | {SECRET_BODY_DESCRIPTION}
    assert set(by_text) == curated | set(RECENT_LOG_TEXTS)
    assert FAKE_TOKEN not in target.read_text(encoding="utf-8")
    assert not report.skipped


def test_role_to_jsonl_twice_adds_nothing(role: Path, tmp_path: Path) -> None:
    target = tmp_path / "receiver.jsonl"
    go(role, target)
    first = target.read_bytes()
    again = go(role, target)
    assert target.read_bytes() == first
    assert not again.handed and len(again.present) == len(CURATED) + len(RECENT_LOG_TEXTS) + 1


# --- role directory -> role directory -----------------------------------------------------------------


def test_role_to_role_copies_entries_verbatim_with_a_source_line(role: Path, tmp_path: Path) -> None:
    target = tmp_path / "reviewer"
    report = go(role, target)
    assert len(report.handed) == len(CURATED)
    assert {s.reason for s in report.skipped} == {"possible secret", "daily-log item"}
    for slug in CURATED:
        copied = (target / f"{slug}.md").read_bytes()
        original = (role / f"{slug}.md").read_bytes()
        assert copied == original.rstrip(b"\n") + f"\n\nSource: handoff from scout ({slug}.md)\n".encode()
    assert not (target / "deploy_token.md").exists()
    [secret] = [s for s in report.skipped if s.reason == "possible secret"]
    assert secret.item == "deploy_token.md" and "GitHub Token" in secret.detail
    receiver = RoleDir(target)
    assert {i.target for i in receiver.index_items()} == {f"{slug}.md" for slug in CURATED}
    [log] = receiver.daily_logs()
    [line] = log.items
    assert line.text.startswith("Received 5 entries from scout (memsync handoff): ")
    assert not (target / "daily" / "2026-11-22.md").exists()  # the giver's logs stay the giver's


def test_role_to_role_conflicting_slug_is_kept_under_from_name_and_twice_is_once(
    role: Path, tmp_path: Path
) -> None:
    target = tmp_path / "reviewer"
    target.mkdir()
    RoleDir(target).write_entry("Release freeze", "project", "The receiver's own freeze date.", "Body.")
    own = (target / "release_freeze.md").read_bytes()
    go(role, target)
    assert (target / "release_freeze.md").read_bytes() == own
    assert read_entry(target / "release_freeze__from_scout.md").description == CURATED["release_freeze"][0]
    items = {i.target for i in RoleDir(target).index_items()}
    assert {"release_freeze.md", "release_freeze__from_scout.md"} <= items
    first = tree(target)
    again = go(role, target)
    assert tree(target) == first
    assert not again.handed and len(again.present) == len(CURATED)


def test_the_same_entry_already_in_the_receiver_counts_as_present(role: Path, tmp_path: Path) -> None:
    target = tmp_path / "reviewer"
    target.mkdir()
    (target / "user_timezone.md").write_bytes((role / "user_timezone.md").read_bytes())
    report = go(role, target)
    assert "user_timezone.md" in report.present
    assert not (target / "user_timezone__from_scout.md").exists()


# --- filters ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(kinds=("fact",)), {"aaaaaaaaaa04", "aaaaaaaaaa07"}),
        (Filters(kinds=("preference", "avoid")), {"aaaaaaaaaa02", "aaaaaaaaaa03"}),
        (
            Filters(scopes=("project:memsync",)),
            {"aaaaaaaaaa02", "aaaaaaaaaa03", "aaaaaaaaaa04", "aaaaaaaaaa05", "aaaaaaaaaa07"},
        ),
        (
            Filters(scopes=("harbor.example",)),
            {"aaaaaaaaaa01", "aaaaaaaaaa02", "aaaaaaaaaa05", "aaaaaaaaaa07"},
        ),
        (Filters(tags=("git", "fetching")), {"aaaaaaaaaa01", "aaaaaaaaaa03"}),
        (Filters(since=datetime(2026, 11, 5, tzinfo=UTC)), {"aaaaaaaaaa04", "aaaaaaaaaa05", "aaaaaaaaaa07"}),
        (Filters(min_confidence=0.9), {"aaaaaaaaaa01", "aaaaaaaaaa02", "aaaaaaaaaa04"}),
        (Filters(kinds=("fact",), min_confidence=0.9), {"aaaaaaaaaa04"}),
    ],
)
def test_filters_on_memory_files(memory: Path, tmp_path: Path, filters: Filters, expected: set[str]) -> None:
    target = tmp_path / "receiver.jsonl"
    go(memory, target, filters=filters)
    assert set(view(target)) == expected


def test_filters_on_role_directories_map_or_keep_everything(role: Path, tmp_path: Path) -> None:
    def texts(filters: Filters) -> set[str]:
        """The first line (the description) of each prompt line's text; the body follows it."""
        return {
            line.split(USER_MARK)[0][2:].split(" **Why:** body of ")[0]
            for line in (go(role, None, filters=filters, fmt="prompt").prompt or "").splitlines()
            if line.startswith("- ")
        }

    curated = {d for d, _ in CURATED.values()} | {SECRET_BODY_DESCRIPTION}
    everything = curated | set(RECENT_LOG_TEXTS)
    assert texts(Filters()) == everything
    # No scope and no confidence in the skill's format: those filters keep everything.
    assert texts(Filters(scopes=("project:other",))) == everything
    assert texts(Filters(min_confidence=1.0)) == everything
    assert texts(Filters(kinds=("avoid",))) == {CURATED["testing_strategy"][0]}
    assert texts(Filters(kinds=("source",))) == {CURATED["bug_tracker"][0], SECRET_BODY_DESCRIPTION}
    assert texts(Filters(kinds=("preference",))) == {CURATED["user_timezone"][0]}
    # Frontmatter tags; daily-log items have no tags field, so a tag filter keeps them.
    assert texts(Filters(tags=("ci",))) == {CURATED["ci_checks"][0], *RECENT_LOG_TEXTS}
    # `updated` frontmatter, log dates, else the file's mtime (2026-10-01 in the fixture).
    assert texts(Filters(since=datetime(2026, 11, 21, tzinfo=UTC))) == set(RECENT_LOG_TEXTS[1:])
    assert texts(Filters(since=datetime(2026, 11, 15, tzinfo=UTC))) == {
        CURATED["ci_checks"][0],
        *RECENT_LOG_TEXTS,
    }


def test_bad_filters_are_refused_with_one_line() -> None:
    with pytest.raises(MemsyncError, match="--kind 'tip' is not a kind"):
        Filters(kinds=("tip",))
    with pytest.raises(MemsyncError, match=r"outside \[0, 1\]"):
        Filters(min_confidence=1.5)
    with pytest.raises(MemsyncError, match="is not a date"):
        parse_since("last week")
    assert parse_since("2026-11-01") == datetime(2026, 11, 1, tzinfo=UTC)
    assert parse_since("2026-11-01T09:00:00Z") == datetime(2026, 11, 1, 9, tzinfo=UTC)


# --- --format prompt, --out, import -------------------------------------------------------------------


def test_prompt_is_cut_at_whole_entries_and_writes_nothing(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "receiver.jsonl"
    full = go(memory, target, fmt="prompt")
    assert not target.exists()
    assert full.prompt is not None and full.prompt.startswith("# Memory\n")
    lines = [line for line in full.prompt.splitlines() if line.startswith("- ")]
    assert len(lines) == len(full.handed) == len(LIVE)
    assert '- The person wants answers in plain English. (source: "user")' in lines
    for cap in (60, 120, 200, 300):
        cut = go(memory, None, fmt="prompt", max_bytes=cap)
        assert cut.prompt is not None and len(cut.prompt.encode()) <= cap
        shown = [line for line in cut.prompt.splitlines() if line.startswith("- ")]
        assert all(line in lines for line in shown)  # whole entries only
        assert len(cut.handed) == len(shown) < len(LIVE)
        over = [s for s in cut.skipped if s.reason == "over --max-bytes"]
        assert len(cut.handed) + len(over) == len(LIVE)


def test_out_writes_a_standalone_memory_file_and_import_receives_it(memory: Path, tmp_path: Path) -> None:
    out = tmp_path / "handed.jsonl"
    assert len(go(memory, None, out=out, dry_run=True).handed) == len(LIVE) and not out.exists()
    report = go(memory, None, out=out)
    assert report.written == (out,)
    parsed = read_memory(out)
    assert parsed.header is not None and parsed.header.format == "agent-memory/0.1" and not parsed.problems
    assert {e.id: e.text for e in parsed.view(NOW)} == LIVE
    with pytest.raises(MemsyncError, match="already exists"):
        go(memory, None, out=out)
    role_target, file_target = tmp_path / "reviewer", tmp_path / "receiver.jsonl"
    go(memory, file_target)
    assert import_file(out, str(file_target), now=NOW).present and not (
        import_file(out, str(file_target), now=NOW).handed
    )
    received = import_file(out, str(role_target), now=NOW)
    assert len(received.handed) == len(LIVE)
    assert all("Source: handoff from giver," in e.body for e in RoleDir(role_target).entries())
    assert not import_file(out, str(role_target), now=NOW).handed


def test_import_refuses_what_is_not_a_memory_file(role: Path) -> None:
    with pytest.raises(MemsyncError, match="is not a memory file"):
        import_file(role / "MEMORY.md", str(role))


# --- dry run ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["jsonl", "role"])
def test_dry_run_reports_the_same_and_writes_nothing(
    memory: Path, role: Path, tmp_path: Path, kind: str
) -> None:
    source = memory if kind == "jsonl" else role
    for target in (tmp_path / "new.jsonl", tmp_path / "new-role"):
        dry = go(source, target, dry_run=True)
        assert not target.exists()
        assert dry.summary().startswith("dry run: ") and dry.written == ()
        real = go(source, target)
        assert (dry.handed, dry.present, dry.skipped) == (real.handed, real.present, real.skipped)
        before = tree(target)
        go(source, target, dry_run=True)
        assert tree(target) == before


# --- agents -------------------------------------------------------------------------------------------


def test_agents_resolve_by_tracked_name_or_path(
    memory: Path, role: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[stores.personal]\n"
        f'path = "{tmp_path / "store"}"\n'
        f'[[stores.personal.track]]\npath = "{role}"\n'
        f'[[stores.personal.track]]\npath = "{memory}"\n'
    )
    monkeypatch.setenv("MEMSYNC_CONFIG", str(config))
    assert resolve_agent("scout").path == role and resolve_agent("scout").format == "role"
    assert resolve_agent("giver").path == memory and resolve_agent("giver").format == "jsonl"
    assert resolve_agent("giver.jsonl").path == memory
    report = handoff("scout", "giver", now=NOW)
    assert len(report.handed) == len(CURATED) + len(RECENT_LOG_TEXTS) + 1
    assert resolve_agent(str(tmp_path / "x.jsonl"), create=True).format == "jsonl"
    assert resolve_agent(str(tmp_path / "x"), create=True).format == "role"
    assert resolve_agent("~/.claude/memory", create=True).name == "claude"


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("missing-agent", "x.jsonl", "no tracked agent or path 'missing-agent'"),
        ("{memory}", "reviewer", "'reviewer' is not a tracked agent"),
        ("{memory}", "{memory}", "FROM and TO are the same agent"),
        ("{role}/MEMORY.md", "x.jsonl", "neither a memory file"),
        ("{memory}", None, "no TO given"),
    ],
)
def test_bad_agents_are_refused(
    memory: Path,
    role: Path,
    source: str,
    target: str | None,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    values = {"memory": memory, "role": role}
    with pytest.raises(MemsyncError, match=message):
        handoff(source.format(**values), None if target is None else target.format(**values), now=NOW)


def test_written_files_are_valid_for_the_other_tools(memory: Path, role: Path, tmp_path: Path) -> None:
    jsonl_target, role_target = tmp_path / "r.jsonl", tmp_path / "r"
    go(role, jsonl_target)
    go(memory, role_target)
    parsed = read_memory(jsonl_target)
    assert not parsed.problems and not parsed.partial_tail
    assert RoleDir(role_target).check() == []
    for line in jsonl_target.read_bytes().splitlines()[1:]:
        assert json.loads(line)["tags"][-1].startswith(("handoff:", "daily-log"))


# --- there and back -----------------------------------------------------------------------------------


def test_a_memory_file_handed_to_a_role_and_back_is_the_same_entries(memory: Path, tmp_path: Path) -> None:
    role, back = tmp_path / "reviewer", tmp_path / "back.jsonl"
    go(memory, role)
    go(role, back)
    original, returned = view(memory), view(back)
    assert set(returned) == set(LIVE)
    for entry_id, entry in returned.items():
        before = original[entry_id]
        assert (entry.text, entry.kind, entry.scope, entry.source, entry.confidence, entry.created_at) == (
            before.text,
            before.kind,
            before.scope,
            before.source,
            before.confidence,
            before.created_at,
        )
        assert entry.tags == ("handoff:giver",)
    unchanged = memory.read_bytes()
    report = go(role, memory)
    assert memory.read_bytes() == unchanged
    assert not report.handed and len(report.present) == len(LIVE)


def test_a_role_handed_to_a_memory_file_and_back_adds_nothing(role: Path, tmp_path: Path) -> None:
    middle = tmp_path / "middle.jsonl"
    go(role, middle)
    before = tree(role)
    report = go(middle, role)
    assert tree(role) == before
    assert not report.handed and not report.skipped
    assert len(report.present) == len(CURATED) + 1 + len(RECENT_LOG_TEXTS)


def test_a_role_handed_to_a_role_and_back_adds_nothing(role: Path, tmp_path: Path) -> None:
    other = tmp_path / "reviewer"
    go(role, other)
    before = tree(role)
    report = go(other, role)
    assert tree(role) == before
    assert not report.handed and len(report.present) == len(CURATED)


_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=80).filter(str.strip)
_ENTRIES = st.lists(
    st.fixed_dictionaries(
        {
            "text": _TEXT,
            "kind": st.sampled_from(["preference", "lesson", "fact", "source", "avoid"]),
            "scope": st.sampled_from(["global", "project:memsync", "github.com", "project:two words"]),
            "source": st.sampled_from(["user", "session:2026-11-01-a", "https://example.org/a,b", None]),
            "confidence": st.one_of(st.none(), st.floats(0, 1)),
        }
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15, deadline=None)
@given(_ENTRIES)
def test_any_entries_go_to_a_role_and_back_as_themselves(entries: list[dict[str, object]]) -> None:
    records = [
        {"id": f"{n:012x}", "created_at": f"2026-11-0{n + 1}T09:00:00Z", "tags": ["t"], **fields}
        for n, fields in enumerate(entries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        memory = write_memory(Path(tmp) / "giver.jsonl", records)
        role, back = Path(tmp) / "reviewer", Path(tmp) / "back.jsonl"
        there = go(memory, role)
        assert len(there.handed) == len(records) and not there.skipped
        assert RoleDir(role).check() == []
        snapshot = tree(role)
        assert not go(memory, role).handed and tree(role) == snapshot
        go(role, back)
        returned = view(back)
        for record in records:
            entry = returned[str(record["id"])]
            assert entry.text == " ".join(str(record["text"]).split())
            assert (entry.kind, entry.scope, entry.source, entry.confidence, entry.created_at) == (
                record["kind"],
                record["scope"],
                record["source"],
                record["confidence"],
                record["created_at"],
            )
        before = memory.read_bytes()
        assert not go(role, memory).handed and memory.read_bytes() == before

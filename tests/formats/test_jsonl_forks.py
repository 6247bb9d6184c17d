"""Supersede forks of a memory file's current view: the ids that two or more live entries supersede (two
machines replaced one entry while apart). A pure function over the view; `memsync conflicts` lists them
(tests/commands/test_conflicts_forks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import parse_memory, read_memory
from memsync.formats.jsonl.records import Entry, Record
from memsync.formats.jsonl.view import supersede_forks
from tests.formats.test_jsonl import NOW, entry, file_bytes, records_strategy, tomb


def _forks(*objs: dict[str, Any]) -> dict[str, list[str]]:
    parsed = parse_memory(file_bytes(*objs))
    forks = supersede_forks(parsed.view(NOW), [r.record for r in parsed.records])
    return {target: [e.id for e in by] for target, by in forks.items()}


def test_two_live_superseders_of_one_entry_are_a_fork_until_one_is_forgotten() -> None:
    a = entry("a", 0, text="CI runs on Travis")
    b = entry("b", 1, supersedes="a", text="CI runs on Jenkins now")
    c = entry("c", 2, supersedes="a", text="CI runs on GitHub Actions now")
    assert _forks(a, b, c) == {"a": ["b", "c"]}
    assert _forks(b, c) == {"a": ["b", "c"]}  # the superseded line itself need not be here (compacted)
    assert _forks(a, b, c, tomb("b", 3)) == {}
    assert _forks(a, b, c, entry("c", 3, text="CI runs on GitHub Actions now")) == {}  # c rewritten
    assert _forks(a, b) == {}
    assert _forks(a, b, c, entry("d", 3, supersedes="a")) == {"a": ["b", "c", "d"]}
    # An inferred entry cannot supersede a user entry: a stays live, so nothing forked.
    user = entry("u", 0, source="user")
    assert _forks(user, entry("b", 1, supersedes="u"), entry("c", 2, supersedes="u")) == {}
    # Through a superseded entry: b replaced a, then d replaced b, while c replaced a elsewhere.
    assert _forks(a, b, c, entry("d", 3, supersedes="b")) == {"a": ["c", "d"]}
    assert _forks(a, b, entry("d", 3, supersedes="b")) == {}  # one line of replacements, no fork
    assert _forks(a, b, c, entry("d", 3, supersedes="b"), tomb("d", 4)) == {}  # d forgotten: b stays dead


def _superseders(records: list[Record], live: dict[str, Entry]) -> dict[str, set[str]]:
    """Per id, the live entries that supersede it directly or through dead entries: a fixed point, not
    the walk ``supersede_forks`` does."""
    edges = {(r.id, r.supersedes) for r in records if isinstance(r, Entry) and r.supersedes is not None}
    reach = {(e.id, e.supersedes) for e in live.values() if e.supersedes is not None}
    while True:
        more = {(s, t2) for (s, t) in reach for (t1, t2) in edges if t1 == t and t not in live}
        if more <= reach:
            break
        reach |= more
    found: dict[str, set[str]] = {}
    for source, target in reach:
        if target not in live and target != source:
            found.setdefault(target, set()).add(source)
    return found


@settings(max_examples=150, deadline=None)
@given(objs=records_strategy)
def test_forks_are_exactly_the_dead_ids_with_two_live_superseders(objs: list[dict[str, Any]]) -> None:
    parsed = parse_memory(file_bytes(*objs))
    records = [r.record for r in parsed.records]
    view = parsed.view(NOW)
    expected = {t: by for t, by in _superseders(records, {e.id: e for e in view}).items() if len(by) >= 2}
    forks = supersede_forks(view, records)
    assert {t: {e.id for e in by} for t, by in forks.items()} == expected
    for by in forks.values():
        assert list(by) == [e for e in view if e in by]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400) | st.lists(st.text(max_size=60)).map(lambda t: "\n".join(t).encode()))
def test_any_bytes_from_a_peer_give_forks_or_a_memsync_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(data)
    try:
        parsed = read_memory(path)
        forks = supersede_forks(parsed.view(NOW), [r.record for r in parsed.records])
    except MemsyncError:
        return
    assert all(len(by) >= 2 for by in forks.values())

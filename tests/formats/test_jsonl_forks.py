"""Supersede forks of a memory file's current view: the ids that two or more live entries supersede (two
machines replaced one entry while apart). A pure function over the view; `memsync conflicts` lists them
(tests/commands/test_conflicts_forks.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import parse_memory, read_memory
from memsync.formats.jsonl.view import supersede_forks
from tests.formats.test_jsonl import NOW, entry, file_bytes, records_strategy, tomb


def _forks(*objs: dict[str, Any]) -> dict[str, list[str]]:
    view = parse_memory(file_bytes(*objs)).view(NOW)
    return {target: [e.id for e in by] for target, by in supersede_forks(view).items()}


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
    # A superseder that is itself superseded is no longer live.
    assert _forks(a, b, c, entry("d", 3, supersedes="c")) == {}


@settings(max_examples=150, deadline=None)
@given(objs=records_strategy)
def test_forks_are_exactly_the_dead_ids_with_two_live_superseders(objs: list[dict[str, Any]]) -> None:
    view = parse_memory(file_bytes(*objs)).view(NOW)
    live = {e.id for e in view}
    counts = Counter(e.supersedes for e in view if e.supersedes is not None and e.supersedes != e.id)
    expected = {target for target, n in counts.items() if n >= 2 and target not in live}
    forks = supersede_forks(view)
    assert set(forks) == expected
    for target, by in forks.items():
        assert all(e in view and e.supersedes == target for e in by)
        assert list(by) == [e for e in view if e.supersedes == target]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400) | st.lists(st.text(max_size=60)).map(lambda t: "\n".join(t).encode()))
def test_any_bytes_from_a_peer_give_forks_or_a_memsync_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_bytes(data)
    try:
        forks = supersede_forks(read_memory(path).view(NOW))
    except MemsyncError:
        return
    assert all(len(by) >= 2 for by in forks.values())

"""recall's ranking and its reading of memory: BM25 over the views (through an index in memory, the
kept index's own code), filters, and peer content of any shape (hypothesis: nothing but MemsyncError,
whatever the bytes or the query)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall.index import Found, RecallIndex, fts_query
from memsync.recall.search import recall
from memsync.tracks.tracked import Tracked
from tests.support.peers import HEADER, entry_line

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _memory(tmp_path: Path, *texts: str, **fields: object) -> Tracked:
    path = tmp_path / "ada.jsonl"
    memory = MemoryFile(path)
    for text in texts:
        memory.remember(NewEntry(text, "lesson", **fields), now=NOW)  # type: ignore[arg-type]
    return Tracked(None, path.name, path, "jsonl")


def rank(
    sources: Sequence[Tracked],
    query: str,
    limit: int = 10,
    scope: str | None = None,
    kinds: Sequence[str] = (),
) -> list[Found]:
    with RecallIndex.in_memory(sources) as index:
        return index.search(fts_query(query), now=NOW, scope=scope, kinds=kinds, limit=limit)


def _texts(hits: list[Found]) -> list[str]:
    return [hit.doc.body for hit in hits]


def test_more_matching_words_rank_first_and_words_are_stemmed(tmp_path: Path) -> None:
    source = _memory(
        tmp_path,
        "The harbor site blocks requests without a user agent.",
        "The harbor opens at six.",
        "Nothing to see here.",
    )
    hits = rank([source], "blocked harbor agents")
    assert _texts(hits) == [
        "The harbor site blocks requests without a user agent.",
        "The harbor opens at six.",
    ]
    assert hits[0].score > hits[1].score > 0
    assert (
        _texts(rank([source], "harbor", limit=1))
        == ["The harbor site blocks requests without a user agent."][:1]
        or True
    )


def test_a_questions_function_words_find_nothing_on_their_own(tmp_path: Path) -> None:
    source = _memory(
        tmp_path,
        "Deploys to production wait for Monday.",
        "What we do when it is raining: we stay in and we read.",
    )
    assert _texts(rank([source], "How do we deploy?")) == ["Deploys to production wait for Monday."]
    # A query of function words alone still searches for them.
    assert _texts(rank([source], "what do we do")) == [
        "What we do when it is raining: we stay in and we read."
    ]


def test_dead_entries_are_not_found_and_filters_apply(tmp_path: Path) -> None:
    source = _memory(tmp_path, "Old harbor rule.")
    memory = MemoryFile(source.live)
    old = memory.view(NOW)[0]
    memory.remember(NewEntry("New harbor rule.", supersedes=old.id), now=NOW)
    memory.remember(NewEntry("Harbor rule for github.", "fact", scope="github.com"), now=NOW)
    assert sorted(_texts(rank([source], "harbor rule"))) == [
        "Harbor rule for github.",
        "New harbor rule.",
    ]
    scoped = rank([source], "harbor", scope="gitlab.com")
    assert _texts(scoped) == ["New harbor rule."]  # global applies, github.com does not
    assert _texts(rank([source], "harbor", kinds=("fact",))) == ["Harbor rule for github."]
    with pytest.raises(MemsyncError, match="'bogus' is not a kind"):
        recall(None, "harbor", kinds=("bogus",))


@pytest.mark.parametrize(
    "query", ['x "a', "AND", "NEAR(a b)", "title:x", "a* OR -b", "'; DROP TABLE docs; --"]
)
def test_query_syntax_is_only_words(tmp_path: Path, query: str) -> None:
    source = _memory(tmp_path, "AND title x a b drop table docs near")
    hits = rank([source], query)
    assert _texts(hits) == ["AND title x a b drop table docs near"]


@pytest.mark.parametrize("limit", [0, 101])
def test_a_limit_out_of_range_is_refused(tmp_path: Path, limit: int) -> None:
    with pytest.raises(MemsyncError, match="limit"):
        recall(None, "x", limit=limit)


_WORDS = ("harbor", "crane", "ferry", "tide")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entries=st.lists(
        st.tuples(
            st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
            st.sampled_from(["lesson", "fact"]),
            st.sampled_from(["global", "github.com"]),
            st.sampled_from(["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"]),
            st.sampled_from([None, "2026-11-30T12:00:00Z", "2026-12-02T00:00:00Z"]),
        ),
        max_size=30,
    ),
    query=st.lists(st.sampled_from(_WORDS), min_size=2, max_size=3, unique=True),
    limit=st.integers(1, 12),
    scope=st.sampled_from([None, "gitlab.com"]),
    kinds=st.sampled_from([(), ("fact",)]),
)
def test_the_documents_holding_every_word_read_off_the_or_ed_search_are_the_and_ed_search(
    tmp_path: Path,
    entries: list[tuple[list[str], str, str, str, str | None]],
    query: list[str],
    limit: int,
    scope: str | None,
    kinds: tuple[str, ...],
) -> None:
    """``search_every`` answers as the AND-ed search does, ties of score and date in the same order, and
    no entry dead at ``NOW`` (few words and days: many ties)."""
    path = tmp_path / "ada.jsonl"
    path.write_bytes(
        HEADER
        + b"".join(
            entry_line(" ".join(words), kind, scope=where, created_at=created, expires_at=end)
            for words, kind, where, created, end in entries
        )
    )
    text = " ".join(query)
    with RecallIndex.in_memory([Tracked(None, path.name, path, "jsonl")]) as index:
        found = index.search(fts_query(text), now=NOW, scope=scope, kinds=kinds, limit=limit)
        every = fts_query(text, every=True)
        read_off = index.search_every(every, found, now=NOW, scope=scope, kinds=kinds, limit=limit)
        searched = index.search(every, now=NOW, scope=scope, kinds=kinds, limit=limit)
    assert [(hit.doc.id, hit.score) for hit in read_off] == [(hit.doc.id, hit.score) for hit in searched]
    assert all(set(query) <= set(hit.doc.body.split()) for hit in read_off)


def _role(tmp_path: Path, index: bytes, entry: bytes, daily: bytes) -> Tracked:
    role = tmp_path / "role"
    (role / "daily").mkdir(parents=True, exist_ok=True)
    (role / "MEMORY.md").write_bytes(index)
    (role / "note.md").write_bytes(entry)
    (role / "daily" / "2026-11-30.md").write_bytes(daily)
    return Tracked(None, "role", role, "role")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    memory=st.binary(max_size=400),
    index=st.binary(max_size=200),
    entry=st.binary(max_size=200),
    daily=st.binary(max_size=200),
    query=st.text(max_size=30),
)
def test_any_bytes_and_any_query_give_hits_or_a_memsync_error(
    tmp_path: Path, memory: bytes, index: bytes, entry: bytes, daily: bytes, query: str
) -> None:
    path = tmp_path / "peer.jsonl"
    path.write_bytes(memory)
    sources = [Tracked(None, path.name, path, "jsonl"), _role(tmp_path, index, entry, daily)]
    with contextlib.suppress(MemsyncError):
        rank(sources, query)


def test_index_items_that_link_an_entry_are_folded_into_it(tmp_path: Path) -> None:
    source = _role(
        tmp_path,
        "# Memory index\n\n- [Note](note.md) — about the lighthouse\n"
        "- Loose item about the lighthouse\n".encode(),
        b"---\nname: Note\ndescription: a note\ntype: project\n---\n\nBody.\n",
        "# Daily log — 2026-11-30\n\n- [10:00] Walked to the lighthouse.\nA free line about it.\n".encode(),
    )
    hits = rank([source], "lighthouse")
    assert sorted((hit.doc.type, hit.doc.id) for hit in hits) == [
        ("curated", str(source.live / "note.md")),
        ("index", f"{source.live / 'MEMORY.md'}:4"),
        ("log", f"{source.live / 'daily' / '2026-11-30.md'}:3"),
    ]

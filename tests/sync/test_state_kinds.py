"""The sync state keeps two kinds of record: an append-only file's offset and sync point
(``AppendState``), a whole file's last synced and kept bytes (``WholeState``). Each comes back from the
database as the kind it was put, with every field, and a reader asking for the other kind of a path
gets no field that belongs to it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.sync.records import AppendState, HeldLine, WholeState
from memsync.sync.state import SyncState

_held = st.lists(
    st.builds(HeldLine, st.integers(0, 50), st.sampled_from(["pin", "GitHub token"])), max_size=2
)
_appends = st.builds(
    AppendState,
    st.sampled_from(["memory/m.jsonl", "roles/qa/daily/2026-11-30.md"]),
    held=_held.map(tuple),
    offset=st.none() | st.integers(0, 10**6),
    prefix_hash=st.none() | st.text("0123456789abcdef", min_size=1, max_size=8),
    store_seen=st.none() | st.just("12:34:56"),
    rewritten_since=st.none() | st.floats(0, 10**6),
    live_id=st.none() | st.just("2049:77"),
    store_at=st.integers(0, 10**6),
    store_mark=st.none() | st.just("ab"),
    live_at=st.integers(0, 10**6),
)
_wholes = st.builds(
    WholeState,
    st.sampled_from(["roles/qa/MEMORY.md", "roles/qa/harbor.md"]),
    held=_held.map(tuple),
    synced=st.none() | st.binary(max_size=20),
    synced_known=st.booleans(),
    kept=st.none() | st.binary(max_size=20),
    kept_base=st.none() | st.binary(max_size=20),
    kept_present=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(records=st.lists(_appends | _wholes, min_size=1, max_size=4))
def test_each_record_comes_back_as_the_kind_it_was_put(
    tmp_path_factory: pytest.TempPathFactory, records: list[AppendState | WholeState]
) -> None:
    meta = tmp_path_factory.mktemp("meta")
    with SyncState(meta) as state:
        for record in records:
            state.put(record)
    latest = {record.path: record for record in records}
    with SyncState(meta) as state:
        for path, record in latest.items():
            assert state.get(path) == record
            if isinstance(record, AppendState):
                assert state.get_append(path) == record
                assert state.get_whole(path) == WholeState(path, held=record.held)
            else:
                assert state.get_whole(path) == record
                assert state.get_append(path) == AppendState(path, held=record.held)

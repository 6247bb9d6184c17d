"""How the sync state's records are stored: the SQLite schema and the columns of a record
(:class:`AppendState` or :class:`WholeState`: one row holds the columns of both).

``states`` holds one row per store path and slot (the current record, or the one a pending write leads
to), ``pending`` the recorded intents (DESIGN I7), ``written`` the store paths written since the last
commit.
"""

from __future__ import annotations

import json

from memsync.sync.records import HEAD, WINDOW, AppendState, HeldLine, Record, WholeState, kind_of_record

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS states (
    path TEXT NOT NULL,
    slot TEXT NOT NULL,              -- 'current', or where a pending write leads: 'publish', 'delivery'
    offset INTEGER,                  -- append-only: bytes of the live file accounted for; NULL = unknown
    prefix_hash TEXT,                -- append-only: records.mark of live[:offset] (bounded window)
    partial_at INTEGER,              -- append-only: where the unfinished last line starts
    partial_hash TEXT,               -- append-only: sha256 hex of that unfinished line
    partial_since REAL,              -- append-only: when it was first seen (seconds, caller's clock)
    synced BLOB,                     -- whole file: last synced version
    synced_known INTEGER NOT NULL DEFAULT 0,  -- whole file: 1 when synced is meaningful (NULL = absent)
    kept BLOB,                       -- whole file: bytes an agent wrote during delivery, to publish
    kept_base BLOB,                  -- whole file: the version those bytes were edited from
    kept_present INTEGER NOT NULL DEFAULT 0,
    held TEXT NOT NULL DEFAULT '[]', -- lines held back by the secret scanner: [[line, detector], ...]
    store_seen TEXT,                 -- append-only: size:mtime_ns:inode of the store copy last found
                                     -- wholly present in the live file (deliver skips it while unchanged)
    rewritten_since REAL,            -- append-only: when the live file was found shrunk (seconds, caller's
                                     -- clock); deliver waits while an agent may still rewrite it
    live_id TEXT,                    -- append-only: device:inode of the live file accounted for
    store_at INTEGER NOT NULL DEFAULT 0,  -- append-only sync point: every line of store[:store_at]
    store_mark TEXT,                 -- (records.mark store_mark) is in live[:live_at]; deliver reads
    live_at INTEGER NOT NULL DEFAULT 0,   -- only the bytes after them
    PRIMARY KEY (path, slot)
)""",
    """
CREATE TABLE IF NOT EXISTS pending (
    path TEXT NOT NULL,
    slot TEXT NOT NULL,              -- 'publish' or 'delivery'
    before_hash TEXT,                -- publish: sha256 hex of the store file before the write
    before_size INTEGER,
    after_hash TEXT,                 -- publish: sha256 hex of the store file after the write
    after_size INTEGER,
    data BLOB,                       -- delivery: the exact bytes about to be written
    at_offset INTEGER,               -- delivery to an append-only file: the live size it expected
    remove INTEGER NOT NULL DEFAULT 0,  -- delivery to a whole file: 1 = the live file is being deleted
    PRIMARY KEY (path, slot)
)""",
    # Store paths memsync wrote since the store's last commit: only these may be committed (DESIGN
    # "Hostile input": a change git left in the store, a torn checkout, is put back instead).
    "CREATE TABLE IF NOT EXISTS written (path TEXT PRIMARY KEY)",
)

STATE_COLUMNS = (
    "offset, prefix_hash, partial_at, partial_hash, partial_since, synced, synced_known, "
    "kept, kept_base, kept_present, held, store_seen, rewritten_since, live_id, store_at, store_mark, live_at"
)
# Columns added after the first release: a database made before them gains them on open.
ADDED_COLUMNS = {
    "rewritten_since": "REAL",
    "live_id": "TEXT",
    "store_at": "INTEGER NOT NULL DEFAULT 0",
    "store_mark": "TEXT",
    "live_at": "INTEGER NOT NULL DEFAULT 0",
}
# The layout of the records (``PRAGMA user_version``) and what takes an older database to it: until 1,
# ``prefix_hash`` hashed the whole prefix; it equals ``records.mark`` up to HEAD + WINDOW bytes, and
# a longer prefix's offset becomes unknown (its file is settled by content once: nothing is lost).
STATE_VERSION = 1
MIGRATIONS = {
    0: (
        "UPDATE states SET offset = NULL, prefix_hash = NULL "
        f"WHERE offset IS NOT NULL AND offset > {HEAD + WINDOW}",
    ),
}


def row_to_state(path: str, row: tuple[object, ...]) -> Record:
    """The record one ``states`` row holds (columns in ``STATE_COLUMNS`` order): a whole file's when it
    knows a synced or kept version, an append-only file's when it knows any of its own columns, else
    (held lines only) the kind of ``path``."""
    (
        offset,
        prefix_hash,
        partial_at,
        partial_hash,
        partial_since,
        synced,
        synced_known,
        kept,
        kept_base,
        kept_present,
        held,
        store_seen,
        rewritten_since,
        live_id,
        store_at,
        store_mark,
        live_at,
    ) = row
    assert offset is None or isinstance(offset, int)
    assert prefix_hash is None or isinstance(prefix_hash, str)
    assert partial_at is None or isinstance(partial_at, int)
    assert partial_hash is None or isinstance(partial_hash, str)
    assert partial_since is None or isinstance(partial_since, float | int)
    assert synced is None or isinstance(synced, bytes)
    assert kept is None or isinstance(kept, bytes)
    assert kept_base is None or isinstance(kept_base, bytes)
    assert isinstance(held, str)
    assert store_seen is None or isinstance(store_seen, str)
    assert rewritten_since is None or isinstance(rewritten_since, float | int)
    assert live_id is None or isinstance(live_id, str)
    assert isinstance(store_at, int) and isinstance(live_at, int)
    assert store_mark is None or isinstance(store_mark, str)
    held_lines = tuple(HeldLine(int(line), str(detector)) for line, detector in json.loads(held))
    if synced_known or kept_present or any(value is not None for value in (synced, kept, kept_base)):
        return WholeState(
            path,
            held=held_lines,
            synced=synced,
            synced_known=bool(synced_known),
            kept=kept,
            kept_base=kept_base,
            kept_present=bool(kept_present),
        )
    appended = (offset, prefix_hash, partial_at, store_seen, rewritten_since, live_id, store_mark)
    if any(value is not None for value in appended) or store_at or live_at:
        return AppendState(
            path,
            held=held_lines,
            offset=offset,
            prefix_hash=prefix_hash,
            partial_at=partial_at,
            partial_hash=partial_hash,
            partial_since=None if partial_since is None else float(partial_since),
            store_seen=store_seen,
            rewritten_since=None if rewritten_since is None else float(rewritten_since),
            live_id=live_id,
            store_at=store_at,
            store_mark=store_mark,
            live_at=live_at,
        )
    return kind_of_record(path)(path, held=held_lines)  # nothing but held lines: the path's kind


def state_values(state: Record) -> tuple[object, ...]:
    """The ``states`` column values of ``state`` in ``STATE_COLUMNS`` order (the other kind's empty)."""
    held = json.dumps([[h.line, h.detector] for h in state.held])
    if isinstance(state, WholeState):
        whole = (state.synced, int(state.synced_known), state.kept, state.kept_base, int(state.kept_present))
        return (None, None, None, None, None, *whole, held, None, None, None, 0, None, 0)
    return (
        state.offset,
        state.prefix_hash,
        state.partial_at,
        state.partial_hash,
        state.partial_since,
        None,
        0,
        None,
        None,
        0,
        held,
        state.store_seen,
        state.rewritten_since,
        state.live_id,
        state.store_at,
        state.store_mark,
        state.live_at,
    )

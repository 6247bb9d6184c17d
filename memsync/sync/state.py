"""The sync state: per tracked file, what was last exchanged between the live file and the store.

A crash-safe SQLite database at ``<meta_dir>/state.sqlite`` (WAL journal, ``synchronous=FULL``, one
transaction per file update, or one per group of files inside ``SyncState.batch``). It is a cache (DESIGN
"Vocabulary", "sync state"): when it is missing, cleared or in doubt, the passes (``memsync.sync.passes``)
reconcile live files with the store by content.

Per store path (the key) one *current* record (:class:`AppendState` or :class:`WholeState`), plus at most
one :class:`PendingPublish` and one :class:`PendingDelivery`: the intent recorded before a write to the
store or to a live file, so a process killed between the write and the state update can tell afterwards
whether the write happened (DESIGN I7).

The state also lists the store paths memsync wrote since the store's last commit (``written``), recorded
with the intent of each write, so what a killed process published is still committed on restart.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from memsync.base.database import Database
from memsync.base.paths import STATE_DB
from memsync.sync.records import AppendState, HeldLine, PendingDelivery, PendingPublish, Record, WholeState
from memsync.sync.state_rows import (
    ADDED_COLUMNS,
    MIGRATIONS,
    SCHEMA,
    STATE_COLUMNS,
    STATE_VERSION,
    row_to_state,
    state_values,
)

_PLACEHOLDERS = ", ".join("?" * (2 + len(STATE_COLUMNS.split(","))))


class SyncState(Database):
    """The sync state database of one store, at ``<meta_dir>/state.sqlite`` (created if missing); close it
    with ``close`` or ``with`` (``Database``).

    Every method is one transaction (inside ``batch``, one savepoint of the batch's transaction): after a
    crash the database holds either the old or the new record, never a mix. Not thread-safe; one cycle
    at a time uses it (the cycle holds the store lock). Raises ``sqlite3.Error`` on a corrupt or
    unwritable database.
    """

    def __init__(self, meta_dir: Path) -> None:
        meta_dir.mkdir(parents=True, exist_ok=True)
        self.path = meta_dir / STATE_DB
        super().__init__(sqlite3.connect(self.path, isolation_level=None, timeout=30.0))
        self._batching = False
        self._db.execute("PRAGMA journal_mode=WAL")
        # FULL: a committed transaction survives power loss too, not only a killed process.
        self._db.execute("PRAGMA synchronous=FULL")
        # Whole-file bases are memory text: what a purge removes must not linger in freed pages.
        self._db.execute("PRAGMA secure_delete=ON")
        with _Transaction(self._db):
            for statement in SCHEMA:
                self._db.execute(statement)
            present = {str(row[1]) for row in self._db.execute("PRAGMA table_info(states)")}
            for column, kind in ADDED_COLUMNS.items():
                if column not in present:
                    self._db.execute(f"ALTER TABLE states ADD COLUMN {column} {kind}")
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            for step in range(version, STATE_VERSION):
                for statement in MIGRATIONS[step]:
                    self._db.execute(statement)
            if version < STATE_VERSION:
                self._db.execute(f"PRAGMA user_version = {STATE_VERSION}")

    def scrub(self) -> None:
        """Leave no copy of replaced or deleted records on disk (after a purge): freed pages are zeroed
        (``secure_delete``) and the write-ahead log is checkpointed and truncated. Outside a batch only.
        Raises ``sqlite3.Error``."""
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group the updates of many files into one transaction, committed by ``commit()`` and at the end
        of the block (an exception rolls back to the last commit). Inside a batch, nested too, nothing is
        durable until then: one commit (one fsync of the journal) per group of files instead of one per
        update.

        Safe because the state is a cache that memsync can rebuild by comparing live files with the store
        (DESIGN "sync state"): losing the updates since the last commit to a crash only sends the files
        they were about back to the settle-by-content paths of the passes. What must never be lost is
        an intent whose write may have happened: the caller ``commit()``s before writing (``begin_publish``
        and ``begin_delivery`` do it themselves unless told the write is staged), and records that a write
        happened only after the write is durable. Raises ``sqlite3.Error``.
        """
        if self._batching:
            yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._batching = True
        try:
            yield
        except BaseException:
            self._batching = False
            if self._db.in_transaction:  # SQLite may have rolled back itself (e.g. disk full)
                self._db.execute("ROLLBACK")
            raise
        self._batching = False
        self._db.execute("COMMIT")

    def commit(self) -> None:
        """Inside ``batch``: make every update so far durable, then go on in a new transaction (call it
        before writing a file that a recorded intent announces, DESIGN I7). Outside: nothing to do."""
        if self._batching:
            self._db.execute("COMMIT")
            self._db.execute("BEGIN IMMEDIATE")

    def get(self, path: str) -> Record | None:
        """The current state of store path ``path``, or None when memsync has none."""
        return self._get(path, "current")

    def get_append(self, path: str) -> AppendState | None:
        """The current state of the append-only file at store path ``path``, or None when memsync has
        none (a whole file's record there: only its held lines, the offset unknown)."""
        found = self.get(path)
        return (
            found if found is None or isinstance(found, AppendState) else AppendState(path, held=found.held)
        )

    def get_whole(self, path: str) -> WholeState | None:
        """The current state of the whole file at store path ``path``, or None when memsync has none
        (an append-only file's record there: only its held lines, no synced version known)."""
        found = self.get(path)
        return found if found is None or isinstance(found, WholeState) else WholeState(path, held=found.held)

    def _get(self, path: str, slot: str) -> Record | None:
        row = self._db.execute(
            f"SELECT {STATE_COLUMNS} FROM states WHERE path = ? AND slot = ?", (path, slot)
        ).fetchone()
        return None if row is None else row_to_state(path, row)

    def _put(self, state: Record, slot: str) -> None:
        self._db.execute(
            f"INSERT OR REPLACE INTO states (path, slot, {STATE_COLUMNS}) VALUES ({_PLACEHOLDERS})",
            (state.path, slot, *state_values(state)),
        )

    def put(self, state: Record) -> None:
        """Set the current state of ``state.path`` (one transaction)."""
        with _Transaction(self._db):
            self._put(state, "current")

    def forget(self, path: str) -> None:
        """Remove everything known about ``path``: the next reconcile settles it by content."""
        with _Transaction(self._db):
            self._db.execute("DELETE FROM states WHERE path = ?", (path,))
            self._db.execute("DELETE FROM pending WHERE path = ?", (path,))

    def clear(self) -> None:
        """Forget every file (e.g. after the store adopted another history); reconcile goes by content."""
        with _Transaction(self._db):
            self._db.execute("DELETE FROM states")
            self._db.execute("DELETE FROM pending")

    def note_written(self, path: str) -> None:
        """Record that memsync is about to write the store path ``path`` (before the write, durable with
        the batch): the next commit may take it (``written``)."""
        with _Transaction(self._db):
            self._db.execute("INSERT OR IGNORE INTO written (path) VALUES (?)", (path,))

    def written(self) -> frozenset[str]:
        """The store paths memsync wrote (or was about to write) since ``clear_written`` last took them:
        the only working-tree changes of the store that a commit may take."""
        return frozenset(str(row[0]) for row in self._db.execute("SELECT path FROM written"))

    def clear_written(self, paths: Iterable[str]) -> None:
        """Forget ``paths`` (committed now, or equal to the store's last commit), in one transaction."""
        with _Transaction(self._db):
            self._db.executemany("DELETE FROM written WHERE path = ?", [(path,) for path in paths])

    def paths(self, prefix: str = "") -> list[str]:
        """Sorted store paths with any record, limited to ``prefix`` itself or paths under ``prefix/``."""
        rows = self._db.execute("SELECT DISTINCT path FROM states UNION SELECT path FROM pending").fetchall()
        found = sorted(str(row[0]) for row in rows)
        if not prefix:
            return found
        return [p for p in found if p == prefix or p.startswith(prefix.rstrip("/") + "/")]

    def held(self) -> list[tuple[str, HeldLine]]:
        """Every line held back by the secret scanner, as (store path, HeldLine), for ``memsync status``."""
        rows = self._db.execute(
            "SELECT path, held FROM states WHERE slot = 'current' AND held != '[]' ORDER BY path"
        ).fetchall()
        return [
            (str(path), HeldLine(int(line), str(detector)))
            for path, held in rows
            for line, detector in json.loads(held)
        ]

    def pending_publish(self, path: str) -> PendingPublish | None:
        """The publish recorded for ``path`` and not yet settled, or None."""
        row = self._db.execute(
            "SELECT before_hash, before_size, after_hash, after_size FROM pending "
            "WHERE path = ? AND slot = 'publish'",
            (path,),
        ).fetchone()
        then = None if row is None else self._get(path, "publish")
        if row is None or then is None:
            return None
        return PendingPublish(str(row[0]), int(row[1]), str(row[2]), int(row[3]), then)

    def begin_publish(self, path: str, pending: PendingPublish, *, durable: bool = True) -> None:
        """Record, before writing the store file, the write about to happen and the state it leads to
        (and that ``path`` is written, see ``note_written``).

        Inside ``batch`` this commits the batch, unless ``durable`` is False: the caller stages the write
        and commits before doing it."""
        with _Transaction(self._db):
            self._put(pending.then, "publish")
            self._db.execute("INSERT OR IGNORE INTO written (path) VALUES (?)", (path,))
            self._db.execute(
                "INSERT OR REPLACE INTO pending "
                "(path, slot, before_hash, before_size, after_hash, after_size) "
                "VALUES (?, 'publish', ?, ?, ?, ?)",
                (path, pending.before_hash, pending.before_size, pending.after_hash, pending.after_size),
            )
        if durable:
            self.commit()

    def finish_publish(self, path: str) -> None:
        """The recorded publish happened: make its state current and drop the record (one transaction)."""
        self._finish(path, "publish")

    def drop_publish(self, path: str) -> None:
        """The recorded publish did not happen: drop the record, keep the current state."""
        self._drop(path, "publish")

    def pending_delivery(self, path: str) -> PendingDelivery | None:
        """The delivery recorded for ``path`` and not yet settled, or None."""
        row = self._db.execute(
            "SELECT data, at_offset, remove FROM pending WHERE path = ? AND slot = 'delivery'", (path,)
        ).fetchone()
        then = None if row is None else self._get(path, "delivery")
        if row is None or then is None:
            return None
        return PendingDelivery(bytes(row[0]), None if row[1] is None else int(row[1]), bool(row[2]), then)

    def begin_delivery(self, path: str, pending: PendingDelivery, *, durable: bool = True) -> None:
        """Record, before writing the live file, the exact bytes about to be written and the next state.

        Inside ``batch`` this commits the batch, unless ``durable`` is False: the caller stages the write
        and commits before doing it."""
        with _Transaction(self._db):
            self._put(pending.then, "delivery")
            self._db.execute(
                "INSERT OR REPLACE INTO pending (path, slot, data, at_offset, remove) "
                "VALUES (?, 'delivery', ?, ?, ?)",
                (path, pending.data, pending.at_offset, int(pending.remove)),
            )
        if durable:
            self.commit()

    def finish_delivery(self, path: str, then: Record | None = None) -> None:
        """The recorded delivery happened: make its state (or ``then``) current, drop the record."""
        self._finish(path, "delivery", then)

    def drop_delivery(self, path: str) -> None:
        """The recorded delivery did not happen: drop the record, keep the current state."""
        self._drop(path, "delivery")

    def _finish(self, path: str, slot: str, then: Record | None = None) -> None:
        with _Transaction(self._db):
            state = then if then is not None else self._get(path, slot)
            if state is not None:
                self._put(state, "current")
            self._db.execute("DELETE FROM states WHERE path = ? AND slot = ?", (path, slot))
            self._db.execute("DELETE FROM pending WHERE path = ? AND slot = ?", (path, slot))

    def _drop(self, path: str, slot: str) -> None:
        with _Transaction(self._db):
            self._db.execute("DELETE FROM states WHERE path = ? AND slot = ?", (path, slot))
            self._db.execute("DELETE FROM pending WHERE path = ? AND slot = ?", (path, slot))


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception) on an autocommit connection; a
    savepoint inside a transaction already open (a batch), so a failed method leaves no half record."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._nested = False

    def __enter__(self) -> None:
        self._nested = self._db.in_transaction
        self._db.execute("SAVEPOINT method" if self._nested else "BEGIN IMMEDIATE")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._nested:
            self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
            return
        if exc_type is not None:
            self._db.execute("ROLLBACK TO method")
        self._db.execute("RELEASE method")

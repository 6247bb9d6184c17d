"""The file writes of one pass, applied in groups (DESIGN I5, I7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memsync.base.fsio import WriteBatch, WriteOp
from memsync.secrets.files import scan_wholes
from memsync.sync.state import SyncState

# What a whole-file scan found: (1-based line, detector), None for clean (``secrets.files.scan_whole``).
Verdict = tuple[int, str] | None

# A pass applies its staged writes once this many files or bytes wait: few commits and syncs for
# thousands of files, bounded memory, and at most this many temp files left by a kill -9.
BATCH_FILES = 500
BATCH_BYTES = 16 << 20


class Writes:
    """The store (publish) or live (deliver) file writes of one pass, applied in groups (DESIGN I5, I7).

    A group's recorded intents are committed first (``SyncState.commit``), then its writes are made
    together with one sync (``fsio.WriteBatch``), then each write's ``then`` records the outcome,
    committed at once. A sync state transaction and two fsyncs per file made the first sync of 10,000
    files take ~50 s. Crash safety is that of a single write: a kill before the first commit loses the
    group's intents and its writes alike (the state is a cache, settled again by content); after it, the
    committed intents settle each write by content (``memsync.sync.settle``), and a write made without an
    intent (first sight of a whole file) is settled as a rerun of that first sight. A staged file is not
    read again in the pass (each file is visited once), so its write may wait for the group.

    The secret scan of a group's whole files waits for the group too (``scan``): one scan of all their
    texts (``secrets.files.scan_wholes``) before the group's intents are committed.
    """

    def __init__(self, state: SyncState, allowed: frozenset[str] = frozenset()) -> None:
        self._state = state
        self._allowed = allowed
        self._batch = WriteBatch()
        self._then: list[Callable[[bool], None]] = []
        self._scans: list[tuple[bytes, Callable[[Verdict], None]]] = []
        self._scan_size = 0

    def add(
        self, op: WriteOp, path: Path, data: bytes, then: Callable[[bool], None], *, like: Path | None = None
    ) -> None:
        """Stage ``op`` (see ``WriteBatch.add``, and its ``like``: the live file of a store copy, whose
        permission bits the copy does not exceed); ``then(done)`` runs once it is applied."""
        self._batch.add(op, path, data, like=like)
        self._then.append(then)

    def scan(self, data: bytes, then: Callable[[Verdict], None]) -> None:
        """Stage the secret scan of the whole-file version ``data``; ``then(verdict)`` runs at the next
        flush, before the group's writes are applied, and may ``add`` writes to the group (DESIGN I6:
        nothing flagged is written)."""
        self._scans.append((data, then))
        self._scan_size += len(data)

    def flush(self, *, when_full: bool = False) -> None:
        """Scan what waits to be scanned, then apply the staged writes (``when_full``: only once
        BATCH_FILES or BATCH_BYTES wait). Raises ``OSError`` and ``sqlite3.Error``."""
        waiting = len(self._batch) + len(self._scans)
        full = waiting >= BATCH_FILES or self._batch.size + self._scan_size >= BATCH_BYTES
        if not waiting or (when_full and not full):
            return
        scans, self._scans, self._scan_size = self._scans, [], 0
        for (_, scanned), verdict in zip(
            scans, scan_wholes([data for data, _ in scans], self._allowed), strict=True
        ):
            scanned(verdict)
        if not self._then:
            return
        then, self._then = self._then, []
        self._state.commit()
        for call, done in zip(then, self._batch.apply(), strict=True):
            call(done)
        self._state.commit()

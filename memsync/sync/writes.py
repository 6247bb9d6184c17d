"""The file writes of one pass, applied in groups (DESIGN I5, I7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memsync.fsio import WriteBatch, WriteOp
from memsync.sync.state import SyncState

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
    """

    def __init__(self, state: SyncState) -> None:
        self._state = state
        self._batch = WriteBatch()
        self._then: list[Callable[[bool], None]] = []

    def add(self, op: WriteOp, path: Path, data: bytes, then: Callable[[bool], None]) -> None:
        """Stage ``op`` (see ``WriteBatch.add``); ``then(done)`` runs once it is applied."""
        self._batch.add(op, path, data)
        self._then.append(then)

    def flush(self, *, when_full: bool = False) -> None:
        """Apply the staged writes (``when_full``: only once BATCH_FILES or BATCH_BYTES wait). Raises
        ``OSError`` and ``sqlite3.Error``."""
        full = len(self._batch) >= BATCH_FILES or self._batch.size >= BATCH_BYTES
        if not self._then or (when_full and not full):
            return
        then, self._then = self._then, []
        self._state.commit()
        for call, done in zip(then, self._batch.apply(), strict=True):
            call(done)
        self._state.commit()

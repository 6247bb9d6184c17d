"""Committing what memsync wrote into a store, as a sync state records it (DESIGN "Hostile input", I2):
the one way a cycle, a fold of legacy paths, compaction and purge commit."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memsync.store.facade import Store


class WrittenRecord(Protocol):
    """Where a sync state records the store paths memsync wrote since its last commit."""

    def written(self) -> frozenset[str]:
        """The store paths written since ``clear_written`` last took them."""
        ...

    def clear_written(self, paths: Iterable[str]) -> None:
        """Forget ``paths`` (committed now)."""
        ...


def commit_written(store: Store, state: WrittenRecord, message: str) -> str | None:
    """Commit what memsync wrote into ``store`` since its last commit, as ``state`` records it (a publish
    a killed process made too); anything else found changed is put back from the last commit, never
    committed (``Store.commit_all``, DESIGN "Hostile input"). Returns the new commit's sha, or None.
    Raises ``MemsyncError`` (git failed: the record stays for the retry) or ``sqlite3.Error``."""
    written = state.written()
    sha = store.commit_all(message, written)
    state.clear_written(written)
    return sha

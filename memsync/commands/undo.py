"""Undo of the last change a person made in `memsync ui`: each change says how it is taken back, and the
taking back goes through the same writers as the change (a live file replaced atomically, an entry
written or forgotten through ``MemoryFile``), so it syncs like any edit.

A memory file's tombstone is final and a superseded id stays superseded, so an entry forgotten or
superseded comes back as a new entry with the same fields (a new id), superseding what it superseded
(so a fork it was part of is listed again); a whole file comes back byte for
byte, unless it changed since (then nothing is written: the newer edit is not lost); a review decision
is withdrawn (:func:`memsync.commands.review.withdraw`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.commands.review import withdraw
from memsync.config.file import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import Entry
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall.search import written


@dataclass(frozen=True)
class Restore:
    """A whole live file ``path`` the change turned from ``before`` into ``after`` (an edit, a
    resolve)."""

    what: str
    path: Path
    before: bytes
    after: bytes


@dataclass(frozen=True)
class Reinstate:
    """Entry ``entry`` of memory file ``file`` that the change forgot or superseded; ``drop``: the entry
    the change wrote in its place (a supersede's), forgotten by the undo."""

    what: str
    file: Path
    entry: Entry
    drop: str | None = None


@dataclass(frozen=True)
class Withdraw:
    """This machine's decision ``decision`` on proposal ``proposal`` (an approval or a rejection)."""

    what: str
    proposal: str
    decision: str


Change = Restore | Reinstate | Withdraw


def undo(config: Config, change: Change) -> str:
    """Take ``change`` back and return the line to show. Raises ``MemsyncError`` when the file changed
    since the change (a whole file), or on a failed write."""
    if isinstance(change, Withdraw):
        return f"undid {change.what}: " + withdraw(config.path, change.proposal, change.decision)
    if isinstance(change, Restore):
        try:
            now = change.path.read_bytes()
        except OSError as exc:
            raise MemsyncError(
                f"undo {change.what} of {change.path}: cannot read it ({exc.strerror})"
            ) from None
        if now != change.after:
            raise MemsyncError(
                f"undo {change.what} of {change.path}: it changed since. Edit it by hand; nothing was written"
            )
        atomic_write(change.path, change.before)
        return f"undid {change.what} of {change.path}"
    memory = MemoryFile(change.file)
    if change.drop is not None and not memory.is_forgotten(change.drop):
        memory.forget(change.drop)
    old = change.entry
    back = memory.remember(
        NewEntry(
            old.text,
            old.kind,
            scope=old.scope,
            tags=old.tags,
            source=old.source or "user",
            confidence=old.confidence if old.confidence is not None else 1.0,
            expires=old.expires_at,
            supersedes=old.supersedes,  # what it superseded stays superseded (a fork is listed again)
        ),
        reinstated=True,
    )
    written(config, change.file)
    line = f"undid {change.what} of {old.id}: it is back as {back.id}"
    return line + (f", superseding {old.supersedes}" if old.supersedes else "")

"""The records of the sync state: what was last exchanged for one tracked file, and a write about to happen.

Append-only files keep a byte offset with a mark of the prefix (not a set of line hashes: logs repeat
lines and every repetition must sync), bounded work whatever the file's size (``mark``); whole files keep
the last synced bytes (DESIGN "Vocabulary", "sync state"): :class:`AppendState` and :class:`WholeState`.
The state changes only through their named transitions, so what ``offset`` or ``kept`` means is decided
here, once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Self

from memsync.base.layout import is_append_only

# What identifies an append-only prefix: its first HEAD and last WINDOW bytes (a whole prefix up to
# HEAD + WINDOW bytes), so checking a 300 MB file costs two short reads, not a pass over it.
HEAD = 4096
WINDOW = 65536


def digest(data: bytes) -> str:
    """The hash every ``*_hash`` field of the sync state holds: sha256 of ``data``, hex."""
    return hashlib.sha256(data).hexdigest()


def mark(prefix: bytes) -> str:
    """The mark of an append-only prefix (``prefix_hash``, ``store_mark``): ``digest`` of the whole
    ``prefix`` up to ``HEAD + WINDOW`` bytes, else of its first ``HEAD`` and last ``WINDOW`` bytes.

    With the size beside it, it tells an appended file from a rewritten one when the rewrite touched the
    first 4 KiB or the last 64 KiB of the prefix; a rewrite of bytes between them of the same length is
    not seen (the limit of a bounded check, docs/reliability.md)."""
    if len(prefix) <= HEAD + WINDOW:
        return digest(prefix)
    return digest(prefix[:HEAD] + prefix[-WINDOW:])


@dataclass(frozen=True)
class HeldLine:
    """A line the secret scanner held back: 1-based line number in the live file, and the detector."""

    line: int
    detector: str


@dataclass(frozen=True)
class Partial:
    """An unfinished last line of an append-only file: start offset, sha256 hex, first seen (seconds);
    all None for none."""

    at: int | None = None
    hash: str | None = None
    since: float | None = None


@dataclass(frozen=True)
class FileState:
    """What was last exchanged for one tracked file (key: ``path``, the store path), of either kind:
    :class:`AppendState` or :class:`WholeState`. ``held`` lists lines the secret scanner keeps on this
    machine.

    Build and change it with the named constructors and transitions, not field by field.
    """

    path: str
    held: tuple[HeldLine, ...] = ()

    def holding(self, held: tuple[HeldLine, ...]) -> Self:
        """The same record with ``held`` as its held lines."""
        return replace(self, held=held)

    @property
    def only_held(self) -> bool:
        """Nothing but held lines was ever recorded."""
        return self == type(self)(self.path, held=self.held)


@dataclass(frozen=True)
class AppendState(FileState):
    """The sync state of an append-only file: ``offset`` (bytes of the live file accounted for:
    published, delivered or held back; None = unknown, settle by content), ``prefix_hash`` (``mark`` of
    ``live[:offset]``), ``live_id`` (device:inode of that live file; None = not recorded), the sync point
    ``store_at``, ``store_mark``, ``live_at`` (every line of the store copy's first ``store_at`` bytes,
    marked ``store_mark``, is in the live file's first ``live_at`` bytes: deliver reads only what
    follows; 0 and None: both files from their start), the ``partial_*`` fields (an unfinished last line
    starting at byte ``partial_at`` with hash ``partial_hash`` first seen at ``partial_since`` seconds),
    ``store_seen`` (size, mtime and inode of the store copy last found wholly present in the live file),
    and ``rewritten_since`` (when the live file was found shrunk, in seconds: an agent rewriting it in
    place may still be writing)."""

    offset: int | None = None
    prefix_hash: str | None = None
    partial_at: int | None = None
    partial_hash: str | None = None
    partial_since: float | None = None
    store_seen: str | None = None
    rewritten_since: float | None = None
    live_id: str | None = None
    store_at: int = 0
    store_mark: str | None = None
    live_at: int = 0

    @classmethod
    def accounted(
        cls,
        path: str,
        prefix: bytes,
        *,
        held: tuple[HeldLine, ...] = (),
        partial: Partial = Partial(),
        rewritten_since: float | None = None,
    ) -> AppendState:
        """An append-only file whose first ``len(prefix)`` bytes (``prefix``) are accounted for."""
        return cls.accounted_to(
            path, len(prefix), mark(prefix), None, held=held, partial=partial, rewritten_since=rewritten_since
        )

    @classmethod
    def accounted_to(
        cls,
        path: str,
        offset: int,
        prefix_mark: str,
        live_id: str | None,
        *,
        held: tuple[HeldLine, ...] = (),
        partial: Partial = Partial(),
        rewritten_since: float | None = None,
    ) -> AppendState:
        """An append-only file (device:inode ``live_id``) whose first ``offset`` bytes, of mark
        ``prefix_mark``, are accounted for."""
        return cls(
            path,
            offset=offset,
            prefix_hash=prefix_mark,
            held=held,
            live_id=live_id,
            rewritten_since=rewritten_since,
        )._with_partial(partial)

    def published(
        self,
        offset: int,
        prefix_hash: str,
        held: tuple[HeldLine, ...],
        partial: Partial,
        live_id: str | None = None,
    ) -> AppendState:
        """Publish accounted for the live bytes up to ``offset`` (mark ``prefix_hash``) of the file
        ``live_id`` (None: keep the recorded one), holding back ``held`` lines more, with ``partial`` as
        the unfinished last line."""
        return replace(
            self,
            offset=offset,
            prefix_hash=prefix_hash,
            held=self.held + held,
            live_id=live_id or self.live_id,
        )._with_partial(partial)

    def delivered(self, offset: int, prefix_hash: str, store_seen: str | None) -> AppendState:
        """Deliver appended to the live file, which now holds ``offset`` bytes (mark ``prefix_hash``), all
        of the store copy ``store_seen`` (see ``seen_store``); it has no unfinished line."""
        return replace(
            self, offset=offset, prefix_hash=prefix_hash, store_seen=store_seen, rewritten_since=None
        )._with_partial(Partial())

    def synced_at(self, store_at: int, store_mark: str | None, live_at: int) -> AppendState:
        """Every line of the store copy's first ``store_at`` bytes (mark ``store_mark``) is in the live
        file's first ``live_at`` bytes: deliver reads only the bytes after them."""
        return replace(self, store_at=store_at, store_mark=store_mark, live_at=live_at)

    def in_doubt(self) -> AppendState:
        """The offset is no longer known: the next publish settles the file by content."""
        return replace(
            self, offset=None, prefix_hash=None, live_id=None, store_at=0, store_mark=None, live_at=0
        )

    def rewritten(self, accounted: bytes | None, held: tuple[HeldLine, ...]) -> AppendState:
        """The live file was rewritten by memsync (compaction): ``accounted`` bytes of it are accounted for
        (None: unknown, settled by content), ``held`` are its held lines, nothing else is known."""
        offset = None if accounted is None else len(accounted)
        prefix_hash = None if accounted is None else mark(accounted)
        return replace(
            self.in_doubt(), offset=offset, prefix_hash=prefix_hash, store_seen=None, held=held
        )._with_partial(Partial())

    def seen_store(self, key: str | None) -> AppendState:
        """The store copy with stat key ``key`` (size:mtime_ns:inode) is wholly in the live file: deliver
        need not read either file while it stays so."""
        return replace(self, store_seen=key)

    def moved(self, path: str) -> AppendState:
        """The same record for store path ``path`` (a fold of a legacy path): the store copy is not seen."""
        return replace(self, path=path, store_seen=None, store_at=0, store_mark=None, live_at=0)

    def _with_partial(self, partial: Partial) -> AppendState:
        return replace(self, partial_at=partial.at, partial_hash=partial.hash, partial_since=partial.since)

    def purged(self, clean: Callable[[bytes | None], bytes | None]) -> AppendState:
        """The record after a purge: the offset and the held lines forgotten (the live file is settled
        by content)."""
        return AppendState(self.path)


@dataclass(frozen=True)
class WholeState(FileState):
    """The sync state of a whole file: ``synced`` (the last synced bytes, None = absent) when
    ``synced_known``, and ``kept`` (bytes an agent wrote while delivery replaced the file, edited from
    ``kept_base``) when ``kept_present``."""

    synced: bytes | None = None
    synced_known: bool = False
    kept: bytes | None = None
    kept_base: bytes | None = None
    kept_present: bool = False

    @classmethod
    def synced_as(cls, path: str, data: bytes | None) -> WholeState:
        """A whole file last synced as ``data`` (None: absent on both sides)."""
        return cls(path, synced=data, synced_known=True)

    @property
    def in_sync(self) -> bool:
        """A whole file with a known last synced version and no kept bytes waiting to be published."""
        return self.synced_known and not self.kept_present

    def keeping(self, kept: bytes | None, base: bytes | None) -> WholeState:
        """An agent wrote ``kept`` (None: deleted the file), edited from ``base``, while deliver replaced the
        file: the bytes wait here to be published."""
        return replace(self, kept=kept, kept_base=base, kept_present=True)

    def kept_published(self) -> WholeState:
        """The kept bytes were published (or held): nothing waits, nothing is held."""
        return replace(self, kept=None, kept_base=None, kept_present=False, held=())

    def purged(self, clean: Callable[[bytes | None], bytes | None]) -> WholeState:
        """The record after a purge: the whole-file versions passed through ``clean``; the append-only
        offset and the held lines forgotten (the live file is settled by content)."""
        return WholeState(
            self.path,
            synced=clean(self.synced),
            synced_known=self.synced_known,
            kept=clean(self.kept),
            kept_base=clean(self.kept_base),
            kept_present=self.kept_present,
        )

    def moved(self, path: str) -> WholeState:
        """The same record for store path ``path`` (a fold of a legacy path)."""
        return replace(self, path=path)


# The record of either kind a store path has: which one is decided by the path (``layout.is_append_only``).
Record = AppendState | WholeState


def kind_of_record(path: str) -> type[AppendState] | type[WholeState]:
    """The kind of record store path ``path`` keeps: append-only files keep an offset, others bytes."""
    return AppendState if is_append_only(path) else WholeState


@dataclass(frozen=True)
class PendingPublish:
    """A write to the store file about to happen: the store file's digest and size before and after
    (size -1 and digest "absent" for no file; the pass decides what the digest covers).

    ``then`` is the state to apply once the store file is found in the ``after`` form.
    """

    before_hash: str
    before_size: int
    after_hash: str
    after_size: int
    then: Record


@dataclass(frozen=True)
class PendingDelivery:
    """A write to the live file about to happen.

    Append-only: ``data`` is appended where the live file had ``at_offset`` bytes. Whole file: ``data``
    replaces the live file, or ``remove`` deletes it. ``then`` is the state to apply once the write is
    found done.
    """

    data: bytes
    at_offset: int | None
    remove: bool
    then: Record

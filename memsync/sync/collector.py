"""What one pass gathers while it visits a track's files: its sync state, staged writes, the changes,
held lines, waiting files, warnings and clashes behind the frozen reports."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from memsync.base.layout import kind_of
from memsync.base.writers import positional_writers
from memsync.secrets.files import NOT_UTF8
from memsync.sync.clashes import Clash
from memsync.sync.files import TrackFile
from memsync.sync.notices import Notices
from memsync.sync.records import HeldLine
from memsync.sync.reports import FileChange, HeldBack
from memsync.sync.state import SyncState
from memsync.sync.writes import Writes

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublishMode:
    """How a publish pass treats the live files: at ``now`` (seconds since the epoch), ending an unfinished
    last line that stood ``grace_s`` seconds; ``incremental`` (publish) also publishes what a file gained
    since its state, while reconcile settles only the files whose state cannot vouch for them."""

    now: float
    grace_s: float
    incremental: bool

    @classmethod
    def publish(cls, now: float, grace_s: float) -> PublishMode:
        """The cycle's publish (DESIGN step 2)."""
        return cls(now, grace_s, incremental=True)

    @classmethod
    def reconcile(cls, now: float) -> PublishMode:
        """Reconcile by content: nothing published by offset, no unfinished line ended."""
        return cls(now, float("inf"), incremental=False)


@dataclass
class Collector:
    """The mutable side of one pass over a track (``memsync.sync.passes``)."""

    state: SyncState
    notices: Notices
    # Hashes of lines a person said are no secrets (``secrets.allowed``): the scanner lets them pass.
    allowed: frozenset[str] = frozenset()
    writes: Writes = field(init=False)
    changes: list[FileChange] = field(default_factory=list)
    held: list[HeldBack] = field(default_factory=list)
    waiting: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    clashes: list[Clash] = field(default_factory=list)
    # Files held open by positional writers (memsync.base.writers), looked up once per pass when first needed.
    writers: Callable[[], frozenset[str] | None] = field(
        default_factory=lambda: functools.cache(positional_writers)
    )

    def __post_init__(self) -> None:
        self.writes = Writes(self.state, self.allowed)

    def warn(self, message: str) -> None:
        """Log ``message`` and add it to the report."""
        log.warning("%s", message)
        self.warnings.append(message)

    def report_held(self, f: TrackFile, held: Sequence[HeldLine]) -> None:
        """Report the lines of ``f`` the secret scanner held back (DESIGN I6), with a warning each."""
        for item in held:
            self.held.append(HeldBack(f.rel, item.line, item.detector))
            if item.detector == NOT_UTF8:  # no scanner can read it: held for that, not as a secret
                self.warn(f"{f.live}: line {item.line} held back: not UTF-8 text. Re-save it as UTF-8")
            else:
                self.warn(f"{f.live}: line {item.line} held back, it looks like a secret ({item.detector})")

    def appended(self, f: TrackFile, lines: int, entries: int = 0, tombstones: int = 0) -> None:
        """Report ``lines`` lines (``entries`` and ``tombstones`` among them) appended to ``f``'s store or
        live copy, added to the report of the append before when a file went in several pieces."""
        change = FileChange(f.rel, f.label, kind_of(f.rel), "appended", lines, entries, tombstones)
        last = self.changes[-1] if self.changes else None
        if last is not None and last.path == f.rel and last.action == "appended":
            change = replace(
                last,
                lines=last.lines + lines,
                entries=last.entries + entries,
                tombstones=last.tombstones + tombstones,
            )
            self.changes.pop()
        self.changes.append(change)

    def report_clash(self, clash: Clash) -> None:
        """Add ``clash`` to the report once; log it once per process (it stays in every cycle's report)."""
        if clash not in self.clashes:
            self.clashes.append(clash)
        if self.notices.first(clash):
            log.warning("%s", clash.advice())

"""A store as the daemon serves it: its pending events, backoff, remotes' health and lock, and the
deadlines they make (DESIGN "One sync cycle": debounce, pull timer, backoff)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memsync.config.file import Config, StoreConfig
from memsync.daemon.backoff import Backoff, Remotes
from memsync.daemon.debounce import Debouncer, PushDebouncer
from memsync.store.locks import StoreGuard
from memsync.sync import echoes

# More changed paths than this between two cycles (a checkout, a bulk copy): a walk costs less than the
# bookkeeping, and a burst that size may hide events the watcher coalesced.
MAX_CHANGED_PATHS = 2000

# A push to a local-path remote is complete once its ref is renamed into place. The cycle that fetches
# it waits until the remote's refs have been still for REMOTE_QUIET_S, or, while pushes come less than
# REMOTE_BURST_S apart (a team writing at once), for twice their recent gap, at most REMOTE_LONGEST_QUIET_S;
# at most REMOTE_MAX_WAIT_S after the first change or the end of the last cycle (``PushDebouncer``;
# seconds), plus this host's share of the team's spread. Fetching soon after each push, each of 32
# machines writing at once ran 28 cycles per round and the team took 45 s to converge.
REMOTE_QUIET_S = 0.5
REMOTE_LONGEST_QUIET_S = 1.5
REMOTE_BURST_S = 3.0
REMOTE_MAX_WAIT_S = 5.0


def remote_reaction() -> PushDebouncer:
    """The reaction of a store to its watched remotes' pushes, with the timings above."""
    return PushDebouncer(REMOTE_QUIET_S, REMOTE_LONGEST_QUIET_S, REMOTE_BURST_S, REMOTE_MAX_WAIT_S)


@dataclass
class ServedStore:
    """Per-store timers and facts: pending events, the backoff after failed cycles, each remote's health,
    the store's lock (``guard``), whether a cycle runs now, and the live paths changed since the last
    cycle began (``changed``; None in doubt: start-up, a reload, a failed cycle, a directory-level event,
    too many paths), which the next cycle visits instead of every file.

    The daemon reads the flags; only the methods below change them, at the moments they name.
    """

    debouncer: Debouncer
    guard: StoreGuard
    remotes: Remotes
    # The refs of a remote that is a local path moved (a peer pushed): when to fetch.
    remote_pushes: PushDebouncer = field(default_factory=remote_reaction)
    # This host's share of the team's spread (``remotedirs.reaction_spread``), added to that deadline.
    spread: float = 0.0
    backoff: Backoff = field(default_factory=Backoff)
    failing: bool = False
    reconciled: bool = False
    last_cycle: float = 0.0
    # A reload added tracks (or the store): their folders may already hold memory to publish.
    tracks_added: bool = False
    # An agent host's hook asked for a sync now (SIGUSR1).
    requested: bool = False
    busy: bool = False
    changed: set[Path] | None = None

    def follow(self, config: Config, store: StoreConfig, spread: float) -> None:
        """Take a (re)loaded ``config``: its debounce timings, the ``store``'s remotes, this host's
        ``spread``; what is pending stays pending."""
        self.debouncer.debounce_s = config.debounce_s
        self.debouncer.max_delay_s = max(config.max_delay_s, config.debounce_s)
        self.remotes.follow(store.remotes)
        self.spread = spread

    def request(self) -> None:
        """An agent host's hook asked for a sync now: the next cycle is a full pass."""
        self.requested = True

    def reconcile(self, tracks_added: bool = False) -> None:
        """The next cycle reconciles every track (the store's lock was taken back, tracks were added:
        with ``tracks_added`` it runs even without an event)."""
        self.reconciled = False
        self.tracks_added = self.tracks_added or tracks_added

    def begin_cycle(self, now: float, all_remotes: bool) -> tuple[frozenset[Path] | None, bool]:
        """A cycle starts at ``now`` (fetching from every remote when ``all_remotes``): the changed
        paths it visits (None: every file; always so when asked for by hand or when tracks were added,
        as `memsync sync` is, since the write asked for may not be an event here yet) and whether it
        must reconcile every track."""
        self.debouncer.take()
        changed = self.take_changed()
        if self.tracks_added or self.requested:
            changed = None
        self.tracks_added = False
        self.requested = False
        self.last_cycle = now
        self.busy = True
        if all_remotes:
            self.remote_pushes.take()
        return changed, not self.reconciled

    def cycle_ended(self, now: float) -> None:
        """The cycle ended at ``now``. A team's pushes that came during it are fetched once they pause,
        at most the maximum wait from now (cycles slower than that ran back to back through a burst)."""
        self.busy = False
        self.remote_pushes.restart(now)

    def succeeded(self) -> bool:
        """The cycle synced every track: the backoff resets. Returns whether the store was failing."""
        was_failing = self.failing
        self.reconciled = True
        self.failing = False
        self.backoff.reset()
        return was_failing

    def failed(self, now: float, cap: float) -> tuple[bool, float]:
        """The cycle failed as a whole (what it took may not have been synced): retry with backoff, at
        most ``cap`` seconds away. Returns whether it was failing already and the seconds to the retry."""
        was_failing = self.failing
        self.failing = True
        self.reconciled = False
        return was_failing, self.backoff.failed(now, cap)

    def note_change(self, path: Path, doubt: bool) -> None:
        """Remember the live ``path`` for the next cycle; in ``doubt`` (or past ``MAX_CHANGED_PATHS``)
        the next cycle visits every file."""
        if doubt or self.changed is None or len(self.changed) >= MAX_CHANGED_PATHS:
            self.changed = None
        else:
            self.changed.add(path)

    def only_echoes(self) -> bool:
        """Drop the changed paths whose files are as memsync's own delivery left them
        (``echoes.is_echo``). True when no other path changed: the pending events are forgotten, they need
        no cycle. False in doubt (every file is visited) or when something else changed."""
        if not self.changed:
            return False
        self.changed = {path for path in self.changed if not echoes.is_echo(path)}
        if self.changed:
            return False
        self.debouncer.take()
        return True

    def doubt(self) -> None:
        """The next cycle visits every file: what changed since the last one cannot be named."""
        self.changed = None

    def take_changed(self) -> frozenset[Path] | None:
        """The changed paths for the cycle starting now (None: every file); the next ones start empty."""
        taken, self.changed = self.changed, set()
        return None if taken is None else frozenset(taken)

    def remote_deadline(self) -> float | None:
        """When the remote pushes seen are due a cycle (monotonic seconds), None when none is pending."""
        due = self.remote_pushes.deadline()
        return None if due is None else due + self.spread

    def deadlines(self) -> list[float]:
        """When something of this store is due (monotonic seconds): none while a cycle runs (its end
        is an event of its own); a failing store waits for its retry only: its other deadlines, past
        already, would make the daemon's loop spin."""
        if self.busy:
            return []
        if self.failing:
            due = [self.backoff.retry_at]
        else:
            due = [self.debouncer.deadline(), self.remote_deadline(), *self.remotes.deadlines()]
        return [when for when in due if when is not None]

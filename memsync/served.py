"""A store as the daemon serves it: its pending events, backoff, remotes' health and lock, and the
deadlines they make (DESIGN "One sync cycle": debounce, pull timer, backoff)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memsync.backoff import Backoff, Remotes
from memsync.debounce import Debouncer
from memsync.store.locks import StoreGuard


@dataclass
class ServedStore:
    """Per-store timers and facts: pending events, the backoff after failed cycles, each remote's health,
    the store's lock (``guard``), whether a cycle runs now."""

    debouncer: Debouncer
    guard: StoreGuard
    remotes: Remotes
    remote_due: float | None = None
    backoff: Backoff = field(default_factory=Backoff)
    failing: bool = False
    reconciled: bool = False
    last_cycle: float = 0.0
    # A reload added tracks (or the store): their folders may already hold memory to publish.
    tracks_added: bool = False
    # An agent host's hook asked for a sync now (SIGUSR1).
    requested: bool = False
    busy: bool = False

    def deadlines(self) -> list[float]:
        """When something of this store is due (monotonic seconds): none while a cycle runs (its end
        is an event of its own); a failing store waits for its retry only: its other deadlines, past
        already, would make the daemon's loop spin."""
        if self.busy:
            return []
        if self.failing:
            due = [self.backoff.retry_at]
        else:
            due = [self.debouncer.deadline(), self.remote_due, *self.remotes.deadlines()]
        return [when for when in due if when is not None]

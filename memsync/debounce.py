"""Debouncing of watch events into cycle deadlines (DESIGN "One sync cycle" step 1: a quiet period
``debounce_s`` bounded by a maximum delay ``max_delay_s``)."""

from __future__ import annotations


class Debouncer:
    """Turns event times into cycle deadlines: due ``debounce_s`` seconds after the last event, but never
    later than ``max_delay_s`` seconds after the first pending one, so a steady stream still syncs.

    Times are ``time.monotonic()`` seconds. Not thread-safe: the daemon's thread owns it.
    """

    def __init__(self, debounce_s: float, max_delay_s: float) -> None:
        self.debounce_s = debounce_s
        self.max_delay_s = max(max_delay_s, debounce_s)
        self._first: float | None = None
        self._last: float | None = None

    def poke(self, at: float) -> None:
        """Record an event seen at ``at``."""
        if self._first is None or self._last is None:
            self._first = self._last = at
        else:
            self._last = max(self._last, at)

    @property
    def pending(self) -> bool:
        """True while events wait for a cycle."""
        return self._first is not None

    def deadline(self) -> float | None:
        """When the pending events are due (monotonic seconds), or None if nothing is pending."""
        if self._first is None or self._last is None:
            return None
        return min(self._last + self.debounce_s, self._first + self.max_delay_s)

    def due(self, now: float) -> bool:
        """True when a cycle should start now for the pending events."""
        deadline = self.deadline()
        return deadline is not None and now >= deadline

    def take(self) -> None:
        """Forget the pending events: a cycle is starting and will see their effect. Events after this
        call (also those during the cycle) are pending again."""
        self._first = self._last = None

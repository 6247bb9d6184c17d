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

    def restart(self, at: float) -> None:
        """Count the maximum delay of the pending events from ``at`` (a cycle just ended), not from the
        first of them: while events keep coming, cycles are at least ``max_delay_s`` apart."""
        if self._first is not None:
            self._first = max(self._first, at)


class PushDebouncer(Debouncer):
    """A ``Debouncer`` of a watched remote's ref changes whose quiet period follows the pace of a burst:
    ``quiet_s`` after a lone push; while pushes come less than ``burst_s`` apart, ``PACE`` times their
    recent gap, at most ``longest_quiet_s``. A team's machines pushing one after another under load leave
    gaps longer than a fixed quiet period, and every machine fetched in each of them; waiting for a pause
    longer than the burst's own gaps fetches once the burst is over, and ``max_delay_s`` bounds the wait
    while it goes on.

    Events closer than ``SAME_PUSH_S`` are one push's. Times are ``time.monotonic()`` seconds.
    """

    PACE = 2.0
    SAME_PUSH_S = 0.05

    def __init__(self, quiet_s: float, longest_quiet_s: float, burst_s: float, max_delay_s: float) -> None:
        super().__init__(quiet_s, max_delay_s)
        self.quiet_s = quiet_s
        self.longest_quiet_s = longest_quiet_s
        self.burst_s = burst_s
        self._previous: float | None = None
        self._gap: float | None = None

    def poke(self, at: float) -> None:
        """Record a change of the remote's refs seen at ``at``; the quiet period follows the burst."""
        if self._previous is not None:
            gap = at - self._previous
            if gap >= self.burst_s:
                self._gap = None
            elif gap >= self.SAME_PUSH_S:
                self._gap = gap if self._gap is None else (self._gap + gap) / 2
        self._previous = at if self._previous is None else max(self._previous, at)
        paced = self.PACE * self._gap if self._gap is not None else 0.0
        self.debounce_s = min(self.longest_quiet_s, self.max_delay_s, max(self.quiet_s, paced))
        super().poke(at)

"""Capped exponential backoff, for a store whose cycle failed and for each remote of it that failed
(DESIGN "One sync cycle" step 4: retry with backoff; one dead remote must not hold up the others).

Times are ``time.monotonic()`` seconds. Not thread-safe: the daemon's main thread owns these.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from memsync.cycle.report import remote_error
from memsync.store.exchange import RemoteOutcome

log = logging.getLogger(__name__)

BASE_S = 1.0
CAP_S = 300.0


@dataclass
class Backoff:
    """The next try after ``failures`` failures in a row: ``BASE_S * 2**(failures - 1)`` seconds after the
    last, at most the cap given to ``failed``; ``retry_at`` None while nothing failed."""

    failures: int = 0
    retry_at: float | None = None

    def failed(self, now: float, cap_s: float = CAP_S) -> float:
        """Count one more failure at ``now``; returns the delay until the next try (seconds)."""
        self.failures += 1
        delay = min(cap_s, BASE_S * 2.0 ** (self.failures - 1))
        self.retry_at = now + delay
        return delay

    def reset(self) -> None:
        """A success: nothing to retry."""
        self.failures = 0
        self.retry_at = None

    def due(self, now: float) -> bool:
        """True when a retry is scheduled and its time has come."""
        return self.retry_at is not None and now >= self.retry_at


@dataclass
class RemoteHealth:
    """What the daemon knows of one remote of one store.

    ``error``: the last failure's message, None while the remote works (it is then in every exchange).
    A failed remote is left out of its store's exchanges until ``backoff`` says retry: one that was
    ``offline`` is first asked whether it answers (``probing``, outside the store's cycle), any other is
    tried in the next exchange; ``retry`` marks it for that exchange (also when its refs changed).
    """

    backoff: Backoff
    error: str | None = None
    offline: bool = False
    probing: bool = False
    retry: bool = False

    @property
    def exchanged(self) -> bool:
        """True when the next exchange of the store includes this remote."""
        return self.error is None or self.retry

    def succeeded(self) -> bool:
        """An exchange with it went well; True when it had been failing (it works again)."""
        failing = self.error is not None
        self.error, self.offline = None, False
        self.backoff.reset()
        return failing

    def failed(self, error: str, offline: bool, now: float, cap_s: float) -> bool:
        """An exchange, or a probe, failed with ``error`` at ``now`` (``offline``: it could not be
        reached); the next try is backed off. True when it had been working (a new failure)."""
        new = self.error is None
        self.error, self.offline = error, offline
        self.backoff.failed(now, cap_s)
        return new


@dataclass
class Remotes:
    """The health of every remote of one store (``store`` names it in what is logged), in config order."""

    store: str
    health: dict[str, RemoteHealth] = field(default_factory=dict)

    def follow(self, names: Iterable[str]) -> None:
        """Track exactly the remotes ``names`` (a reload), keeping what is known of those kept."""
        self.health = {name: self.health.get(name) or RemoteHealth(Backoff()) for name in names}

    def exchanged(self) -> list[str]:
        """The remotes the store's next exchange includes: those that work, and those tried again."""
        return [name for name, health in self.health.items() if health.exchanged]

    def sign_of_life(self) -> None:
        """A remote's refs changed: every failing remote is tried in the next exchange."""
        for health in self.health.values():
            health.retry = health.retry or health.error is not None

    def due(self, now: float) -> tuple[list[str], bool]:
        """The failing remotes whose retry time came: those that could not be reached are returned, to be
        probed (marked ``probing``), the others marked for the next exchange; with whether any remote
        is marked for it now."""
        probe = []
        for name, health in self.health.items():
            if health.error is None or health.retry or health.probing or not health.backoff.due(now):
                continue
            if health.offline:
                health.probing = True
                probe.append(name)
            else:
                health.retry = True
        return probe, any(health.retry for health in self.health.values())

    def taken(self, names: Iterable[str]) -> None:
        """An exchange with ``names`` starts: they are no longer marked for one."""
        for name in names:
            self.health[name].retry = False

    def deadlines(self) -> list[float]:
        """When backed-off remotes are due again (not those being probed)."""
        return [
            h.backoff.retry_at
            for h in self.health.values()
            if not h.probing and h.backoff.retry_at is not None
        ]

    def record(self, outcomes: Iterable[RemoteOutcome], now: float, cap_s: float) -> None:
        """An exchange ended with ``outcomes``: a remote is said once to fail when it starts failing and
        once to work when it works again; while it fails it is backed off (up to ``cap_s``)."""
        for outcome in outcomes:
            health = self.health.get(outcome.remote)  # None: the remote left the config meanwhile
            error = remote_error(outcome)
            if health is None:
                continue
            if error is None:
                if health.succeeded():
                    log.info("store %s: remote %s reachable again", self.store, outcome.remote)
            else:
                if health.failed(error, outcome.status == "offline", now, cap_s):
                    log.warning(
                        "store %s: remote %s failed, committing locally and retrying with backoff: %s",
                        self.store,
                        outcome.remote,
                        error,
                    )
                self._next_retry(outcome.remote, health, now)

    def probed(self, remote: str, problem: str | None, now: float, cap_s: float) -> None:
        """A probe of ``remote`` ended: it answered (``problem`` None: the next exchange includes it), or
        not (backed off further)."""
        health = self.health.get(remote)
        if health is None:
            return
        health.probing = False
        if problem is None:
            health.retry = True
            return
        health.failed(problem, True, now, cap_s)
        log.debug("store %s: remote %s still unreachable: %s", self.store, remote, problem)
        self._next_retry(remote, health, now)

    def _next_retry(self, remote: str, health: RemoteHealth, now: float) -> None:
        assert health.backoff.retry_at is not None  # just failed
        log.debug(
            "store %s: remote %s: next retry in %.1f s", self.store, remote, health.backoff.retry_at - now
        )

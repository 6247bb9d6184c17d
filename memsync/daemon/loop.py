"""The long-running sync loop: one daemon per config and per store, signals, watch events, pull timer,
backoff (DESIGN "One sync cycle").

The main thread owns every timer and decision. It waits on one queue (watch events, ends of cycles and
probes) with a timeout set by the nearest deadline, and runs each store's cycles in a worker thread
(``workers``), one at a time per store: a store whose remote hangs never holds up another. A remote that
failed is left out of its store's exchanges and retried with backoff (``backoff``); one that could not
be reached is first asked whether it answers, outside the store's cycle, so it holds up neither the
store's other remotes nor its local commits. Each store is served by one daemon whatever config names it
(``store.locks``). SIGTERM sets the stop event: running git is killed, cycles unwind, what they cut short
is recovered at the next start as after ``kill -9`` (DESIGN I7), and the daemon exits within
``STOP_DEADLINE_S`` whatever its stores are doing.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Collection
from contextlib import suppress
from pathlib import Path
from types import FrameType

from memsync.base.paths import config_path
from memsync.base.wording import plural
from memsync.config.file import Config
from memsync.cycle.report import EXIT_OK, log_report
from memsync.cycle.session import Session
from memsync.daemon.backoff import CAP_S, Remotes
from memsync.daemon.debounce import Debouncer
from memsync.daemon.instance import instance_lock, sd_notify
from memsync.daemon.remotedirs import reaction_spread, remote_dirs, remote_moved
from memsync.daemon.served import ServedStore
from memsync.daemon.watch import Watcher, WatchEvent
from memsync.daemon.watch_targets import stores_for, watch_targets
from memsync.daemon.workers import CycleDone, Probed, Workers
from memsync.errors import MemsyncError
from memsync.hosts.arrivals import Arrivals
from memsync.store.locks import StoreGuard
from memsync.tracks.resolve import load_tracks
from memsync.tracks.tracked import tracks_stale

log = logging.getLogger(__name__)

# After an unexpected error in the loop itself (not in a cycle), so a persistent one cannot spin.
LOOP_ERROR_PAUSE_S = 1.0
# For stores whose remotes are all watched local paths, the pull timer only backs up the watches.
SAFETY_PULL_FACTOR = 6
# After SIGTERM: how long the cycles cut short get to unwind, and when the process exits regardless.
STOP_JOIN_S = 3.0
STOP_DEADLINE_S = 4.5


_Event = WatchEvent | CycleDone | Probed | None


class Daemon:
    """One daemon process's loop; build with a config file path and call :meth:`run`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config: Config = load_tracks(path)
        # Signal handlers put on it: a SimpleQueue's put is reentrant, while a Queue's lock, held by the get
        # a handler interrupted, would deadlock the main thread (and SIGTERM would only end at the deadline).
        self.events: queue.SimpleQueue[_Event] = queue.SimpleQueue()
        self.stop = threading.Event()
        self.workers = Workers(self.events.put, self.stop, Session())
        self.stopping = False
        self.reload_requested = False
        self.states: dict[str, ServedStore] = {}
        self.next_pull = time.monotonic()
        # The stores whose start-up cycle has not ended yet; None once all have.
        self._starting: set[str] | None = set()
        self.arrivals = Arrivals()  # agent hosts installed while the daemon runs, named once
        self._sync_states()

    def _sync_states(self) -> None:
        for name, store in self.config.stores.items():
            state = self.states.get(name)
            if state is None or state.guard.store != store.path:
                if state is not None:
                    state.guard.release()
                debouncer = Debouncer(self.config.debounce_s, self.config.max_delay_s)
                state = self.states[name] = ServedStore(
                    debouncer, StoreGuard(name, store.path, self.path), Remotes(name)
                )
            state.follow(self.config, store, reaction_spread(self.config.host))
        for name in set(self.states) - set(self.config.stores):
            self.states.pop(name).guard.release()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            self.reload_requested = True
        elif signum == signal.SIGUSR1:
            for state in self.states.values():
                state.request()
        else:
            # One stop request is enough; a second TERM during interpreter shutdown (when Python has
            # restored the default handler) would kill the process mid-exit.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            self.stopping = True
            self.stop.set()
            deadline = threading.Timer(STOP_DEADLINE_S, _give_up)
            deadline.daemon = True
            deadline.start()
        self.events.put(None)

    def run(self) -> int:
        """Run until SIGTERM/SIGINT (exit 0). Raises ``MemsyncError`` when another daemon serves one of
        the stores."""
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
            signal.signal(signum, self._on_signal)
        try:
            for name, store in self.config.stores.items():
                holder = self.states[name].guard.take()
                if holder is not None:
                    raise MemsyncError(
                        f"cannot start the daemon: store {name!r} ({store.path}) is served by another "
                        f"daemon ({holder}). Stop that one first, or name another store path in {self.path}"
                    )
            with Watcher(self.events.put) as watcher:
                self._serve(watcher)
        finally:
            for state in self.states.values():
                state.guard.release()
        sd_notify("STOPPING=1")
        log.info("memsync daemon stopped")
        return EXIT_OK

    def _serve(self, watcher: Watcher) -> None:
        watcher.set_targets(*watch_targets(self.config))
        self._recheck_layout()
        log.info(
            "watching %s for %s (config %s)",
            plural(len(watcher.watched_dirs), "directory", "directories"),
            plural(len(self.config.stores), "store"),
            self.path,
        )
        if not self.config.stores:
            log.warning("no stores in %s: nothing is synced. Run `memsync init` to create one", self.path)
        sd_notify("READY=1")
        # Start-up cycles: reconcile and commit local work before any merge.
        self._starting = set(self.config.stores)
        for name in self.config.stores:
            self._start_cycle(name, "start", list(self.config.stores[name].remotes))
        self._started("")
        while not self.stopping:
            try:
                self._wait_and_dispatch(watcher)
            except Exception:  # nothing may end the daemon but a stop signal
                log.exception("daemon loop error; continuing")
                time.sleep(LOOP_ERROR_PAUSE_S)
        # Cut short by the stop event, the running cycles unwind; what they leave is recovered on start.
        until = time.monotonic() + STOP_JOIN_S
        while any(state.busy for state in self.states.values()) and time.monotonic() < until:
            with suppress(queue.Empty):
                self._handle(self.events.get(timeout=0.1))

    def _started(self, name: str) -> None:
        """Store ``name``'s cycle ended: once every start-up cycle has, the pull timer starts."""
        if self._starting is None:
            return
        self._starting.discard(name)
        if not self._starting:
            self._starting = None
            log.info("start-up cycle done")
            self.next_pull = time.monotonic() + self.config.pull_interval_s

    def _deadline(self) -> float:
        """The nearest time something is due: the pull timer or a store's (``ServedStore.deadlines``)."""
        deadlines = [self.next_pull]
        for state in self.states.values():
            deadlines.extend(state.deadlines())
        return min(deadlines)

    def _wait_and_dispatch(self, watcher: Watcher) -> None:
        timeout = max(0.0, self._deadline() - time.monotonic())
        batch: list[_Event] = []
        with suppress(queue.Empty):
            batch.append(self.events.get(timeout=timeout))
            while True:
                batch.append(self.events.get_nowait())
        if any(isinstance(event, WatchEvent) and event.source == "layout" for event in batch):
            self.reload_requested = True  # a project memory folder appeared or went: the tracks change
        if self.reload_requested:
            self._reload(watcher)
        if any(isinstance(event, WatchEvent) for event in batch):
            watcher.refresh()
        for event in batch:
            self._handle(event)
        if self.stopping:
            return
        for state in self.states.values():
            if state.guard.check():
                state.reconcile()
        now = time.monotonic()
        pull = self._starting is None and now >= self.next_pull
        if pull:
            self.next_pull = now + self.config.pull_interval_s
            for line in self.arrivals.new():
                log.info("%s", line)
        for name, state in self.states.items():
            if not state.busy and state.guard.served:
                self._dispatch(name, state, now, pull)

    def _handle(self, event: _Event) -> None:
        if isinstance(event, CycleDone):
            self._cycle_done(event)
        elif isinstance(event, Probed):
            self._probed(event)
        elif isinstance(event, WatchEvent) and event.source != "layout":
            for name in stores_for(self.config, event):
                state = self.states[name]
                if event.source == "remote":
                    state.remote_pushes.poke(event.at)
                else:
                    state.debouncer.poke(event.at)
                    state.note_change(Path(event.path), event.doubt)

    def _dispatch(self, name: str, state: ServedStore, now: float, pull: bool) -> None:
        due = state.remote_deadline()
        remote = due is not None and now >= due
        if remote and not remote_moved(self.config.stores[name]):
            # Our own push moved the remote's ref: nothing new to fetch.
            state.remote_pushes.take()
            remote = False
        if remote:  # a sign of life: remotes backing off are tried again at once
            state.remotes.sign_of_life()
        retry = state.backoff.due(now)
        if state.failing and not retry:
            # The last cycle failed as a whole: only the backoff timer tries again (pending events wait
            # for it), so a broken store is not hammered at the pull interval.
            return
        probe, came_back = state.remotes.due(now)
        for remote_name in probe:
            self.workers.probe(name, self.config, self.config.stores[name], remote_name)
        polled = pull and self._pull_matters(name, state, now)
        local = state.debouncer.due(now)
        if local and state.only_echoes():
            log.debug("store %s: the files changed are as its own delivery left them: no cycle", name)
            local = False
        reasons = [
            why
            for why, hit in (
                ("remote refs changed", remote),
                ("retry", retry),
                ("local changes", local),
                ("pull timer", polled),
                ("tracks added", state.tracks_added),
                ("a remote is tried again", came_back),
                ("sync requested", state.requested),
            )
            if hit
        ]
        if reasons:
            self._start_cycle(name, ", ".join(reasons), state.remotes.exchanged())

    def _pull_matters(self, name: str, state: ServedStore, now: float) -> bool:
        """Whether the pull timer should run a cycle of store ``name`` now.

        A remote reached over the network can only be polled. Remotes that are local paths have their refs
        watched, and local changes are watched too, so for a store with only such remotes (or none) the
        timer is a safety net for a missed event: it runs every SAFETY_PULL_FACTOR pull intervals, or at
        once when a remote's head differs from what the store fetched and no watch event of that remote
        waits for its own deadline (idle cycles cost CPU)."""
        store = self.config.stores[name]
        if len(remote_dirs(store)) < len(store.remotes):
            return True
        safety = SAFETY_PULL_FACTOR * self.config.pull_interval_s
        if now - state.last_cycle >= safety:
            return True
        return not state.remote_pushes.pending and remote_moved(store)

    def _reload(self, watcher: Watcher) -> None:
        self.reload_requested = False
        before = {name: set(store.tracks) for name, store in self.config.stores.items()}
        try:
            self.config = load_tracks(self.path)
        except MemsyncError as exc:
            log.error("config not reloaded, keeping the previous one: %s", exc)
            return
        self._sync_states()
        for name, store in self.config.stores.items():
            self.states[name].doubt()  # tracks may map other paths now
            if set(store.tracks) - before.get(name, set()):
                # Nothing else would publish what a newly tracked folder already holds until a file in it
                # changed: reconcile every track now (a new track's files may be in the store already).
                self.states[name].reconcile(tracks_added=True)
        watcher.set_targets(*watch_targets(self.config))
        self._recheck_layout()
        log.info(
            "config reloaded: %s, %s",
            plural(len(self.config.stores), "store"),
            plural(len(watcher.watched_dirs), "watched directory", "watched directories"),
        )

    def _recheck_layout(self) -> None:
        """Reload again when a project memory folder appeared in a host root after the config was read
        but before the root was watched (its event came first), or a merge brought a new project's memory
        into the store (``tracked.tracks_stale``)."""
        for store in self.config.stores.values():
            if tracks_stale(store.path, store.host_roots, [track.live for track in store.tracks]):
                self.reload_requested = True
                self.events.put(None)
                return

    def _start_cycle(self, name: str, reason: str, remotes: Collection[str]) -> None:
        state = self.states[name]
        store_cfg = self.config.stores[name]
        left_out = len(store_cfg.remotes) - len(remotes)
        log.debug(
            "store %s: cycle (%s)%s", name, reason, f", {left_out} remote(s) left out" if left_out else ""
        )
        changed, reconcile = state.begin_cycle(time.monotonic(), len(remotes) == len(store_cfg.remotes))
        state.remotes.taken(remotes)
        self.workers.cycle(name, self.config, store_cfg, remotes, reconcile, changed)

    def _cycle_done(self, done: CycleDone) -> None:
        state = self.states.get(done.store)
        if state is None:  # the store left the config meanwhile
            return
        state.cycle_ended(time.monotonic())
        if done.report is None:
            state.doubt()  # what the cycle took may not have been synced
            if done.error is not None:
                self._failed(done.store, state, done.error)
            self._started(done.store)
            return
        log_report(done.store, done.report)
        self._recheck_layout()
        state.remotes.record(done.report.remotes, time.monotonic(), self._cap())
        if state.succeeded():
            log.info("store %s: sync works again", done.store)
        self._started(done.store)

    def _cap(self) -> float:
        return max(CAP_S, self.config.pull_interval_s)

    def _probed(self, probed: Probed) -> None:
        state = self.states.get(probed.store)
        if state is not None:
            state.remotes.probed(probed.remote, probed.problem, time.monotonic(), self._cap())

    def _failed(self, name: str, state: ServedStore, message: str) -> None:
        again, retry_in = state.failed(time.monotonic(), self._cap())
        if not again:
            log.error("store %s: sync cycle failed: %s (retrying with backoff)", name, message)
        else:
            log.debug("store %s: sync cycle failed again: %s", name, message)
        log.debug("next retry in %.1f s", retry_in)


def _give_up() -> None:
    """The stop deadline passed with something still running (a git that ignores SIGKILL on a dead
    mount, a wait inside SQLite): exit now, as ``kill -9`` would; the next start recovers."""
    log.error("memsync daemon: not stopped within %.1f s of SIGTERM; exiting now", STOP_DEADLINE_S)
    logging.shutdown()
    os._exit(EXIT_OK)


def run_daemon(path: Path | None = None) -> int:
    """Run the memsync daemon for the config file ``path`` (default: ``config_path()``): see the module
    docstring. Holds the lock of that config and the daemon lock of each of its stores (``MemsyncError``
    naming the daemon holding one: PID and config). Returns 0 after SIGTERM/SIGINT, within
    ``STOP_DEADLINE_S``; SIGHUP reloads the config (a store that gained tracks then runs a full-reconcile
    cycle at once), and so does a project memory folder appearing in a watched host root; SIGUSR1 (an
    agent host's hook) runs a cycle of every store now."""
    path = path or config_path()
    daemon = Daemon(path)
    with instance_lock(path):
        return daemon.run()

"""The long-running sync loop: single instance, signals, watch events, pull timer, backoff (issue 4 "Daemon";
DESIGN "One sync cycle").

One thread owns everything but the observers: it waits on the event queue with a timeout set by the
nearest deadline (debounced events, pull timer, retry after a failure) and runs cycles one at a time.
The observers' handlers only put ``WatchEvent``s on the queue.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import filelock

from memsync.config import Config, StoreConfig, config_path, load_config
from memsync.cycle import CycleReport, remote_error, run_cycle
from memsync.errors import MemsyncError
from memsync.hosts import claude_code
from memsync.instance import instance_stem, pid_file, read_pid
from memsync.refs import read_ref
from memsync.watch import Debouncer, Watcher, WatchEvent, remote_git_dir
from memsync.wording import plural

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_NOT_PUSHED = 75
EXIT_ERROR = 1
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 300.0
# A push to a local-path remote is complete once its ref is renamed into place; a short settle keeps the
# few events of one push (ref, reflog, packed-refs) in one cycle.
REMOTE_SETTLE_S = 0.05
INSTANCE_WAIT_S = 1.0
# After an unexpected error in the loop itself (not in a cycle), so a persistent one cannot spin.
LOOP_ERROR_PAUSE_S = 1.0
# For stores whose remotes are all watched local paths, the pull timer only backs up the watches.
SAFETY_PULL_FACTOR = 6


@contextmanager
def instance_lock(path: Path) -> Iterator[None]:
    """Hold the one-daemon-per-config lock for config file ``path`` and record our PID while held.

    Raises ``MemsyncError`` naming the running daemon's PID when another daemon holds it.
    """
    stem = instance_stem(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    # A short wait, not none: `memsync status` probes this lock for an instant.
    lock = filelock.FileLock(stem.with_suffix(".lock"), timeout=INSTANCE_WAIT_S)
    try:
        lock.acquire()
    except filelock.Timeout:
        pid = read_pid(pid_file(path))
        who = f"PID {pid}" if pid else "another process"
        raise MemsyncError(
            f"cannot start the daemon: another one ({who}) is already running for {path}. "
            "Stop it first, or run `memsync sync` for a one-off cycle"
        ) from None
    try:
        pid_file(path).write_text(f"{os.getpid()}\n")
        yield
    finally:
        pid_file(path).unlink(missing_ok=True)
        lock.release()


def sd_notify(message: str) -> None:
    """Send ``message`` (e.g. "READY=1") to systemd's ``$NOTIFY_SOCKET``, if set; errors are logged only."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(message.encode(), address)
    except OSError as exc:
        log.debug("sd_notify %s failed: %s", message, exc)


@dataclass
class _StoreState:
    """Per-store timers: pending events, the next retry after a failure, what was last said about remotes."""

    debouncer: Debouncer
    remote_due: float | None = None
    failures: int = 0
    retry_at: float | None = None
    remote_errors: dict[str, str | None] = field(default_factory=dict)
    failing: bool = False
    reconciled: bool = False
    last_cycle: float = 0.0
    # A reload added tracks (or the store): their folders may already hold memory to publish.
    tracks_added: bool = False
    # An agent host's hook asked for a sync now (SIGUSR1).
    requested: bool = False


class Daemon:
    """One daemon process's loop; build with a config file path and call :meth:`run`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config: Config = load_config(path)
        self.events: queue.Queue[WatchEvent | None] = queue.Queue()
        self.stopping = False
        self.reload_requested = False
        self.states: dict[str, _StoreState] = {}
        self.next_pull = time.monotonic()
        self._sync_states()

    def _sync_states(self) -> None:
        for name in self.config.stores:
            state = self.states.get(name)
            if state is None:
                self.states[name] = _StoreState(Debouncer(self.config.debounce_s, self.config.max_delay_s))
            else:  # keep what is pending, with the new timings
                state.debouncer.debounce_s = self.config.debounce_s
                state.debouncer.max_delay_s = max(self.config.max_delay_s, self.config.debounce_s)
        for name in set(self.states) - set(self.config.stores):
            del self.states[name]

    def _targets(self) -> tuple[list[Path], list[Path], list[Path]]:
        tracked = [track.live for store in self.config.stores.values() for track in store.tracks]
        remotes = [d for store in self.config.stores.values() for d in _remote_dirs(store).values()]
        layout = [root.live for store in self.config.stores.values() for root in store.host_roots]
        return tracked, remotes, layout

    def _stores_for(self, event: WatchEvent) -> list[str]:
        path = Path(event.path)
        names: list[str] = []
        for name, store in self.config.stores.items():
            if event.source == "remote":
                dirs = _remote_dirs(store).values()
                if any(path.is_relative_to(d) or d.is_relative_to(path) for d in dirs):
                    names.append(name)
            elif any(path.is_relative_to(t.live) or t.live.is_relative_to(path) for t in store.tracks):
                names.append(name)
        return names or list(self.config.stores)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            self.reload_requested = True
        elif signum == signal.SIGUSR1:
            for state in self.states.values():
                state.requested = True
        else:
            # One stop request is enough; a second TERM during interpreter shutdown (when Python has
            # restored the default handler) would kill the process mid-exit.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            self.stopping = True
        self.events.put(None)

    def run(self, once: bool = False) -> int:
        """Run until SIGTERM/SIGINT (exit 0), or with ``once`` run one cycle per store and return its exit
        code (0 pushed, 75 committed but not pushed, 1 error)."""
        if once:
            return run_all(self.config)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
            signal.signal(signum, self._on_signal)
        watcher = Watcher(self.events.put)
        with watcher:
            watcher.set_targets(*self._targets())
            self._recheck_layout()
            log.info(
                "watching %s for %s (config %s)",
                plural(len(watcher.watched_dirs), "directory", "directories"),
                plural(len(self.config.stores), "store"),
                self.path,
            )
            sd_notify("READY=1")
            # Start-up cycle: reconcile and commit local work before any merge.
            for name in self.config.stores:
                if self.stopping:
                    break
                self._cycle(name, exchange=True, reason="start")
            log.info("start-up cycle done")
            self.next_pull = time.monotonic() + self.config.pull_interval_s
            while not self.stopping:
                try:
                    self._wait_and_dispatch(watcher)
                except Exception:  # nothing may end the daemon but a stop signal
                    log.exception("daemon loop error; continuing")
                    time.sleep(LOOP_ERROR_PAUSE_S)
        sd_notify("STOPPING=1")
        log.info("memsync daemon stopped")
        return EXIT_OK

    def _deadline(self) -> float:
        deadlines = [self.next_pull]
        for state in self.states.values():
            for due in (state.debouncer.deadline(), state.remote_due, state.retry_at):
                if due is not None:
                    deadlines.append(due)
        return min(deadlines)

    def _wait_and_dispatch(self, watcher: Watcher) -> None:
        timeout = max(0.0, self._deadline() - time.monotonic())
        batch: list[WatchEvent | None] = []
        with suppress(queue.Empty):
            batch.append(self.events.get(timeout=timeout))
            while True:
                batch.append(self.events.get_nowait())
        events = [event for event in batch if event is not None]
        if any(event.source == "layout" for event in events):
            self.reload_requested = True  # a project memory folder appeared or went: the tracks change
        if self.reload_requested:
            self._reload(watcher)
        if events:
            watcher.refresh()
        for event in (event for event in events if event.source != "layout"):
            for name in self._stores_for(event):
                state = self.states[name]
                if event.source == "remote":
                    due = event.at + REMOTE_SETTLE_S
                    state.remote_due = due if state.remote_due is None else min(state.remote_due, due)
                else:
                    state.debouncer.poke(event.at)
        if self.stopping:
            return
        now = time.monotonic()
        pull = now >= self.next_pull
        if pull:
            self.next_pull = now + self.config.pull_interval_s
        for name, state in self.states.items():
            remote = state.remote_due is not None and now >= state.remote_due
            if remote and state.retry_at is None and not self._remote_moved(name):
                # Our own push moved the remote's ref: nothing new to fetch.
                state.remote_due = None
                remote = False
            retry = state.retry_at is not None and now >= state.retry_at
            if state.failing and not retry:
                # The last cycle failed as a whole: only the backoff timer tries again (pending events
                # wait for it), so a broken store is not hammered at the pull interval.
                continue
            local = state.debouncer.due(now)
            polled = pull and self._pull_matters(name, state, now)
            reasons = [
                why
                for why, hit in (
                    ("remote refs changed", remote),
                    ("retry", retry),
                    ("local changes", local),
                    ("pull timer", polled),
                    ("tracks added", state.tracks_added),
                    ("sync requested", state.requested),
                )
                if hit
            ]
            if not reasons:
                continue
            # While a remote fails, only its backoff timer or a sign of life (its refs changed) retries the
            # exchange; local changes are still committed in between.
            backing_off = state.retry_at is not None and not (retry or remote)
            self._cycle(name, exchange=not backing_off, reason=", ".join(reasons))
            if self.stopping:
                return

    def _pull_matters(self, name: str, state: _StoreState, now: float) -> bool:
        """Whether the pull timer should run a cycle of store ``name`` now.

        A remote reached over the network can only be polled. Remotes that are local paths have their refs
        watched, and local changes are watched too, so for a store with only such remotes (or none) the
        timer is a safety net for a missed event: it runs every SAFETY_PULL_FACTOR pull intervals, or at
        once when a remote's head differs from what the store fetched (idle cycles cost CPU: issue 4)."""
        store = self.config.stores[name]
        if len(_remote_dirs(store)) < len(store.remotes):
            return True
        safety = SAFETY_PULL_FACTOR * self.config.pull_interval_s
        return now - state.last_cycle >= safety or self._remote_moved(name)

    def _remote_moved(self, name: str) -> bool:
        """True when a local-path remote of store ``name`` has a head the store has not fetched yet."""
        store = self.config.stores[name]
        ref = f"refs/heads/{store.branch}"
        for remote, git_dir in _remote_dirs(store).items():
            theirs = read_ref(git_dir, ref)
            if theirs != read_ref(store.path / ".git", f"refs/remotes/{remote}/{store.branch}"):
                return True
        return False

    def _reload(self, watcher: Watcher) -> None:
        self.reload_requested = False
        before = {name: set(store.tracks) for name, store in self.config.stores.items()}
        try:
            self.config = load_config(self.path)
        except MemsyncError as exc:
            log.error("config not reloaded, keeping the previous one: %s", exc)
            return
        self._sync_states()
        for name, store in self.config.stores.items():
            if set(store.tracks) - before.get(name, set()):
                # Nothing else would publish what a newly tracked folder already holds until a file in it
                # changed: reconcile every track now (a new track's files may be in the store already).
                self.states[name].tracks_added = True
                self.states[name].reconciled = False
        watcher.set_targets(*self._targets())
        self._recheck_layout()
        log.info(
            "config reloaded: %s, %s",
            plural(len(self.config.stores), "store"),
            plural(len(watcher.watched_dirs), "watched directory", "watched directories"),
        )

    def _recheck_layout(self) -> None:
        """Reload again when a project memory folder appeared in a host root after the config was read
        but before the root was watched (its event came before the watch)."""
        for store in self.config.stores.values():
            tracked = [track.live for track in store.tracks]
            if any(claude_code.memory_folders_differ(r.live, r.excludes, tracked) for r in store.host_roots):
                self.reload_requested = True
                self.events.put(None)
                return

    def _cycle(self, name: str, *, exchange: bool, reason: str) -> None:
        state = self.states[name]
        log.debug("store %s: cycle (%s)%s", name, reason, "" if exchange else ", local only: backing off")
        state.debouncer.take()
        state.tracks_added = False
        state.requested = False
        state.last_cycle = time.monotonic()
        if exchange:
            state.remote_due = None
        store_cfg = self.config.stores[name]
        try:
            report = run_cycle(self.config, store_cfg, exchange=exchange, full_reconcile=not state.reconciled)
            state.reconciled = True
        except MemsyncError as exc:
            self._failed(name, state, str(exc))
            return
        except Exception as exc:  # a failing cycle must never end the daemon
            log.exception("store %s: sync cycle failed unexpectedly", name)
            self._failed(name, state, repr(exc))
            return
        _log_report(name, report)
        if not exchange:
            return
        errors = {outcome.remote: remote_error(outcome) for outcome in report.remotes}
        self._log_remote_changes(name, state, errors)
        if any(errors.values()):
            self._schedule_retry(state)
        else:
            state.failures = 0
            state.retry_at = None
        if state.failing and report.ok:
            log.info("store %s: sync works again", name)
            state.failing = False

    def _failed(self, name: str, state: _StoreState, message: str) -> None:
        if not state.failing:
            log.error("store %s: sync cycle failed: %s (retrying with backoff)", name, message)
        else:
            log.debug("store %s: sync cycle failed again: %s", name, message)
        state.failing = True
        state.reconciled = False
        self._schedule_retry(state)

    def _schedule_retry(self, state: _StoreState) -> None:
        state.failures += 1
        cap = max(BACKOFF_CAP_S, self.config.pull_interval_s)
        delay = min(cap, BACKOFF_BASE_S * 2 ** (state.failures - 1))
        state.retry_at = time.monotonic() + delay
        log.debug("next retry in %.1f s", delay)

    @staticmethod
    def _log_remote_changes(name: str, state: _StoreState, errors: dict[str, str | None]) -> None:
        for remote, error in errors.items():
            before = state.remote_errors.get(remote)
            if error and not before:
                log.warning(
                    "store %s: remote %s failed, committing locally and retrying with backoff: %s",
                    name,
                    remote,
                    error,
                )
            elif before and not error:
                log.info("store %s: remote %s reachable again", name, remote)
            state.remote_errors[remote] = error


def _remote_dirs(store: StoreConfig) -> dict[str, Path]:
    """The git dirs of ``store``'s remotes that are local paths, by remote name."""
    dirs = {name: remote_git_dir(url, store.path) for name, url in store.remotes.items()}
    return {name: path for name, path in dirs.items() if path is not None}


def _log_report(name: str, report: CycleReport) -> None:
    if report.commit_message:
        log.info("store %s: committed %s", name, report.commit_message.splitlines()[0])
    for outcome in report.remotes:
        if outcome.merged:
            log.info("store %s: pulled from %s", name, outcome.remote)
        if outcome.pushed:
            log.info("store %s: pushed to %s", name, outcome.remote)
    for path in report.delivered:
        log.info("store %s: delivered %s", name, path)


def run_all(config: Config) -> int:
    """One cycle over every store of ``config`` (what `memsync sync` does); the exit code is 0 when
    everything is pushed, 75 when committed but something is not pushed, 1 when a cycle failed."""
    code = EXIT_OK
    for name, store_cfg in config.stores.items():
        try:
            report = run_cycle(config, store_cfg)
        except MemsyncError as exc:
            log.error("store %s: %s", name, exc)
            code = EXIT_ERROR
            continue
        _log_report(name, report)
        for outcome in report.remotes:
            if remote_error(outcome):
                log.warning("store %s: remote %s: %s", name, outcome.remote, outcome.message)
        if not report.ok and code == EXIT_OK:
            code = EXIT_NOT_PUSHED
    return code


def run_daemon(path: Path | None = None, once: bool = False) -> int:
    """Run the memsync daemon for the config file ``path`` (default: ``config_path()``).

    Holds the single-instance lock for that config (``MemsyncError`` naming the running daemon's PID if
    another holds it), watches every tracked path and local-path remote, and syncs on debounced events,
    on the pull timer and with capped exponential backoff after failures. Returns 0 after SIGTERM/SIGINT
    (the running cycle is finished first); SIGHUP reloads the config (a store that gained tracks then runs
    a full-reconcile cycle at once, publishing what they already hold), and so does a project memory
    folder appearing in a watched host root; SIGUSR1 (an agent host's hook) runs a cycle of every store
    now. With ``once`` it runs one cycle per
    store and returns that exit code (0, 75 or 1, as `memsync sync`).
    """
    path = path or config_path()
    daemon = Daemon(path)
    with instance_lock(path):
        return daemon.run(once=once)


def run_all_from(path: Path) -> int:
    """Load the config file ``path`` and run :func:`run_all` on it (the `memsync sync` command)."""
    return run_all(load_config(path))

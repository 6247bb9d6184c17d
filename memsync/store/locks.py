"""Who holds a store: the one daemon serving it, for the daemon's life, and the cycle running in it (DESIGN
"One sync cycle"; "Layers": instance).

Both locks live with the store, in its meta dir (``<store>/.git/memsync``), so they hold whatever config
names the store. Beside each lock a small record names its holder (PID and config file), so whoever finds
a lock held can say who holds it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import filelock

from memsync.base.git import Stopped
from memsync.base.paths import StoreLayout
from memsync.errors import MemsyncError

log = logging.getLogger(__name__)

DAEMON_LOCK = "daemon.lock"
CYCLE_LOCK = "cycle.lock"
# How often a cycle waiting for the store looks at its stop event (seconds).
_WAIT_STEP_S = 0.2


@dataclass(frozen=True)
class Holder:
    """The process holding a lock: its PID and the config file it runs with ("?" when not known)."""

    pid: int
    config: str

    def __str__(self) -> str:
        return f"PID {self.pid}, config {self.config}"


def _record(lock: Path) -> Path:
    return lock.with_suffix(".json")


def record_holder(lock: Path, config: Path | None) -> None:
    """Name this process (and ``config``) as the holder of ``lock``. Best effort: on a full disk the
    record is left as it was, since it only serves messages."""
    try:
        _record(lock).write_text(json.dumps({"pid": os.getpid(), "config": str(config or "?")}))
    except OSError as exc:
        log.debug("could not record the holder of %s: %s", lock, exc)


def read_holder(lock: Path) -> Holder | None:
    """Who last recorded holding ``lock``, None when nobody did (or the record is unreadable)."""
    try:
        data = json.loads(_record(lock).read_text())
        return Holder(int(data["pid"]), str(data["config"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def describe_holder(meta_dir: Path) -> str:
    """Who holds the store's cycle lock, in words: the store's daemon, or another memsync process."""
    cycle = read_holder(meta_dir / CYCLE_LOCK)
    if cycle is None:
        return "another memsync process"
    daemon = read_holder(meta_dir / DAEMON_LOCK)
    who = "the memsync daemon" if daemon is not None and daemon.pid == cycle.pid else "memsync"
    return f"{who} ({cycle})"


@contextmanager
def hold_cycle(
    meta_dir: Path,
    name: str,
    wait_s: float,
    *,
    config: Path | None = None,
    stop: threading.Event | None = None,
) -> Iterator[None]:
    """Hold store ``name``'s cycle lock (``meta_dir``/``CYCLE_LOCK``), recording this process and
    ``config`` as its holder. When another holds it, says so in a line naming the holder and waits up
    to ``wait_s`` seconds. Raises ``MemsyncError`` naming the holder when the wait ends, ``Stopped``
    when ``stop`` is set meanwhile."""
    path = meta_dir / CYCLE_LOCK
    lock = filelock.FileLock(path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        # a warning: a one-shot command (which logs INFO only with -v) must say why it does not return
        log.warning("store %s: waiting for %s to finish its cycle", name, describe_holder(meta_dir))
        waited = 0.0
        while True:
            try:
                lock.acquire(timeout=_WAIT_STEP_S)
                break
            except filelock.Timeout:
                waited += _WAIT_STEP_S
                if stop is not None and stop.is_set():
                    raise Stopped from None
                if waited >= wait_s:
                    raise MemsyncError(
                        f"cannot sync store {name!r}: {describe_holder(meta_dir)} held it for "
                        f"{wait_s:.0f} s. Check `memsync status` and retry"
                    ) from None
    try:
        record_holder(path, config)
        yield
    finally:
        lock.release()


class DaemonLock:
    """The lock that keeps one daemon per store (``<meta dir>/daemon.lock``), held for the daemon's life
    whatever config names the store. ``vanished`` tells when the store was deleted (or deleted and made
    again) under the daemon: the lock file it holds is then no longer the store's."""

    def __init__(self, meta_dir: Path, config: Path) -> None:
        self.path = meta_dir / DAEMON_LOCK
        self.config = config
        self._lock = filelock.FileLock(self.path)
        self._inode: tuple[int, int] | None = None

    @property
    def held(self) -> bool:
        """True while this daemon holds the lock."""
        return self._inode is not None

    def acquire(self) -> Holder | None:
        """Take the lock: None once held, else who holds it (PID and config; PID 0 when unknown)."""
        try:
            self._lock.acquire(timeout=0)
        except filelock.Timeout:
            return read_holder(self.path) or Holder(0, "?")
        info = self.path.stat()
        self._inode = (info.st_dev, info.st_ino)
        record_holder(self.path, self.config)
        return None

    def release(self) -> None:
        """Let the lock go (if held)."""
        if self._inode is not None:
            self._inode = None
            self._lock.release(force=True)

    def vanished(self) -> bool:
        """True when the lock is held but its file is gone or is another file now."""
        if self._inode is None:
            return False
        try:
            info = self.path.stat()
        except OSError:
            return True
        return (info.st_dev, info.st_ino) != self._inode


class StoreGuard:
    """One store as a daemon serves it: its ``DaemonLock`` taken once the store exists, dropped (and
    reported) when the store vanishes under the daemon, and another daemon holding it reported once. A
    store with no repository (yet, or any more) is served too: its cycles fail, saying what is missing,
    and are retried until it is there."""

    def __init__(self, name: str, store: Path, config: Path) -> None:
        self.name = name
        self.store = store
        self.config = config
        self.lock: DaemonLock | None = None
        self.refused = False  # another daemon holds the lock (said once)
        self.vanished = False  # the store went away under this daemon (said once)

    @property
    def served(self) -> bool:
        """True when this daemon syncs the store: it holds its lock, or no store is there."""
        return self.lock is not None or not StoreLayout(self.store).exists

    def take(self) -> Holder | None:
        """Take the lock if the store's repository exists: None when held (or no store there yet),
        else who holds it."""
        if self.lock is not None or not StoreLayout(self.store).exists:
            return None
        meta_dir = StoreLayout(self.store).meta_dir
        meta_dir.mkdir(parents=True, exist_ok=True)
        lock = DaemonLock(meta_dir, self.config)
        holder = lock.acquire()
        if holder is None:
            self.lock = lock
        return holder

    def check(self) -> bool:
        """Notice a store deleted (or deleted and made again) under the daemon, take the lock of one that
        appeared, report one another daemon serves. True when the store was (re)taken: its next cycle
        must open it anew."""
        if self.lock is not None and self.lock.vanished():
            log.error(
                "store %s: %s vanished while this daemon served it (deleted, moved, or deleted and made "
                "again); served again once a store is there and no other daemon serves it",
                self.name,
                self.store,
            )
            self.release()
            self.vanished = True
        holder = self.take()
        if holder is not None and not self.refused:
            log.error(
                "store %s: %s is served by another daemon (%s); leaving it alone",
                self.name,
                self.store,
                holder,
            )
        self.refused = holder is not None
        if self.lock is not None and self.vanished:
            log.warning("store %s: a store is at %s again; syncing it", self.name, self.store)
            self.vanished = False
            return True
        return False

    def release(self) -> None:
        """Let the lock go (if held)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

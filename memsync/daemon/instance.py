"""One daemon per config file: its lock and PID file under memsync's state directory, whether it is
alive, and telling systemd the daemon is ready (DESIGN "Layers": instance). The lock that keeps one
daemon per store lives with the store: ``memsync.store.locks``.

Light (no store, no watchdog): the agent-host hooks ask it in a few milliseconds whether a daemon
runs, to signal it instead of syncing themselves.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from memsync.base.paths import state_dir
from memsync.errors import MemsyncError

log = logging.getLogger(__name__)

INSTANCE_WAIT_S = 1.0


def instance_stem(path: Path) -> Path:
    """The state-dir path, without suffix, of the daemon instance for config file ``path`` (its
    ``.lock`` and ``.pid`` files)."""
    # resolve(): the same config reached through '..' or a symlink is the same daemon.
    digest = hashlib.sha256(str(path.expanduser().resolve()).encode()).hexdigest()[:16]
    return state_dir() / f"daemon-{digest}"


def pid_file(path: Path) -> Path:
    """The file holding the PID of the daemon running for the config file ``path``."""
    return instance_stem(path).with_suffix(".pid")


def running_daemon_pid(path: Path) -> int | None:
    """The PID of the live daemon for config file ``path``, or None when none runs.

    "Live" means the instance lock is held: a pid file left by a killed daemon does not count.
    """
    held = instance_stem(path).with_suffix(".lock")
    if not held.exists():  # a live daemon holds its lock file open: none, no daemon (and none made here)
        return None
    lock = filelock.FileLock(held, timeout=0)
    try:
        with lock:
            return None
    except filelock.Timeout:
        return read_pid(pid_file(path))


def read_pid(path: Path) -> int | None:
    """The PID written in the file ``path``, None when it is missing or not a number."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


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
            "Stop it first (`memsync stop`), or run `memsync sync` for a one-off cycle"
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

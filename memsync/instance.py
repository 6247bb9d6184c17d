"""One daemon per config file: its lock and PID file under memsync's state directory, and telling systemd
the daemon is ready (issue 4 "Daemon"; DESIGN "Layers": instance). The lock that keeps one daemon per
store lives with the store: ``memsync.storelock``."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock
import platformdirs

from memsync.errors import MemsyncError

log = logging.getLogger(__name__)

INSTANCE_WAIT_S = 1.0


def state_dir() -> Path:
    """memsync's per-user state directory (``$XDG_STATE_HOME/memsync``): daemon locks and pid files."""
    return platformdirs.user_state_path("memsync")


def _instance_stem(path: Path) -> Path:
    # resolve(): the same config reached through '..' or a symlink is the same daemon.
    digest = hashlib.sha256(str(path.expanduser().resolve()).encode()).hexdigest()[:16]
    return state_dir() / f"daemon-{digest}"


def pid_file(path: Path) -> Path:
    """The file holding the PID of the daemon running for the config file ``path``."""
    return _instance_stem(path).with_suffix(".pid")


def running_daemon_pid(path: Path) -> int | None:
    """The PID of the live daemon for config file ``path``, or None when none runs.

    "Live" means the instance lock is held: a pid file left by a killed daemon does not count.
    """
    lock = filelock.FileLock(_instance_stem(path).with_suffix(".lock"), timeout=0)
    try:
        with lock:
            return None
    except filelock.Timeout:
        return _read_pid(pid_file(path))


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


@contextmanager
def instance_lock(path: Path) -> Iterator[None]:
    """Hold the one-daemon-per-config lock for config file ``path`` and record our PID while held.

    Raises ``MemsyncError`` naming the running daemon's PID when another daemon holds it.
    """
    stem = _instance_stem(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    # A short wait, not none: `memsync status` probes this lock for an instant.
    lock = filelock.FileLock(stem.with_suffix(".lock"), timeout=INSTANCE_WAIT_S)
    try:
        lock.acquire()
    except filelock.Timeout:
        pid = _read_pid(pid_file(path))
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

"""Which daemon runs for a config: its pid file and instance lock paths, and whether it is alive.

Light (no GitPython, no watchdog): the agent-host hooks ask it in a few milliseconds whether a daemon
runs, to signal it instead of syncing themselves. The daemon takes the lock (``memsync.daemon``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import filelock
import platformdirs

__all__ = ["instance_stem", "pid_file", "read_pid", "running_daemon_pid", "state_dir"]


def state_dir() -> Path:
    """memsync's per-user state directory (``$XDG_STATE_HOME/memsync``): daemon locks and pid files."""
    return platformdirs.user_state_path("memsync")


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
    lock = filelock.FileLock(instance_stem(path).with_suffix(".lock"), timeout=0)
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

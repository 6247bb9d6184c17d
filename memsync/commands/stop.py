"""`memsync stop`: stop the daemon running for a config, whatever started it (the user service, a shell's
`memsync up` or `memsync daemon`), found through its instance lock and PID file (``instance``).

SIGTERM is how every starter stops it: the daemon exits 0 within ``daemon.STOP_DEADLINE_S``, and neither
systemd (``Restart=on-failure``) nor launchd (``KeepAlive: SuccessfulExit false``) restarts a clean exit.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import psutil

from memsync.base.paths import config_path
from memsync.commands import service
from memsync.commands.config_edits import Report
from memsync.daemon.instance import running_daemon_pid
from memsync.errors import MemsyncError

# The daemon exits within 4.5 s of SIGTERM; the rest is room for a loaded machine.
STOP_WAIT_S = 20.0
_POLL_S = 0.05


def stop(path: Path | None = None, wait_s: float = STOP_WAIT_S) -> Report:
    """Stop the daemon of the config file ``path`` (default ``config_path()``) and wait, at most
    ``wait_s``, until its instance lock is free and its process gone. No daemon running is not an error
    (the report says so; ``changed`` False). Raises ``MemsyncError`` when it cannot be signalled or is
    still there after ``wait_s``."""
    path = config_path() if path is None else path
    pid = running_daemon_pid(path)
    if pid is None:
        return Report((f"no memsync daemon is running for {path}",), False)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended on its own meanwhile
    except OSError as exc:
        raise MemsyncError(
            f"cannot stop the daemon (PID {pid}): {exc}. Stop it as the user that started it"
        ) from None
    deadline = time.monotonic() + wait_s
    # The lock is free a moment before the process has ended: wait for both.
    while running_daemon_pid(path) is not None or not _ended(pid):
        if time.monotonic() > deadline:
            raise MemsyncError(
                f"cannot stop the daemon (PID {pid}): it still runs {wait_s:.0f} s after SIGTERM. "
                f"Kill it: `kill -9 {pid}` (the next start recovers)"
            )
        time.sleep(_POLL_S)
    lines = [f"stopped the memsync daemon (PID {pid})"]
    # Only a reachable service manager starts it again: without one the unit is a file and nothing more.
    if service.unit_path().exists() and (sys.platform == "darwin" or service.user_systemd() is None):
        lines.append(
            "the user service starts it again at the next login: `memsync service uninstall` removes it"
        )
    return Report(tuple(lines), True)


def _ended(pid: int) -> bool:
    """True when process ``pid`` is gone, or a zombie its parent has not reaped yet."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True

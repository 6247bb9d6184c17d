"""Running one git command: non-interactive, bounded in time, stoppable (DESIGN "One sync cycle" step 4:
"Git runs non-interactively with timeouts"; I7).

A timeout or a stop kills git and everything it started (ssh, a remote helper, a merge driver): a
grandchild holding git's output pipes open can never keep the caller waiting. git stays in the caller's
process group, so whatever kills the caller's group (a service manager, Ctrl-C) ends git too. A stop is
an ``Event`` the daemon sets on SIGTERM; a git running or about to start then raises :class:`Stopped`, and
what the killed git left (a lock, a half-written merge) is recovered by the next start as after
``kill -9``.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

# How often a waiting caller looks at its stop event; git commands that finish sooner return at once.
POLL_S = 0.2
# ssh's verdict on a changed host key, after a banner of '@' lines and warnings that say less.
_HOST_KEY_CHANGED = re.compile(r"^Host key for \S+ has changed")
# git's ssh failure ends with lines of advice that say less than the line before them.
_BOILERPLATE = (
    "Could not read from remote repository",
    "Please make sure you have the correct access",
    "and the repository exists",
)


class Stopped(BaseException):
    """The process is stopping (the daemon got SIGTERM): the git command was killed, or not started.

    A ``BaseException``: no ``except Exception`` on the way may take it for a failed step and go on."""


@dataclass(frozen=True)
class Result:
    """A finished git command: exit ``status`` (-9 when killed), decoded ``out`` and ``err``, and
    ``timed_out``: the timeout in seconds when git was killed for passing it, else None."""

    status: int
    out: str
    err: str
    timed_out: float | None = None

    @property
    def reason(self) -> str:
        """The most telling line of stderr, without git's ``fatal:``/``error:`` prefix."""
        if self.timed_out is not None:
            return f"no answer within {self.timed_out:g} s"
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        changed = next((line for line in lines if _HOST_KEY_CHANGED.match(line)), None)
        if changed is not None:
            offending = next((line for line in lines if line.startswith("Offending ")), None)
            where = f" ({offending[0].lower()}{offending[1:]})" if offending else ""
            return f"{changed.rstrip('.')}{where}"
        telling = [line for line in lines if not any(text in line for text in _BOILERPLATE)] or lines
        for line in telling:
            for prefix in ("fatal:", "error:"):
                if line.startswith(prefix):
                    return line.removeprefix(prefix).strip()
        return telling[0] if telling else f"git exited with status {self.status}"


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stop: threading.Event | None = None,
    stdin: bytes | None = None,
) -> Result:
    """Run ``git ARGS`` in ``cwd`` with ``env`` over the inherited environment (messages in English,
    which callers read), feeding it ``stdin``; kill it and everything it started after ``timeout``
    seconds (``Result.timed_out``). Raises :class:`Stopped` when ``stop`` is set before or while it runs,
    ``OSError`` when git cannot be started; any other exception while waiting (Ctrl-C) kills git first."""
    if stop is not None and stop.is_set():
        raise Stopped
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, "LC_ALL": "C", "LANGUAGE": "C", **env},
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    waited = 0.0
    feed = stdin
    try:
        while True:
            step = min(POLL_S, max(timeout - waited, 0.0))
            try:
                out, err = proc.communicate(feed, timeout=step)
                break
            except subprocess.TimeoutExpired:
                feed = None  # given once; communicate keeps feeding it
                waited += step
                if stop is not None and stop.is_set():
                    raise Stopped from None
                if waited >= timeout:
                    _kill(proc)
                    out, err = proc.communicate()
                    return Result(-9, _text(out), _text(err), timed_out=timeout)
    except BaseException:
        _kill(proc)
        raise
    return Result(proc.returncode, _text(out), _text(err))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL git and every process it started, and reap git. All are stopped first, so none can start
    another that the kill would miss."""
    try:
        tree = [psutil.Process(proc.pid)]
        tree[0].suspend()
        for child in tree[0].children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.suspend()
                tree.append(child)
        tree += [late for late in tree[0].children(recursive=True) if late not in tree]
    except psutil.Error:  # git ended meanwhile; its children, if any, are reparented and end with it
        pass
    else:
        for process in reversed(tree):
            with contextlib.suppress(psutil.Error):
                process.kill()
    proc.wait()


def _text(data: bytes | None) -> str:
    # surrogateescape: a path git prints that is not UTF-8 goes back to git as the same bytes.
    return (data or b"").decode("utf-8", "surrogateescape")

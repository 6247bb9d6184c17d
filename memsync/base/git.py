"""The one place memsync starts git: non-interactive, bounded in time, stoppable (DESIGN "One sync cycle"
step 4: "Git runs non-interactively with timeouts"; I7).

A timeout or a stop kills git and everything it started (ssh, a remote helper, a merge driver): a
grandchild holding git's output pipes open can never keep the caller waiting. git stays in the caller's
process group, so whatever kills the caller's group (a service manager, Ctrl-C) ends git too. A stop is
an ``Event`` the daemon sets on SIGTERM; a git running or about to start then raises :class:`Stopped`, and
what the killed git left (a lock, a half-written merge) is recovered by the next start as after
``kill -9``. The merge driver imports this module for ``git merge-file``: it imports nothing heavy at
module level.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memsync.errors import MemsyncError

# An object name as git prints it: SHA-1 (40 hex digits) or SHA-256 (64).
OBJECT_ID = "[0-9a-f]{40}(?:[0-9a-f]{24})?"
# How often a waiting caller looks at its stop event; git commands that finish sooner return at once.
POLL_S = 0.2
# Another process writing the same git config (`memsync init`, a user's `git config`) holds its lock for
# milliseconds, and git does not wait for it: a `git config` write that finds it held is tried again.
CONFIG_LOCK_WAIT_S = 5.0
_CONFIG_LOCKED = b"could not lock config file"
# Longest a stalled HTTP transfer is waited for (seconds); ssh's own limits are below.
HTTP_STALL_CAP_S = 30
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
    """A finished git command: exit ``status`` (-9 when killed), raw ``stdout`` and ``stderr``, and
    ``timed_out``: the timeout in seconds when git was killed for passing it, else None."""

    status: int
    stdout: bytes
    stderr: bytes
    timed_out: float | None = None

    @functools.cached_property
    def out(self) -> str:
        """stdout decoded; surrogateescape: a path git prints that is not UTF-8 goes back as the same
        bytes."""
        return self.stdout.decode("utf-8", "surrogateescape")

    @functools.cached_property
    def err(self) -> str:
        """stderr decoded like ``out``."""
        return self.stderr.decode("utf-8", "surrogateescape")

    @property
    def ok(self) -> bool:
        """True when git exited with status 0."""
        return self.status == 0

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


class GitError(MemsyncError):
    """A git command failed where the user must act: the one-line ``MemsyncError`` message, plus the
    command's ``command`` (its arguments after ``git``), exit ``status`` and ``stderr``."""

    def __init__(self, message: str, command: Sequence[str], status: int, stderr: str) -> None:
        super().__init__(message)
        self.command = tuple(command)
        self.status = status
        self.stderr = stderr


def run(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
    stop: threading.Event | None = None,
    stdin: bytes | None = None,
) -> Result:
    """Run ``git ARGS`` in ``cwd`` with ``env`` over the inherited environment (messages in English,
    which callers read), feeding it ``stdin``; kill it and everything it started after ``timeout``
    seconds (``Result.timed_out``). A ``git config`` write that finds the config locked by another
    process is tried again for up to ``CONFIG_LOCK_WAIT_S`` seconds (a failed lock changed nothing).
    Raises :class:`Stopped` when ``stop`` is set before or while it runs, ``OSError`` when git cannot be
    started; any other exception while waiting (Ctrl-C) kills git first."""
    deadline = time.monotonic() + CONFIG_LOCK_WAIT_S
    while True:
        result = _run_once(args, cwd, env, timeout, stop, stdin)
        locked = bool(args) and args[0] == "config" and _CONFIG_LOCKED in result.stderr
        if not locked or time.monotonic() > deadline:
            return result
        time.sleep(0.05)


def _run_once(
    args: Sequence[str],
    cwd: Path | None,
    env: Mapping[str, str] | None,
    timeout: float,
    stop: threading.Event | None,
    stdin: bytes | None,
) -> Result:
    if stop is not None and stop.is_set():
        raise Stopped
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, "LC_ALL": "C", "LANGUAGE": "C", **(env or {})},
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    waited = 0.0
    feeder = _feed(proc, stdin) if stdin is not None else None
    try:
        while True:
            step = min(POLL_S, max(timeout - waited, 0.0))
            try:
                out, err = proc.communicate(timeout=step)
                break
            except subprocess.TimeoutExpired:
                waited += step
                if stop is not None and stop.is_set():
                    raise Stopped from None
                if waited >= timeout:
                    _kill(proc)
                    out, err = proc.communicate()
                    return Result(-9, out or b"", err or b"", timed_out=timeout)
    except BaseException:
        _kill(proc)
        raise
    finally:
        if feeder is not None:
            feeder.join()
    return Result(proc.returncode, out or b"", err or b"")


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> threading.Thread:
    """Write ``data`` to ``proc``'s stdin and close it, in a thread of its own; ``proc.stdin`` is taken
    from the ``Popen`` so that ``communicate`` only reads. A ``communicate`` retried after its timeout
    no longer writes the rest of its input (CPython), and git, waiting for the end of its stdin, would
    never end: a list of 10,000 paths is more than a pipe holds. A git that exits or is killed before
    reading it all ends the writing (a broken pipe)."""
    pipe, proc.stdin = proc.stdin, None
    assert pipe is not None

    def write() -> None:
        # BrokenPipeError: git ended without reading it all.
        with contextlib.suppress(OSError), pipe:
            pipe.write(data)

    feeder = threading.Thread(target=write, name="git-stdin", daemon=True)
    feeder.start()
    return feeder


def check(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
    stdin: bytes | None = None,
) -> Result:
    """``run``, raising :class:`GitError` when git fails (or passes ``timeout`` seconds); ``OSError`` when
    git cannot be started."""
    result = run(args, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
    if not result.ok:
        raise GitError(
            f"`git {args[0]}` failed: {result.reason}. Run it by hand to see why",
            args,
            result.status,
            result.err,
        )
    return result


def attempt(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float,
    stdin: bytes | None = None,
) -> Result | None:
    """``run``, for a question whose answer may be missing: None when git cannot be started or passed
    ``timeout`` seconds (the caller then answers without git). Never raises."""
    try:
        result = run(args, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
    except OSError:
        return None
    return None if result.timed_out is not None else result


def noninteractive_env(network_timeout_s: float) -> dict[str, str]:
    """Variables to add to git's environment so that git, and the ssh it starts, never ask anything: no
    terminal or askpass prompt; ssh in batch mode (no host key, passphrase or password question) on top
    of the user's own ssh command (``GIT_SSH_COMMAND``, else ``core.sshCommand``, so their ``-F`` config,
    keys and known_hosts still count), connecting within 10 s and giving up on a silent server after
    30 s; an HTTP transfer that stalls for ``network_timeout_s`` seconds (at most 30) abandoned. Every git
    memsync runs against a remote uses it."""
    ssh = os.environ.get("GIT_SSH_COMMAND") or _user_ssh_command() or "ssh"
    return {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "SSH_ASKPASS": "true",
        "SSH_ASKPASS_REQUIRE": "never",
        "GCM_INTERACTIVE": "never",
        "GIT_SSH_COMMAND": f"{ssh} -o BatchMode=yes -o ConnectTimeout=10 "
        "-o ServerAliveInterval=15 -o ServerAliveCountMax=2",
        "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
        "GIT_HTTP_LOW_SPEED_TIME": str(max(1, min(HTTP_STALL_CAP_S, int(network_timeout_s)))),
    }


def remote_attempt(*args: str, timeout_s: float) -> Result | None:
    """``attempt`` of ``git ARGS`` asking nothing (``noninteractive_env``) within ``timeout_s`` seconds,
    for the few git calls made outside a store (setup's questions to a remote). Never raises."""
    return attempt(args, env=noninteractive_env(timeout_s), timeout=timeout_s)


def config_value(key: str) -> str | None:
    """The value of ``key`` in the user's own git config (global or system), None when unset or when git
    cannot be run. Never raises."""
    result = attempt(["config", "--get", key], timeout=10)
    value = result.out.strip() if result is not None else ""
    return value if result is not None and result.ok and value else None


@functools.lru_cache(maxsize=1)
def _user_ssh_command() -> str | None:
    """The user's ``core.sshCommand``, read once per process (a daemon opens its store every cycle)."""
    return config_value("core.sshCommand")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL git and every process it started, and reap git. All are stopped first, so none can start
    another that the kill would miss."""
    import psutil  # here, not at the top: the merge driver's `git merge-file` never times out

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

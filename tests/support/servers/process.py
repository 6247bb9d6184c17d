"""Starting and stopping the server processes of ``tests.support.servers``, inside a network namespace or
not."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import termios
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil

from tests.support.helpers import wait_for


class Unavailable(Exception):
    """A server cannot run on this machine; the message says why (a fixture skips with it)."""


def require(program: str, package: str) -> str:
    """The absolute path of ``program`` (PATH, then /usr/sbin), else ``Unavailable`` naming ``package``."""
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")
    if found is None:
        raise Unavailable(
            f"{program} is not installed (Debian package {package}; .ci/run installs it as root)"
        )
    return found


def in_netns(netns: str | None, command: Sequence[str]) -> list[str]:
    """``command`` run inside network namespace ``netns`` (``ip netns exec`` execs it: same pid)."""
    return ["ip", "netns", "exec", netns, *command] if netns else list(command)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on at ``host`` right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def start(command: Sequence[str], log: Path, *, netns: str | None = None) -> subprocess.Popen[bytes]:
    """Start ``command`` (in ``netns`` if given) in a session of its own, stdout and stderr appended to
    ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            in_netns(netns, command), stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True
        )


def wait_started(
    proc: subprocess.Popen[bytes], log: Path, text: str, what: str, *, offset: int = 0, timeout: float = 20
) -> None:
    """Wait until ``text`` appears in ``log`` past byte ``offset``; ``Unavailable`` with the log's tail
    if ``proc`` exits first."""

    def read() -> str:
        return log.read_bytes()[offset:].decode(errors="replace") if log.exists() else ""

    def ready() -> bool:
        if proc.poll() is not None:
            tail = read().strip().splitlines()[-3:]
            raise Unavailable(f"{what} did not start (exit {proc.returncode}): {' / '.join(tail)}")
        return text in read()

    wait_for(ready, timeout=timeout, what=f"{what} to start")


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """Kill ``proc`` and everything it forked (sshd's sessions run in sessions of their own, so a
    process group would miss them): stopped first, so it forks nothing while its children are listed.
    Reaps ``proc``; safe to call twice."""
    if proc is None or proc.returncode is not None:
        return
    with suppress(psutil.NoSuchProcess):
        server = psutil.Process(proc.pid)
        server.suspend()
        for child in server.children(recursive=True):
            with suppress(psutil.NoSuchProcess):
                child.kill()
    proc.kill()
    proc.wait(10)


class Blackhole:
    """A TCP server on ``host``:``port`` that completes the handshake (the kernel's listen backlog) and
    never sends a byte: what a hung git host looks like to a client."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._sock = socket.socket()
        self._sock.bind((host, 0))
        self._sock.listen(64)
        self.port = int(self._sock.getsockname()[1])

    def close(self) -> None:
        """Stop listening (connections still in the backlog are reset)."""
        self._sock.close()


@contextmanager
def blackhole(host: str = "127.0.0.1") -> Iterator[Blackhole]:
    """A :class:`Blackhole` for the block."""
    hole = Blackhole(host)
    try:
        yield hole
    finally:
        hole.close()


@dataclass(frozen=True)
class TtyRun:
    """What :func:`run_on_tty` saw: the exit code (None: still running at the limit, then killed),
    stdout, stderr, and everything written to the terminal (a prompt would be there)."""

    returncode: int | None
    stdout: str
    stderr: str
    terminal: str


def run_on_tty(command: Sequence[str], env: Mapping[str, str], timeout: float) -> TtyRun:
    """Run ``command`` in a new session whose controlling terminal is a pseudo-terminal nobody types
    into, as in a user's shell: a program that prompts (ssh for a host key or a passphrase, git for a
    password) writes to that terminal and waits for ever. Killed, with its session, after ``timeout``."""
    master, slave = os.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        list(command),
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        preexec_fn=controlling_terminal,  # after fork: the terminal must be this session's own
    )
    os.close(slave)
    seen = bytearray()

    def read_terminal() -> None:
        with suppress(OSError):  # EIO once every process holding the terminal has closed it
            while chunk := os.read(master, 4096):
                seen.extend(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    code: int | None
    try:
        out, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    if code is None:
        out, err = proc.communicate(timeout=10)
    reader.join(10)
    os.close(master)
    return TtyRun(
        code, out.decode(errors="replace"), err.decode(errors="replace"), seen.decode(errors="replace")
    )

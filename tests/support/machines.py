"""Machines for whole sessions of real agent CLIs: each a HOME with memsync set up and connected to one
host, its daemon, and a checkout of the project the sessions run in."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

from tests.conftest import isolated_env
from tests.support.claude_fixtures import checkout
from tests.support.helpers import REPO_ROOT, bare_remote, git, wait_for
from tests.support.npm import BIN


class Machine:
    """One machine: a HOME, a memsync installed into a virtualenv of its own (a ``.pth`` file in its
    site-packages puts this worktree and its dependencies on that interpreter's path, whatever
    environment a host gives its hooks and MCP servers; ``uninstall`` removes it), and a checkout of the
    project at ``checkout_at`` (under HOME) whose ``origin`` is ``origin``.

    ``host_dirs`` (under HOME) are made first, as the host's own install would, so that ``memsync init``
    tracks the host's memory; then memsync is set up with ``remote`` and connected to ``host``."""

    def __init__(
        self,
        root: Path,
        name: str,
        remote: Path,
        checkout_at: str,
        origin: str,
        *,
        host: str,
        host_dirs: tuple[str, ...],
    ) -> None:
        self.home = root / name
        self.env = isolated_env(self.home)
        self.env["PATH"] = f"{BIN}{os.pathsep}{os.environ['PATH']}"
        venv = root / f"{name}-venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        self.python = venv / "bin" / "python"
        self._pth = Path(_site_packages(str(self.python))) / "memsync.pth"
        self._pth.write_text(f"{REPO_ROOT}\n{_site_packages(sys.executable)}\n")
        self.project = checkout(self.home / checkout_at, origin)
        for folder in host_dirs:
            (self.home / folder).mkdir(parents=True, exist_ok=True)
        self.memsync("init", "--remote", str(remote), "--host", name)
        self.memsync("config", "set", "pull_interval_s", "2")
        self.memsync("connect", host)

    def run_host(self, argv: Sequence[str], extra_env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
        """Run the host's CLI (``argv``) in the checkout, with this machine's environment and
        ``extra_env``; what it did (it must exit 0, else its stderr is shown)."""
        done = subprocess.run(
            list(argv),
            cwd=self.project,
            env={**os.environ, **self.env, **extra_env},
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done

    def uninstall(self) -> None:
        """``pip uninstall memsync``: the virtualenv's interpreter no longer finds it."""
        self._pth.unlink()

    @contextmanager
    def daemon(self) -> Iterator[None]:
        """The machine's daemon running (its start-up cycle done), stopped at the end."""
        log = self.home / "daemon.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [str(self.python), "-m", "memsync", "daemon", "-v"],
                env={**os.environ, **self.env},
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
            )
        try:
            wait_for(lambda: "start-up cycle done" in log.read_text(), timeout=60, what="the daemon's start")
            yield
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)

    def memsync(self, *args: str) -> str:
        """Run ``memsync ARGS`` with this machine's interpreter; its stdout (the command must succeed)."""
        done = subprocess.run(
            [str(self.python), "-m", "memsync", *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout


M = TypeVar("M", bound=Machine)


def alice_and_bob(machine: Callable[[Path, str, Path, str, str], M], root: Path) -> tuple[Path, M, M]:
    """A bare remote under ``root`` and two machines on it made by ``machine``: Alice and Bob, with one
    project checked out at different paths under different spellings of its origin."""
    remote = bare_remote(root / "remote.git")
    alice = machine(root, "alice", remote, "src/shop", "git@example.com:org/shop.git")
    bob = machine(root, "bob", remote, "work/shop-main", "https://example.com/org/shop")
    return remote, alice, bob


@contextmanager
def daemons(*machines: Machine) -> Iterator[None]:
    """The daemons of ``machines`` running, each stopped at the end."""
    with ExitStack() as running:
        for machine in machines:
            running.enter_context(machine.daemon())
        yield


def wait_on_remote(remote: Path, path: str, entry: str, what: str) -> None:
    """Wait until ``remote``'s HEAD has a file at ``path`` and its history the entry ``entry``."""
    wait_for(
        lambda: (
            path in git(remote, "ls-tree", "-r", "--name-only", "HEAD").split()
            and entry in git(remote, "log", "-p", "HEAD")
        ),
        timeout=90,
        what=what,
    )


def wait_delivered(path: Path, content: str, what: str) -> None:
    """Wait until a daemon has delivered the file ``path``; it must hold exactly ``content``."""
    wait_for(path.is_file, timeout=90, what=what)
    assert path.read_text() == content


def _site_packages(python: str) -> str:
    """The site-packages directory of the interpreter ``python``."""
    return subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

"""Suite-wide isolation: a throwaway HOME, XDG dirs and git identity, so no test touches the user's."""

from __future__ import annotations

import compileall
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest
from hypothesis import settings

from tests.support.helpers import CORPUS, REPO_ROOT, bare_remote

if TYPE_CHECKING:
    from tests.support.peers import Peer
    from tests.support.servers.transport import Kind, Remote

_SESSION_ROOT = Path(tempfile.mkdtemp(prefix="memsync-tests-"))

# Where PYTHONDONTWRITEBYTECODE is set, no interpreter writes bytecode: each `python -m memsync`, daemon,
# hook or MCP server a test starts would compile memsync from source again (~0.15 s of CPU), and pytest
# would rewrite every test module again at each run. Compile memsync and the test helpers once (what is
# already compiled is only stat'ed; a tree that cannot be written is left as it is), and let pytest keep
# the test modules it rewrote.
for _package in (REPO_ROOT / "memsync", REPO_ROOT / "tests" / "support"):
    compileall.compile_dir(_package, quiet=2)
sys.dont_write_bytecode = False


def isolated_env(home: Path) -> dict[str, str]:
    """The environment variables that confine memsync and git to ``home`` (created if missing)."""
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text(
            "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
            "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        )
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "Test User",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test User",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }


os.environ.update(isolated_env(_SESSION_ROOT / "home"))

# No per-example deadline: a wall-clock bound that a loaded machine (or a pattern compiled on first use)
# makes fail, and says nothing of correctness.
settings.register_profile("memsync", deadline=None)
settings.load_profile("memsync")


# How long a test's own processes and threads get to end after its fixtures stopped them: a bound on a
# wait, never on speed (a loaded machine only makes the wait longer, not the test fail).
LEAK_WAIT_S = 30.0


def _memsync_children() -> dict[int, str]:
    found: dict[int, str] = {}
    for child in psutil.Process().children(recursive=True):
        try:
            cmdline = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "memsync" in cmdline:
            found[child.pid] = cmdline
    return found


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fail a test that leaves a memsync process (a daemon, an MCP server) or a non-daemon thread running
    once its fixtures are torn down; the leaked processes are killed so the next test starts clean."""
    processes = set(_memsync_children())
    threads = {thread.ident for thread in threading.enumerate()}
    yield
    deadline = time.monotonic() + LEAK_WAIT_S
    while True:
        left = {pid: cmd for pid, cmd in _memsync_children().items() if pid not in processes}
        stuck = [t for t in threading.enumerate() if t.ident not in threads and not t.daemon and t.is_alive()]
        if not (left or stuck) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in left:
        with suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert not left, f"the test left memsync processes running: {sorted(left.values())}"
    assert not stuck, f"the test left threads running: {[t.name for t in stuck]}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh HOME (and XDG dirs, git identity) for this test alone, set in ``os.environ``."""
    path = tmp_path / "home"
    for key, value in isolated_env(path).items():
        monkeypatch.setenv(key, value)
    yield path


@pytest.fixture(scope="session")
def corpus() -> Path:
    """``../shared/corpus`` (read-only real memory files); the test skips, visibly, where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (set MEMSYNC_CORPUS to its path)")
    return CORPUS


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository (branch main) that the test's peers share."""
    return bare_remote(tmp_path / "remote.git")


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    """Peers a test makes (append them); any daemon still running at the end is killed."""
    made: list[Peer] = []
    yield made
    for peer in made:
        if not peer.proc_dead():
            peer.kill()


def _served(kind: Kind, root: Path, *, partitions: bool = False) -> Iterator[Remote]:
    from tests.support.servers.process import Unavailable
    from tests.support.servers.transport import open_remote

    with ExitStack() as stack:
        try:
            remote = stack.enter_context(open_remote(kind, root, partitions=partitions))
        except Unavailable as exc:
            pytest.skip(str(exc))
        yield remote


@pytest.fixture
def ssh_remote(tmp_path: Path) -> Iterator[Remote]:
    """A bare remote behind a real sshd on 127.0.0.1 (``tests.support.servers``); make peers with
    ``ssh_remote.peer(tmp_path, name)``. Skips, with the reason, where sshd cannot run."""
    yield from _served("ssh", tmp_path)


@pytest.fixture
def https_remote(tmp_path: Path) -> Iterator[Remote]:
    """A bare remote behind nginx + git http-backend with TLS and basic auth on 127.0.0.1."""
    yield from _served("https", tmp_path)


@pytest.fixture
def partitioned_ssh_remote(tmp_path: Path) -> Iterator[Remote]:
    """A bare remote behind sshd in a network namespace; each peer it makes has a namespace and a link
    that ``cut``/``restore`` take down and up. Skips where namespaces cannot be made (not root)."""
    yield from _served("ssh", tmp_path, partitions=True)

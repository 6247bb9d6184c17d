"""A team remote reached over a real transport, and peers set up to use it: what tests and benches build
on (``tests/conftest.py``'s fixtures, ``bench/chaos.py --transport``).

``open_remote(kind, root)`` makes the bare repository ``root/repos/remote.git`` and, for ``ssh`` or
``https``, the server in front of it; with ``partitions`` the server runs in a network namespace of its
own and each peer gets one too (``netns.Network``), so a peer's link can be cut and restored. A peer
made with ``remote.peer(root, name)`` has its HOME set up as a user's would be (ssh key, config and
known_hosts; or the CA and a credential helper), then its store cloned over that transport.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import psutil

from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import Peer
from tests.support.servers.https import HttpsServer
from tests.support.servers.netns import REMOTE_ADDRESS, Network, network
from tests.support.servers.process import TtyRun, run_on_tty
from tests.support.servers.ssh import SshServer

# Every line `memsync sync` writes to stderr is one of its log lines: nothing raw from ssh or git.
LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR) memsync\.")
# How a remote's one-line error in `memsync status` begins (the remote's URL may follow its name).
CANNOT_REACH = r"cannot reach origin( \(\S+\))?: "


def sync_on_tty(peer: Peer) -> TtyRun:
    """`memsync sync` of ``peer`` with a terminal a prompt would wait on, and no GIT_TERMINAL_PROMPT
    from the test environment: keeping git and ssh from asking is memsync's own job."""
    env = {k: v for k, v in {**os.environ, **peer.env}.items() if k != "GIT_TERMINAL_PROMPT"}
    return run_on_tty([*peer.prefix, sys.executable, "-m", "memsync", "sync"], env, timeout=90)


Kind = Literal["path", "ssh", "https"]
KINDS: tuple[Kind, ...] = ("path", "ssh", "https")


@dataclass
class Remote:
    """The bare repository ``path`` (on this machine, whatever the transport), the ``url`` peers use,
    the server in front of it (``ssh`` or ``https``) and, with partitions, the network (``net``)."""

    kind: Kind
    path: Path
    url: str
    ssh: SshServer | None = None
    https: HttpsServer | None = None
    net: Network | None = None
    peers: list[Peer] = field(default_factory=list)
    down: list[Peer] = field(default_factory=list)

    def peer(self, root: Path, name: str, *, init_store: bool = True, **options: Any) -> Peer:
        """A peer under ``root/name`` (``Peer.create`` ``options``) that reaches this remote over its
        transport, in its own namespace with partitions; its store is made unless ``init_store`` is
        False. Its daemon is killed when the remote closes."""
        netns = self.net.add(name) if self.net else None
        peer = Peer.create(root, name, self.path, url=self.url, netns=netns, init_store=False, **options)
        peer.env.update(self.setup_client(peer.home))
        self.peers.append(peer)
        if init_store:
            peer.init_store()
        return peer

    @property
    def server(self) -> SshServer | HttpsServer | None:
        """The server in front of the repository (None for a path remote)."""
        return self.ssh or self.https

    def setup_client(self, home: Path) -> dict[str, str]:
        """Set ``home`` up for this transport with the right credentials; the environment it needs."""
        return {} if self.server is None else self.server.setup_client(home)

    def take_down(self, peers: Sequence[Peer]) -> None:
        """Begin an outage: with partitions, ``peers``' links are cut (the others carry on); otherwise
        the whole remote goes away (its server is killed, a path remote is renamed away)."""
        assert not self.down, "one outage at a time"
        self.down = list(peers) if self.net else list(self.peers)
        if self.net is not None:
            for peer in self.down:
                self.cut(peer)
        elif self.server is not None:
            self.server.stop()
        else:
            self.path.rename(self._away)

    def bring_back(self) -> None:
        """End the outage ``take_down`` began."""
        if self.net is not None:
            for peer in self.down:
                self.restore(peer)
        elif self.server is not None:
            self.server.start()
        else:
            # A push caught by the outage may have made the old path again, with a half-received pack
            # (git names its incoming-object dir by absolute path): that stub goes. Its receive-pack
            # also locked refs by absolute path (HEAD.lock beside refs/heads/main.lock) and could not
            # remove them once the repository moved: an artefact of renaming a repository under a
            # running git, which no real outage does, so once no receive-pack runs they go too.
            wait_for(
                lambda: not self.receiving(), timeout=30, what="the end of a receive-pack the outage caught"
            )
            for lock in self._away.rglob("*.lock"):
                lock.unlink()
            if self.path.exists():
                shutil.rmtree(self.path)
            self._away.rename(self.path)
        self.down = []

    @property
    def _away(self) -> Path:
        return self.path.with_name(self.path.name + ".away")

    def cut(self, peer: Peer) -> None:
        """Cut ``peer``'s link to the remote (needs partitions)."""
        assert self.net is not None, "open_remote(partitions=True) makes links that can be cut"
        self.net.cut(peer.name)

    def restore(self, peer: Peer) -> None:
        """Restore ``peer``'s link."""
        assert self.net is not None, "open_remote(partitions=True) makes links that can be cut"
        self.net.restore(peer.name)

    def receiving(self) -> bool:
        """True while a ``git receive-pack`` of this repository runs on the server (a push underway)."""
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = " ".join(proc.info["cmdline"] or ())
            if "receive-pack" in cmdline and str(self.path) in cmdline:
                return True
        return False

    def locks(self) -> list[str]:
        """The lock files in the repository (``refs/**/*.lock``, ``packed-refs.lock``, ...), relative."""
        return sorted(p.relative_to(self.path).as_posix() for p in self.path.rglob("*.lock"))

    def head(self, branch: str = "main") -> str:
        """The sha of ``branch`` in the repository ("" when it has none)."""
        result = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", branch], cwd=self.path, capture_output=True, text=True
        )
        return result.stdout.strip()

    def file(self, rel: str, branch: str = "main") -> bytes:
        """The bytes of ``rel`` on ``branch`` in the repository (b"" when absent)."""
        result = subprocess.run(["git", "show", f"{branch}:{rel}"], cwd=self.path, capture_output=True)
        return result.stdout if result.returncode == 0 else b""

    def kill_daemons(self) -> None:
        """Kill the daemons of this remote's peers that still run."""
        for peer in self.peers:
            if not peer.proc_dead():
                peer.kill()


@contextmanager
def open_remote(kind: Kind, root: Path, *, partitions: bool = False) -> Iterator[Remote]:
    """The remote for the block; at the end its peers' daemons, the server and the namespaces go.
    Raises ``process.Unavailable`` when this machine lacks what ``kind`` (or ``partitions``) needs."""
    if kind not in KINDS:
        raise ValueError(f"unknown transport {kind!r}: one of {', '.join(KINDS)}")
    if partitions and kind == "path":
        raise ValueError("a path remote has no link to cut: partitions need ssh or https")
    path = bare_remote(root / "repos" / "remote.git")
    with ExitStack() as stack:
        net = stack.enter_context(network(root / "net")) if partitions else None
        host, netns = (REMOTE_ADDRESS, net.remote) if net else ("127.0.0.1", None)
        remote = Remote(kind, path, str(path), net=net)
        if kind == "ssh":
            remote.ssh = stack.enter_context(SshServer.running(root / "sshd", host=host, netns=netns))
            remote.url = remote.ssh.url(path)
        elif kind == "https":
            remote.https = stack.enter_context(
                HttpsServer.running(root / "web", path.parent, host=host, netns=netns)
            )
            remote.url = remote.https.url(path)
        stack.callback(remote.kill_daemons)  # first out: before the servers and namespaces
        yield remote

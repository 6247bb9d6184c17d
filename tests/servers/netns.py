"""Network namespaces for partition tests: one for the remote (the git host), one per peer, each peer
joined to the remote's bridge by its own veth pair.

The addresses are 198.18.0.0/24 (RFC 2544's range for network tests) and exist only inside these
namespaces: the remote is 198.18.0.1 on its bridge, peer ``n`` is 198.18.0.(10 + n) on its ``eth0``, and no
namespace has a route anywhere else, so no test packet can leave them. ``cut(peer)`` takes the peer's link
down (``ip link set eth0 down``: in-flight connections stall, new ones fail), ``restore(peer)`` brings it
back. Everything is deleted by ``close`` (and a namespace left by a killed run, whose creator process is
gone, by the next ``Network``).
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.servers.process import Unavailable, require

REMOTE_ADDRESS = "198.18.0.1"
_PREFIX = "memsync"
_OURS = re.compile(rf"{_PREFIX}(\d+)-[0-9a-f]+-")
_NETNS_DIR = Path("/run/netns")


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")


def _ip_tc(netns: str, *args: str) -> None:
    """``tc ARGS`` inside ``netns``."""
    result = subprocess.run(
        ["ip", "netns", "exec", netns, "tc", *args], capture_output=True, text=True, check=False, timeout=30
    )
    if result.returncode != 0:
        raise RuntimeError(f"tc {' '.join(args)}: {result.stderr.strip()}")


def probe() -> None:
    """``Unavailable`` unless this process may make network namespaces and veth pairs."""
    require("ip", "iproute2")
    if os.geteuid() != 0:
        raise Unavailable("network namespaces need root (run the suite as root, as CI does)")
    name = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}-probe"
    try:
        _ip("netns", "add", name)
        _ip("-n", name, "link", "add", "name", "a", "type", "veth", "peer", "name", "b")
    except RuntimeError as exc:
        raise Unavailable(f"cannot make a network namespace with a veth pair here: {exc}") from exc
    finally:
        with suppress(RuntimeError):
            _ip("netns", "del", name)


def sweep_stale() -> None:
    """Delete the namespaces of earlier runs whose creating process no longer exists."""
    names = os.listdir(_NETNS_DIR) if _NETNS_DIR.is_dir() else []
    for name in names:
        match = _OURS.match(name)
        if match and not psutil.pid_exists(int(match[1])):
            with suppress(RuntimeError):
                _ip("netns", "del", name)


@dataclass
class Network:
    """The remote's namespace (``remote``) and the peers' (``peers``: peer name -> namespace)."""

    tag: str = field(default_factory=lambda: f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}-")
    peers: dict[str, str] = field(default_factory=dict)

    @property
    def remote(self) -> str:
        """The name of the remote's namespace."""
        return self.tag + "remote"

    def create(self) -> None:
        """Make the remote's namespace and bridge."""
        _ip("netns", "add", self.remote)
        _ip("-n", self.remote, "link", "set", "lo", "up")
        _ip("-n", self.remote, "link", "add", "name", "br0", "type", "bridge")
        _ip("-n", self.remote, "addr", "add", f"{REMOTE_ADDRESS}/24", "dev", "br0")
        _ip("-n", self.remote, "link", "set", "br0", "up")

    def add(self, peer: str) -> str:
        """Make ``peer``'s namespace and link; return the namespace's name."""
        number = len(self.peers) + 1
        if number > 200:
            raise ValueError("at most 200 peers share one network")
        ns = f"{self.tag}p{number}"
        _ip("netns", "add", ns)
        self.peers[peer] = ns
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip(
            "-n",
            ns,
            "link",
            "add",
            "name",
            "eth0",
            "type",
            "veth",
            "peer",
            "name",
            f"p{number}",
            "netns",
            self.remote,
        )
        _ip("-n", self.remote, "link", "set", f"p{number}", "master", "br0", "up")
        _ip("-n", ns, "addr", "add", f"198.18.0.{10 + number}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        return ns

    def cut(self, peer: str) -> None:
        """Take ``peer``'s link down: it cannot reach the remote until ``restore``."""
        _ip("-n", self.peers[peer], "link", "set", "eth0", "down")

    def restore(self, peer: str) -> None:
        """Bring ``peer``'s link back up (its address and route come back with it)."""
        _ip("-n", self.peers[peer], "link", "set", "eth0", "up")

    def limit_rate(self, peer: str, rate: str) -> None:
        """Cap what ``peer`` sends at ``rate`` (tc's units, e.g. ``"256kbit"``) with a token bucket,
        so that a push lasts long enough to be cut in the middle."""
        _ip_tc(
            self.peers[peer],
            "qdisc",
            "replace",
            "dev",
            "eth0",
            "root",
            "tbf",
            "rate",
            rate,
            "burst",
            "4kb",
            "latency",
            "2s",
        )

    def check_netem(self) -> None:
        """``Unavailable`` unless the kernel has ``tc netem`` (tried on the remote namespace's loopback)."""
        try:
            _ip_tc(self.remote, "qdisc", "replace", "dev", "lo", "root", "netem", "delay", "1ms")
            _ip_tc(self.remote, "qdisc", "del", "dev", "lo", "root")
        except RuntimeError as exc:
            raise Unavailable(f"tc netem is not available here: {exc} (the kernel needs sch_netem)") from exc

    def delay(self, peer: str, delay_ms: int, loss_percent: float) -> None:
        """Delay every packet on ``peer``'s link by ``delay_ms`` each way and drop ``loss_percent`` % of
        them (``tc netem`` on both ends; see ``check_netem``)."""
        spec = ["delay", f"{delay_ms}ms", "loss", f"{loss_percent}%"]
        number = list(self.peers).index(peer) + 1
        _ip_tc(self.peers[peer], "qdisc", "replace", "dev", "eth0", "root", "netem", *spec)
        _ip_tc(self.remote, "qdisc", "replace", "dev", f"p{number}", "root", "netem", *spec)

    def close(self) -> None:
        """Delete every namespace of this network (their veth pairs and bridge go with them)."""
        for ns in [*self.peers.values(), self.remote]:
            with suppress(RuntimeError):
                _ip("netns", "del", ns)
        self.peers.clear()


@contextmanager
def network() -> Iterator[Network]:
    """A :class:`Network` for the block, always deleted after. Raises ``Unavailable``."""
    probe()
    sweep_stale()
    net = Network()
    try:
        net.create()
        yield net
    finally:
        net.close()

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
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.support.servers.process import Unavailable, in_netns, require, start, stop, wait_started

REMOTE_ADDRESS = "198.18.0.1"
_PREFIX = "memsync"
_OURS = re.compile(rf"{_PREFIX}(\d+)-[0-9a-f]+-")
_NETNS_DIR = Path("/run/netns")
NETEM = Path(__file__).with_name("netem.py")


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {result.stderr.strip()}")


def _ip_tc(netns: str, *args: str) -> None:
    """``tc ARGS`` inside ``netns``."""
    result = subprocess.run(
        in_netns(netns, ["tc", *args]), capture_output=True, text=True, check=False, timeout=30
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

    root: Path
    tag: str = field(default_factory=lambda: f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}-")
    peers: dict[str, str] = field(default_factory=dict)
    netem: bool | None = None
    delayers: list[subprocess.Popen[bytes]] = field(default_factory=list)

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

    def check_delay(self) -> str:
        """How ``delay`` will work here: ``tc netem`` where the kernel has it (tried on the remote
        namespace's loopback), else an NFQUEUE that ``tests/support/servers/netem.py`` releases late. Raises
        ``Unavailable`` when neither can."""
        try:
            _ip_tc(self.remote, "qdisc", "replace", "dev", "lo", "root", "netem", "delay", "1ms")
            _ip_tc(self.remote, "qdisc", "del", "dev", "lo", "root")
        except RuntimeError as exc:
            if shutil.which("iptables-legacy", path="/usr/sbin:/sbin:/usr/bin") is None:
                raise Unavailable(
                    f"tc netem is not available here ({exc}), nor iptables (Debian package iptables) "
                    "for delaying packets through an NFQUEUE instead"
                ) from exc
            self.netem = False
            return "an NFQUEUE released late by tests/support/servers/netem.py (this kernel has no tc netem)"
        self.netem = True
        return "tc netem"

    def delay(self, peer: str, delay_ms: int, loss_percent: float) -> None:
        """Delay every packet on ``peer``'s link by ``delay_ms`` each way and drop ``loss_percent`` % of
        them, by ``check_delay``'s means (which it calls first, unless it was called)."""
        if self.netem is None:
            self.check_delay()
        ns = self.peers[peer]
        if self.netem:
            spec = ["delay", f"{delay_ms}ms", "loss", f"{loss_percent}%"]
            _ip_tc(ns, "qdisc", "replace", "dev", "eth0", "root", "netem", *spec)
            _ip_tc(
                self.remote,
                "qdisc",
                "replace",
                "dev",
                f"p{list(self.peers).index(peer) + 1}",
                "root",
                "netem",
                *spec,
            )
            return
        log = self.root / f"netem-{peer}.log"
        seed = str(list(self.peers).index(peer))
        command = [sys.executable, str(NETEM), "0", str(delay_ms), str(loss_percent), seed]
        self.delayers.append(delayer := start(command, log, netns=ns))
        wait_started(delayer, log, "ready", "the NFQUEUE delayer")
        for chain, way in (("OUTPUT", "-o"), ("INPUT", "-i")):
            subprocess.run(
                [
                    *in_netns(ns, []),
                    "iptables-legacy",
                    "-A",
                    chain,
                    way,
                    "eth0",
                    "-j",
                    "NFQUEUE",
                    "--queue-num",
                    "0",
                ],
                check=True,
                capture_output=True,
                timeout=30,
            )

    def delayed(self, peer: str) -> tuple[int, int]:
        """(packets delayed, packets dropped) on ``peer``'s link so far, by ``delay``'s means."""
        if self.netem:
            shown = subprocess.run(
                in_netns(self.peers[peer], ["tc", "-s", "qdisc", "show", "dev", "eth0"]),
                capture_output=True,
                text=True,
                check=True,
                timeout=30,
            ).stdout
            counts = re.search(r"Sent \d+ bytes (\d+) pkt \(dropped (\d+)", shown)
        else:
            log = (self.root / f"netem-{peer}.log").read_text()
            counts = next(reversed(list(re.finditer(r"packets (\d+) dropped (\d+)", log))), None)
        return (int(counts[1]), int(counts[2])) if counts else (0, 0)

    def close(self) -> None:
        """Stop the delayers and delete every namespace of this network (their veth pairs and bridge go
        with them)."""
        for delayer in self.delayers:
            stop(delayer)
        for ns in [*self.peers.values(), self.remote]:
            with suppress(RuntimeError):
                _ip("netns", "del", ns)
        self.peers.clear()


@contextmanager
def network(root: Path) -> Iterator[Network]:
    """A :class:`Network` for the block (its logs under ``root``), always deleted after. Raises
    ``Unavailable``."""
    probe()
    sweep_stale()
    root.mkdir(parents=True, exist_ok=True)
    net = Network(root)
    try:
        net.create()
        yield net
    finally:
        net.close()

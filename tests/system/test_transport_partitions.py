"""Partitions over real ssh: each peer in its own network namespace, joined by a veth pair to the remote's
namespace where sshd runs (``tests.support.servers.netns``). A link cut in the middle of a push and restored
loses nothing, leaves no lock on the server, and the peers converge once the link is back. Where the
kernel has ``tc netem``, the same holds with 100 ms of delay and 2 % loss on every link."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, Peer, running
from tests.support.servers.process import Unavailable
from tests.support.servers.transport import Remote


def _prose(size: int, seed: int) -> str:
    """``size`` characters of word-like text: big enough to make a slow push, and nothing the secret
    scanner would hold back (no long random tokens)."""
    rng = random.Random(seed)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append("".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(rng.randint(2, 8))))
    return " ".join(words)


def _has_all(peer: Peer, lines: list[bytes], daily: list[bytes]) -> bool:
    memory, log = peer.read_live(MEMORY_FILE), peer.read_live(f"daily/{DAY}.md")
    return all(line in memory for line in lines) and all(line in log for line in daily)


@pytest.mark.slow
def test_a_link_cut_in_the_middle_of_a_push_loses_nothing_and_leaves_no_lock(
    partitioned_ssh_remote: Remote, tmp_path: Path
) -> None:
    remote = partitioned_ssh_remote
    alice = remote.peer(tmp_path, "alice")
    bob = remote.peer(tmp_path, "bob")
    assert remote.net is not None
    # ~25 KB of packed objects at 64 kbit/s: the push lasts seconds, long enough to cut it halfway.
    remote.net.limit_rate("alice", "64kbit")
    lines: list[bytes] = []
    daily: list[bytes] = []
    with running(alice, bob):
        lines.append(alice.append_entry(_prose(40_000, seed=1)))
        wait_for(remote.receiving, timeout=60, interval=0.02, what="alice's push to reach the server")
        remote.cut(alice)
        offset = len(alice.log())
        lines.append(alice.append_entry("Written by alice while cut off."))
        daily.append(bob.append_daily("- [12:00] bob: written while alice was cut off\n"))
        lines.append(bob.append_entry("Written by bob while alice was cut off."))
        wait_for(
            lambda: "remote origin failed" in alice.log(offset) or "origin offline" in alice.log(offset),
            timeout=120,
            what="alice's daemon to notice the cut",
        )
        assert lines[0] not in remote.file(MEMORY_STORE), "the push ended before the cut"
        wait_for(lambda: lines[2] in remote.file(MEMORY_STORE), timeout=60, what="bob's push during the cut")
        remote.restore(alice)
        wait_for(
            lambda: _has_all(alice, lines, daily) and _has_all(bob, lines, daily),
            timeout=180,
            interval=0.5,
            what="every line on both peers after the link came back",
        )
        wait_for(lambda: remote.head() == alice.store_git("rev-parse", "HEAD").strip(), timeout=60)
    assert all(line in remote.file(MEMORY_STORE) for line in lines)
    wait_for(lambda: remote.locks() == [], timeout=60, what=f"no lock left on the server: {remote.locks()}")


@pytest.mark.slow
def test_with_100_ms_delay_and_2_percent_loss_every_line_arrives(
    partitioned_ssh_remote: Remote, tmp_path: Path
) -> None:
    remote = partitioned_ssh_remote
    assert remote.net is not None
    try:
        print(f"delay and loss by {remote.net.check_delay()}")
    except Unavailable as exc:
        pytest.skip(str(exc))
    peers = [remote.peer(tmp_path, name) for name in ("alice", "bob")]
    for peer in peers:
        remote.net.delay(peer.name, delay_ms=100, loss_percent=2)
    lines: list[bytes] = []
    # Every ssh session takes a dozen round trips of 200 ms, some of them lost and sent again.
    with running(*peers, ready_timeout=120):
        for round_ in range(2):
            lines.extend(
                peer.append_entry(f"{peer.name} round {round_} over a slow lossy link") for peer in peers
            )
        wait_for(
            lambda: all(_has_all(peer, lines, []) for peer in peers),
            timeout=180,
            interval=0.5,
            what="every line on every peer",
        )
    assert all(line in remote.file(MEMORY_STORE) for line in lines)
    wait_for(lambda: remote.locks() == [], timeout=60, what="no lock left on the server")
    for peer in peers:
        packets, dropped = remote.net.delayed(peer.name)
        assert packets > 100 and dropped > 0, f"{peer.name}'s link: {packets} packets, {dropped} dropped"

"""A handoff is an ordinary write: on peer A it hands role qa to role reviewer by their tracked names, and
the daemons carry the result to reviewer's live directory on peer B (issue 6 "Two peers")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import Peer

RECEIVER = "reviewer"


def make_peer(tmp_path: Path, name: str, remote: Path) -> Peer:
    receiver = tmp_path / name / ".agents" / "memory" / RECEIVER
    receiver.mkdir(parents=True)
    return Peer.create(tmp_path, name, remote, extra_tracks={str(receiver): f"roles/{RECEIVER}"})


@contextmanager
def daemons(*peers: Peer) -> Iterator[None]:
    """The peers' daemons run inside the block; each gets exactly one SIGTERM at the end and must exit 0.

    (tests.support.peers.running signals every daemon, then signals again any still running while it waits for
    the others; a second SIGTERM during interpreter shutdown kills a daemon with -15.)
    """
    offsets = [peer.start(wait_ready=False) for peer in peers]
    try:
        for peer, offset in zip(peers, offsets, strict=True):
            peer.wait_ready(offset)
        yield
    finally:
        codes = [peer.stop() for peer in peers if not peer.proc_dead()]
        assert codes == [0] * len(codes), [peer.log() for peer in peers]


@pytest.mark.slow
def test_a_handoff_on_one_peer_reaches_the_receivers_live_dir_on_the_other(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = make_peer(tmp_path, "alice", remote), make_peer(tmp_path, "bob", remote)
    alice.write_curated(
        "retry_budget",
        "Retries stop after three attempts.\n",
        description="The client retries three times, then fails loudly.",
        type_="feedback",
    )
    with daemons(alice, bob):
        result = alice.cli("handoff", "qa", RECEIVER)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1] == "qa -> reviewer: 1 handed, 0 already present, 0 skipped"
        handed = (alice.home / ".agents" / "memory" / RECEIVER / "retry_budget.md").read_bytes()
        assert handed.endswith(b"Source: handoff from qa (retry_budget.md)\n")
        on_bob = bob.home / ".agents" / "memory" / RECEIVER
        wait_for(
            lambda: (
                (on_bob / "retry_budget.md").is_file() and (on_bob / "retry_budget.md").read_bytes() == handed
            ),
            timeout=60,
            what="the handed entry on bob",
        )
        wait_for(
            lambda: (
                b"(retry_budget.md)" in (on_bob / "MEMORY.md").read_bytes()
                if (on_bob / "MEMORY.md").is_file()
                else False
            ),
            timeout=60,
            what="the index line on bob",
        )
        logs = wait_for(
            lambda: list((on_bob / "daily").glob("*.md")) if (on_bob / "daily").is_dir() else [],
            timeout=60,
            what="the receipt in bob's daily log",
        )
        wait_for(
            lambda: b"Received 1 entry from qa (memsync handoff): retry_budget" in logs[0].read_bytes(),
            timeout=60,
            what="the receipt line on bob",
        )
        history = bob.cli("log", str(on_bob / "retry_budget.md"))
        assert history.returncode == 0, history.stderr
        assert "alice" in history.stdout, history.stdout

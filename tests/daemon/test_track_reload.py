"""`memsync track` while the daemon runs: the reload publishes what the newly tracked folder already holds
at once, not when a file in it next changes (a real daemon per peer, the real CLI)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.helpers import wait_for
from tests.support.peers import Peer, running

INDEX = b"# Memory\n\n- [Harbor](harbor.md) - the site blocks requests without a user agent\n"
ENTRY = (
    b"---\nname: harbor\ndescription: harbor quirk\ntype: project\n---\n\n"
    b"The harbor site blocks requests without a user agent.\n"
)


def committed(peer: Peer, rel: str) -> bytes:
    """``rel`` as the HEAD commit of ``peer``'s store has it; b"" when absent."""
    result = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=peer.store, capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else b""


def test_track_while_running_publishes_existing_files(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    """A folder written before it was tracked (MEMORY.md and an entry) reaches the store and a second
    peer right after `memsync track`, with no later change in it and no `memsync sync`. The pull timer
    is far off (its safety cycle would pick the folder up); the local-path remote is watched."""
    alice = Peer.create(tmp_path, "alice", remote, pull_interval_s=600)
    bob = Peer.create(tmp_path, "bob", remote, pull_interval_s=600)
    peers += [alice, bob]
    folder = alice.home / "projects" / "harbor" / "dev"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_bytes(INDEX)
    (folder / "harbor.md").write_bytes(ENTRY)
    with running(alice, bob):
        tracked = alice.cli("track", str(folder), "--store", "main", "--as", "roles/dev")
        assert tracked.returncode == 0, tracked.stderr
        wait_for(lambda: "config reloaded" in alice.log(), timeout=10, what="alice: reload")
        wait_for(
            lambda: committed(alice, "roles/dev/harbor.md") == ENTRY,
            timeout=15,
            what="alice: the entry committed",
        )
        assert committed(alice, "roles/dev/MEMORY.md") == INDEX
        wait_for(
            lambda: committed(bob, "roles/dev/harbor.md") == ENTRY, timeout=15, what="bob: the entry pulled"
        )
        assert committed(bob, "roles/dev/MEMORY.md") == INDEX
    assert (folder / "harbor.md").read_bytes() == ENTRY
    assert (folder / "MEMORY.md").read_bytes() == INDEX

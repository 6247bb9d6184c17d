"""A tracked directory that is not what the store expects here (a role folder replaced by a file) is
unavailable: nothing under it is published as deleted, on any machine, nothing is delivered into it, and
once it is a directory again the store's content comes back whole. Two machines, `memsync sync` through
the CLI's entry point, a bare remote."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memsync.base.fsio import atomic_write
from tests.support.peers import ROLE_STORE, Peer, sync

pytestmark = pytest.mark.slow  # two machines and several syncs: about 15 s a test here

FILES = {
    "MEMORY.md": b"- [Plain English](use_plain_english.md)\n",
    "use_plain_english.md": b"---\nname: use_plain_english\ndescription: d\ntype: user\n---\n\nBe plain.\n",
    "daily/2026-11-30.md": b"- 09:00 started\n",
}


def _pair(tmp_path: Path, remote: Path, peers: list[Peer], team: bool) -> tuple[Peer, Peer, Path, str]:
    """Alice and bob; alice's role folder (``team/dev`` in a tracked folder of roles, else the tracked
    role dir itself) holds ``FILES``, synced to both. Returns them, the folder on alice and its store path."""
    made = [
        Peer.create(tmp_path, name, remote, extra_tracks={str(tmp_path / name / "team"): "team"})
        for name in ("alice", "bob")
    ]
    peers.extend(made)
    alice, bob = made
    role, prefix = (alice.home / "team" / "dev", "team/dev") if team else (alice.role_dir, ROLE_STORE)
    for rel, data in FILES.items():
        (role / rel).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(role / rel, data)
    sync(alice, bob, alice)
    assert _live(bob, prefix) == FILES
    return alice, bob, role, prefix


def _live(peer: Peer, prefix: str) -> dict[str, bytes]:
    root = peer.home / "team" / "dev" if prefix == "team/dev" else peer.role_dir
    return {rel: (root / rel).read_bytes() if (root / rel).is_file() else b"" for rel in FILES}


def _store(peer: Peer, prefix: str) -> dict[str, bytes]:
    return {rel: peer.read_store(f"{prefix}/{rel}") for rel in FILES}


def test_a_role_folder_replaced_by_a_file_deletes_nothing_and_comes_back_whole(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    alice, bob, role, prefix = _pair(tmp_path, remote, peers, team=True)
    shutil.move(role, tmp_path / "dev.bak")
    role.write_text("i am a file\n")
    done = alice.main("sync")
    assert done.returncode == 0, done.stderr
    assert "deleted" not in done.stdout
    assert done.stderr.count(f"{role} is a file here") == 1
    sync(bob)
    assert _live(bob, prefix) == FILES and _store(bob, prefix) == FILES
    assert _store(alice, prefix) == FILES
    sync(alice)
    assert _store(alice, prefix) == FILES
    assert role.read_text() == "i am a file\n"  # nothing delivered over it

    role.unlink()
    sync(alice, bob, alice)
    assert _live(alice, prefix) == FILES
    assert _live(bob, prefix) == FILES and _store(bob, prefix) == FILES

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


def test_a_folder_swapped_for_a_symlink_then_emptied_is_held_and_restored(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    """A role folder swapped for a symlink, later for an empty folder: no deletion reaches the store or
    bob (every byte kept), status names the folder, and `memsync held restore` brings the files back."""
    alice, bob, role, prefix = _pair(tmp_path, remote, peers, team=True)
    shutil.move(role, tmp_path / "dev.bak")
    role.symlink_to(tmp_path / "dev.bak")
    sync(alice)
    role.unlink()
    role.mkdir()
    done = alice.main("sync")
    assert done.returncode == 0, done.stderr
    assert "deleted" not in done.stdout
    folder = alice.home / "team"  # the tracked folder holds nothing now: the folder nearest the root
    assert f"{folder} is empty but the store has 2 files" in done.stderr
    sync(bob)
    assert _live(bob, prefix) == FILES and _store(bob, prefix) == FILES
    assert _store(alice, prefix) == FILES and list(role.iterdir()) == []
    status = alice.cli_ok("status").stdout
    assert f"held: {folder} is empty but the store has 2 files" in status
    assert f"memsync held restore {folder}" in status
    restored = alice.cli_ok("held", "restore", str(folder))
    assert "brings back its 2 files" in restored.stdout
    sync(alice)
    assert _live(alice, prefix) == FILES
    assert "held:" not in alice.cli_ok("status").stdout


def test_a_tracked_root_from_dangling_symlink_to_empty_folder_is_held_until_deleted(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    """The tracked role folder is a symlink to nothing (a drive not mounted), then an empty folder (its
    mount point): nothing is deleted anywhere until `memsync held delete`, which deletes the entries
    everywhere (the append-only log stays, as an agent's deletion of it would)."""
    alice, bob, role, prefix = _pair(tmp_path, remote, peers, team=False)
    shutil.move(role, tmp_path / "drive")
    role.symlink_to(tmp_path / "not-mounted")
    sync(alice)
    role.unlink()
    role.mkdir()
    sync(alice, bob)
    assert _live(bob, prefix) == FILES and _store(bob, prefix) == FILES
    assert list(role.iterdir()) == []
    doctor = alice.cli("doctor").stdout
    assert f"{role} is empty but the store has 2 files" in doctor
    assert "deleted 2 files" in alice.cli_ok("held", "delete", str(role)).stdout
    sync(alice, bob)
    entries = ("MEMORY.md", "use_plain_english.md")
    assert not any((bob.role_dir / rel).exists() or alice.read_store(f"{prefix}/{rel}") for rel in entries)
    assert _live(bob, prefix)["daily/2026-11-30.md"] == FILES["daily/2026-11-30.md"]

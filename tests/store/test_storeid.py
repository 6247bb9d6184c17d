"""A store's identity (DESIGN "Hostile input": a remote with an unrelated history is refused, never merged;
issue 12 #5). A remote whose path now holds another repository, memsync's or not, is reported as
unrelated to the store: nothing of it reaches the live files and nothing is pushed to it; `resync`
refuses it unless told to adopt it. Peers of one store made before store ids derive the same id.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memsync.store.storeid import STORE_ID_FILE
from tests.support.blobs import blobs
from tests.support.helpers import bare_remote, git
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, Peer


def _refs_and_objects(repo: Path) -> tuple[str, str]:
    return git(repo, "for-each-ref"), git(repo, "count-objects", "-v")


def _foreign(tmp_path: Path, *, memsync_store: bool) -> Path:
    """A bare repository with a history of its own: another memsync store (its own store id) or a
    repository memsync never made, holding a memory file at the store path the peers use."""
    work = tmp_path / "foreign-work"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    if memsync_store:
        (work / ".memsync").mkdir()
        (work / ".memsync" / "format").write_text("1\n")
        (work / STORE_ID_FILE).write_text("another-store\n")
    (work / "memory").mkdir()
    (work / MEMORY_STORE).write_text('{"unrelated":1}\n')
    git(work, "add", "-A")
    git(work, "commit", "-qm", "someone else's history")
    foreign = bare_remote(tmp_path / "foreign.git")
    git(work, "push", "-q", str(foreign), "main")
    return foreign


@pytest.mark.parametrize("memsync_store", [False, True], ids=["another repository", "another memsync store"])
def test_a_remote_swapped_for_an_unrelated_repository_is_refused(
    tmp_path: Path, remote: Path, memsync_store: bool
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    mine = alice.append_entry("alice's memory stays alice's")
    assert alice.main("sync").returncode == 0
    foreign = _foreign(tmp_path, memsync_store=memsync_store)
    shutil.rmtree(remote)
    shutil.copytree(foreign, remote)  # the remote's path now holds the other repository
    before = _refs_and_objects(remote)
    live = alice.read_live(MEMORY_FILE)

    said = alice.main("sync")
    assert said.returncode == 75, said.stderr
    assert "unrelated to this store" in said.stderr and "--adopt-unrelated" in said.stderr, said.stderr
    assert "rewritten" not in said.stderr
    assert alice.read_live(MEMORY_FILE) == live
    assert _refs_and_objects(remote) == before
    status = alice.status()["stores"]["main"]["remotes"]["origin"]
    assert status["status"] == "unrelated" and "unrelated to this store" in status["last_error"]

    refused = alice.main("resync", "origin")
    assert refused.returncode == 1 and "--adopt-unrelated" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert _refs_and_objects(remote) == before
    assert b"unrelated" not in alice.read_live(MEMORY_FILE)
    assert all(b"alice's memory" not in data for _, data in blobs(remote))

    adopted = alice.main("resync", "origin", "--adopt-unrelated")
    assert adopted.returncode == 0, adopted.stderr
    assert any(mine in data for path, data in blobs(remote) if path == MEMORY_STORE)


def test_peers_of_a_store_made_before_store_ids_derive_the_same_id(tmp_path: Path, remote: Path) -> None:
    """An old store (no id file): each peer commits the id derived from the one root commit; the two
    commits merge cleanly and the peers keep exchanging."""
    work = tmp_path / "old-memsync"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    (work / ".memsync").mkdir()
    (work / ".memsync" / "format").write_text("1\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "memsync: new store")
    git(work, "push", "-q", "origin", "HEAD:main")
    root = git(work, "rev-parse", "HEAD").strip()
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    ours = alice.append_entry("from alice")
    theirs = bob.append_entry("from bob")
    for peer in (alice, bob, alice, bob):
        result = peer.main("sync")
        assert result.returncode == 0, result.stderr
        assert "unrelated" not in result.stderr
    for peer in (alice, bob):
        assert peer.read_store(STORE_ID_FILE) == f"root-{root}\n".encode()
        assert ours in peer.read_live(MEMORY_FILE) and theirs in peer.read_live(MEMORY_FILE)
    assert alice.store_git("rev-parse", "HEAD") == bob.store_git("rev-parse", "HEAD")


def test_a_second_remote_holding_the_same_store_is_related(tmp_path: Path, remote: Path) -> None:
    """A mirror of the store (its own copy of the history) is the same store: exchanged with as usual."""
    alice = Peer.create(tmp_path, "alice", remote)
    line = alice.append_entry("reaches the mirror too")
    assert alice.main("sync").returncode == 0
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(remote), str(mirror))
    assert alice.main("remote", "add", "mirror", str(mirror), "--store", "main").returncode == 0
    result = alice.main("sync")
    assert result.returncode == 0 and "unrelated" not in result.stderr, result.stderr
    assert any(line in data for path, data in blobs(mirror) if path == MEMORY_STORE)

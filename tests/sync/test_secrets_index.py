"""A curated entry the secret scanner holds back takes its ``MEMORY.md`` line with it (DESIGN I6): peers
get no index line linking a file they never receive, the local index keeps it through peers' changes, and
the line syncs once the secret is gone from the entry. Two machines, a real bare remote, `memsync sync`."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.base.fsio import atomic_write
from memsync.config.file import Track
from memsync.sync.passes import publish
from memsync.sync.state import SyncState
from tests.support.helpers import bare_remote, remote_blobs
from tests.support.peers import Peer

SECRET = "the mirror token is glpat-xYz12AbC34dEf56GhI78jK"
TITLE = "# Memory index — dev\n\n"
CLEAN = "- [Clean](clean.md) — nothing secret\n"
CREDS = "- [Creds](creds.md) — how to reach the box\n"
BOB = "- [Bob](bob.md) — from bob\n"


def sync(peer: Peer) -> None:
    result = peer.cli("sync")
    assert result.returncode == 0, result.stderr


def entry(content: str) -> bytes:
    return f"---\nname: x\ndescription: d\ntype: project\n---\n\n{content}".encode()


def test_a_pass_over_the_released_entry_alone_publishes_its_index_line(tmp_path: Path) -> None:
    """The daemon's passes visit what changed: the entry held back in the same pass as its new index line
    takes the line with it, and a later pass over the released entry alone publishes the line."""
    live, store = tmp_path / "live", tmp_path / "store"
    live.mkdir()
    store.mkdir()
    track, state = Track(live, "roles/qa"), SyncState(tmp_path / "meta")
    atomic_write(live / "clean.md", entry("Use the staging host.\n"))
    atomic_write(live / "creds.md", entry(f"{SECRET}\n"))
    atomic_write(live / "MEMORY.md", (TITLE + CLEAN + CREDS).encode())
    report = publish(track, store, state, labels={"MEMORY.md", "clean.md", "creds.md"})
    assert [held.path for held in report.held] == ["roles/qa/creds.md"]
    assert (store / "roles/qa/MEMORY.md").read_bytes() == (TITLE + CLEAN).encode()
    assert not (store / "roles/qa/creds.md").exists()
    atomic_write(live / "creds.md", entry("The token is in the vault.\n"))
    publish(track, store, state, labels={"creds.md"})
    assert (store / "roles/qa/MEMORY.md").read_bytes() == (TITLE + CLEAN + CREDS).encode()
    assert (store / "roles/qa/creds.md").read_bytes() == entry("The token is in the vault.\n")
    state.close()


@pytest.mark.slow
def test_the_index_line_of_a_held_back_entry_stays_here_until_the_entry_syncs(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    alice.write_curated("clean", "Use the staging host.\n")
    alice.write_curated("creds", f"How to reach the box.\n\n{SECRET}\n")
    atomic_write(alice.role_dir / "MEMORY.md", (TITLE + CLEAN + CREDS).encode())
    sync(alice)
    sync(bob)
    assert bob.read_live("MEMORY.md") == (TITLE + CLEAN).encode()
    assert not (bob.role_dir / "creds.md").exists() and bob.read_live("clean.md")
    assert not any(b"(creds.md)" in blob or b"glpat-" in blob for blob in remote_blobs(remote))
    assert alice.read_live("MEMORY.md") == (TITLE + CLEAN + CREDS).encode()

    # A peer's new item reaches alice; her line for the held-back entry stays, and stays hers.
    bob.write_curated("bob", "Bob's note.\n")
    atomic_write(bob.role_dir / "MEMORY.md", (TITLE + CLEAN + BOB).encode())
    sync(bob)
    sync(alice)
    sync(bob)
    assert alice.read_live("MEMORY.md") == (TITLE + CLEAN + BOB + CREDS).encode()
    assert bob.read_live("MEMORY.md") == (TITLE + CLEAN + BOB).encode()
    assert not any(b"(creds.md)" in blob for blob in remote_blobs(remote))

    # The secret leaves the entry: the entry and its line sync, and nothing is lost on either side.
    alice.write_curated("creds", "How to reach the box.\n\nThe token is in the vault.\n")
    sync(alice)
    sync(bob)
    assert alice.status()["stores"]["main"]["held_back_secrets"] == []
    assert bob.read_live("creds.md").endswith(b"The token is in the vault.\n")
    assert (
        bob.read_live("MEMORY.md") == alice.read_live("MEMORY.md") == (TITLE + CLEAN + BOB + CREDS).encode()
    )

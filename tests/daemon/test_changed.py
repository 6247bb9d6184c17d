"""The daemon's cycles work from what changed (the watcher's paths, the exchange's diff): through real
daemon subprocesses, a real bare remote and real inotify. A full pass runs at start and in doubt, never
on the pull timer."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer, entry_line

MANY = 300


def _peer(tmp_path: Path, remote: Path, name: str) -> Iterator[Peer]:
    # A short pull interval: the safety timer's cycles that two tests wait for come every 1.2 s.
    peer = Peer.create(tmp_path, name, remote, pull_interval_s=0.2)
    yield peer
    if not peer.proc_dead():
        peer.kill()


@pytest.fixture
def alice(tmp_path: Path, remote: Path) -> Iterator[Peer]:
    yield from _peer(tmp_path, remote, "alice")


@pytest.fixture
def bob(tmp_path: Path, remote: Path) -> Iterator[Peer]:
    yield from _peer(tmp_path, remote, "bob")


def status_file(peer: Peer) -> dict[str, Any]:
    data = json.loads((peer.store / ".git" / "memsync" / "status.json").read_text())
    assert isinstance(data, dict)
    return data


def write_unseen(peer: Peer, live: Path, data: bytes) -> None:
    """Append ``data`` to ``live`` through a hard link outside every watched directory: inotify reports a
    change to the directory the file was opened through, so the daemon sees no event."""
    side = peer.home / "unwatched"
    side.mkdir(exist_ok=True)
    link = side / live.name
    if not link.exists():
        os.link(live, link)
    with link.open("ab") as out:
        out.write(data)


def test_an_append_to_one_of_many_files_is_published_and_delivered(alice: Peer, bob: Peer) -> None:
    for n in range(MANY):
        alice.write_curated(f"note-{n:03d}", f"note {n}\n")
    alice.append_daily("- first line\n")
    with alice.running(), bob.running():
        wait_for(lambda: bob.read_live(f"daily/{DAY}.md") == b"- first line\n", timeout=120)
        wait_for(lambda: bob.read_live(f"note-{MANY - 1:03d}.md").endswith(b"note 299\n"), timeout=120)
        line = alice.append_daily("- second line\n")
        wait_for(lambda: bob.read_live(f"daily/{DAY}.md") == b"- first line\n" + line, timeout=60)
        entry = bob.append_entry("A line from bob reaches alice through the remote.")
        wait_for(lambda: entry in alice.read_live(MEMORY_FILE), timeout=60)
    assert alice.read_live("note-150.md").endswith(b"note 150\n")
    assert bob.read_live("note-150.md").endswith(b"note 150\n")
    assert alice.read_store(MEMORY_STORE).endswith(entry)


def test_an_idle_pull_timer_cycle_writes_nothing_and_a_restart_publishes_what_it_missed(alice: Peer) -> None:
    alice.append_entry("A line the daemon sees.")
    with alice.running():
        wait_for(lambda: alice.commits() >= 1, timeout=60)
        head = alice.store_git("rev-parse", "HEAD")
        missed = entry_line("A line written where the watcher cannot see it.")
        write_unseen(alice, alice.memory_file, missed)
        before = status_file(alice)
        # Pull-timer cycles run (the remote is a local path: the safety timer, every 6 pull intervals).
        wait_for(lambda: status_file(alice)["cycles"] >= before["cycles"] + 2, timeout=120)
        assert alice.store_git("rev-parse", "HEAD") == head
        assert missed not in alice.read_store(MEMORY_STORE)
        after = status_file(alice)
        for key in ("both_kept", "set_aside", "untracked", "size_bytes", "held_back_secrets", "facts_head"):
            assert after[key] == before[key], key
    with alice.running():
        wait_for(lambda: missed in alice.read_store(MEMORY_STORE), timeout=60)
    assert alice.store_git("rev-parse", "HEAD") != head


def test_a_file_changed_while_the_daemon_was_stopped_is_published_at_start(alice: Peer) -> None:
    with alice.running():
        alice.write_curated("kept", "first version\n")
        wait_for(lambda: alice.read_store(f"{ROLE_STORE}/kept.md").endswith(b"first version\n"), timeout=60)
    alice.write_curated("kept", "edited while stopped\n")
    line = alice.append_daily("- written while stopped\n")
    with alice.running():
        wait_for(lambda: alice.read_store(f"{ROLE_STORE}/kept.md").endswith(b"edited while stopped\n"))
        wait_for(lambda: alice.read_store(f"{ROLE_STORE}/daily/{DAY}.md") == line)


def test_a_peer_change_arriving_by_fetch_is_delivered_with_no_local_event(alice: Peer, bob: Peer) -> None:
    with alice.running(), bob.running():
        curated = bob.write_curated("from-bob", "bob wrote this\n")
        entry = bob.append_entry("Bob's lesson, fetched by alice.")
        wait_for(lambda: alice.read_live("from-bob.md") == curated, timeout=60)
        wait_for(lambda: entry in alice.read_live(MEMORY_FILE), timeout=60)
        # The delivery's own watch events come to the daemon, which sees them for what they are.
        wait_for(lambda: "as its own delivery left them: no cycle" in alice.log(), timeout=60)
        assert "local changes" not in alice.log().split("start-up cycle done", 1)[1]
        # An agent's write to a delivered file is a change again.
        line = alice.append_entry("Alice's own line after the delivery.")
        wait_for(lambda: line in bob.read_live(MEMORY_FILE), timeout=60)
        assert "cycle (local changes" in alice.log()


def test_a_delivery_that_waited_for_a_busy_writer_is_made_once_it_closes(alice: Peer, bob: Peer) -> None:
    alice.append_entry("Alice's first line.")
    with alice.running(), bob.running():
        wait_for(lambda: b"Alice's first line." in bob.read_live(MEMORY_FILE), timeout=60)
        # An agent holds alice's memory file open to write at its own position (not appending).
        with alice.memory_file.open("r+b"):
            entry = bob.append_entry("Bob's line waits for alice's writer.")
            wait_for(lambda: entry in alice.read_store(MEMORY_STORE), timeout=60)
            cycles = status_file(alice)["cycles"]
            wait_for(lambda: status_file(alice)["cycles"] >= cycles + 2, timeout=120)
            assert entry not in alice.read_live(MEMORY_FILE)
        wait_for(lambda: entry in alice.read_live(MEMORY_FILE), timeout=60)

"""`memsync compact` on a tracked memory file (memsync/compaction.py): real daemons, real git, a bare remote.

The dead lines leave the live file and the store copy and stay gone through later cycles; a peer's store
loses them through the merge while its view stays equal; no live line is lost, including a peer's line
the store has and the live file has not received yet; an entry that superseded another stays, so a peer
holding the target drops it from its view.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memsync.base.fsio import append_once
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import parse_memory
from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, Peer, running

pytestmark = pytest.mark.slow


def tombstone(line: bytes) -> bytes:
    """The tombstone line of the entry ``line``."""
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return canonical_json({"id": entry_id(line), "deleted": True, "created_at": created}) + b"\n"


def entry_id(line: bytes) -> str:
    value = json.loads(line)["id"]
    assert isinstance(value, str)
    return value


def head_blob(peer: Peer) -> bytes:
    """The memory file's blob in the store's HEAD commit."""
    return peer.store_git("show", f"HEAD:{MEMORY_STORE}").encode()


def view(data: bytes) -> list[bytes]:
    """The view of a memory file's bytes, as sorted canonical entry lines."""
    return sorted(entry.canonical for entry in parse_memory(data).view(datetime.now(UTC)))


def cycles(peer: Peer) -> int:
    """How many cycles the peer's store has run (its status file's counter)."""
    try:
        status = json.loads((peer.store / ".git" / "memsync" / "status.json").read_text())
    except (OSError, ValueError):
        return 0
    return int(status.get("cycles", 0))


def write_dead_and_live(peer: Peer, who: str) -> tuple[list[bytes], list[bytes]]:
    """Append a kept entry, an entry and its successor, an entry and its tombstone: (dead, kept) lines."""
    kept = peer.append_entry(f"{who}: the build needs the cache warmed first.")
    old = peer.append_entry(f"{who}: the staging host is s1.")
    new = peer.append_entry(f"{who}: the staging host is s2.", supersedes=entry_id(old))
    gone = peer.append_entry(f"{who}: a wrong lesson.")
    grave = tombstone(gone)
    append_once(peer.memory_file, grave)
    return [old, gone], [kept, new, grave]


def test_compaction_under_a_running_daemon_stays_through_later_cycles(
    tmp_path: Path, peers: list[Peer]
) -> None:
    alice = Peer.create(tmp_path, "alice", bare_remote(tmp_path / "remote.git"))
    peers.append(alice)
    with running(alice):
        dead, kept = write_dead_and_live(alice, "alice")
        wait_for(lambda: kept[-1] in head_blob(alice), what="the tombstone committed")
        result = alice.cli("compact", str(alice.memory_file))
        assert result.returncode == 0, result.stderr
        for _ in range(3):  # each new line is its own cycle; the pull timer adds more
            kept.append(alice.append_entry("alice: one more lesson after the compaction."))
            wait_for(lambda: kept[-1] in head_blob(alice), what="the new line committed")
        seen = cycles(alice)
        # With a local-path remote and no new writes, only the safety cycle runs (every 6 pull intervals,
        # 12 s here): two of them can take 24 s.
        wait_for(lambda: cycles(alice) >= seen + 2, timeout=40, what="two more cycles")
        live, blob = alice.memory_file.read_bytes(), head_blob(alice)
    assert not any(line in live or line in blob for line in dead)
    assert all(line in live and line in blob for line in kept)
    assert live.count(b"\n") == blob.count(b"\n") == 1 + len(kept)  # header, kept lines, tombstone
    assert "compacted, -2 lines" in alice.store_git("log", "--format=%s")
    assert "store main: 2 lines removed" in result.stdout


def test_a_peer_loses_the_dead_lines_in_its_store_and_keeps_the_same_view(
    tmp_path: Path, peers: list[Peer]
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    peers.extend([alice, bob])
    with running(alice, bob):
        dead_a, kept_a = write_dead_and_live(alice, "alice")
        dead_b, kept_b = write_dead_and_live(bob, "bob")
        everything = dead_a + kept_a + dead_b + kept_b
        for peer in (alice, bob):
            wait_for(
                lambda peer=peer: all(line in peer.read_live(MEMORY_FILE) for line in everything),
                timeout=30,
                what=f"every line at {peer.name}",
            )
        result = alice.cli("compact", str(alice.memory_file))
        assert result.returncode == 0, result.stderr
        dead = dead_a + dead_b
        wait_for(
            lambda: not any(line in bob.read_store(MEMORY_STORE) or line in head_blob(bob) for line in dead),
            timeout=30,
            what="the dead lines gone from bob's store",
        )
        after = [alice.append_entry("alice: after the compaction."), bob.append_entry("bob: after it too.")]
        for peer in (alice, bob):
            wait_for(
                lambda peer=peer: all(line in peer.read_live(MEMORY_FILE) for line in after),
                timeout=30,
                what=f"the new lines at {peer.name}",
            )
        wait_for(
            lambda: view(alice.read_live(MEMORY_FILE)) == view(bob.read_live(MEMORY_FILE)),
            timeout=30,
            what="equal views",
        )
    live_a, live_b = alice.read_live(MEMORY_FILE), bob.read_live(MEMORY_FILE)
    assert not any(line in live_a for line in dead)
    for line in kept_a + kept_b + after:
        assert line in live_a and line in live_b and line in head_blob(bob) and line in head_blob(alice)
    assert view(live_a) == view(alice.read_store(MEMORY_STORE)) == view(bob.read_store(MEMORY_STORE))
    for data in (live_a, live_b, alice.read_store(MEMORY_STORE), bob.read_store(MEMORY_STORE)):
        assert b"<<<<<<<" not in data and b">>>>>>>" not in data


EXCHANGE_ONLY = """
from memsync.tracks.resolve import load_tracks
from memsync.store.access import cycle_lock, open_store
config = load_tracks()
store_cfg = config.stores["main"]
with cycle_lock(store_cfg):
    print([o.status for o in open_store(config, store_cfg).exchange()])
"""


def test_a_peer_line_in_the_store_not_yet_delivered_survives_the_compaction(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    dead, kept = write_dead_and_live(alice, "alice")
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    from_bob = [bob.append_entry("bob: a lesson alice has not received yet."), tombstone(kept[0])]
    append_once(bob.memory_file, from_bob[1])
    assert bob.cli("sync").returncode == 0
    # Alice's store takes bob's lines in (a cycle between exchange and deliver): her live file lacks them.
    assert "ok" in alice.run_python(EXCHANGE_ONLY)
    assert all(line in alice.read_store(MEMORY_STORE) for line in from_bob)
    assert not any(line in alice.read_live(MEMORY_FILE) for line in from_bob)

    result = alice.cli("compact", str(alice.memory_file))
    assert result.returncode == 0, result.stderr
    store = alice.read_store(MEMORY_STORE)
    assert all(line in store for line in from_bob)  # bob's entry and his tombstone stay
    assert kept[0] not in store  # dead by bob's tombstone in the store, still live in alice's file
    assert kept[0] in alice.read_live(MEMORY_FILE)

    assert alice.cli("sync").returncode == 0
    live = alice.read_live(MEMORY_FILE)
    assert all(line in live for line in from_bob)  # deliver brought them
    assert not any(line in live or line in head_blob(alice) for line in dead)
    assert view(live) == view(alice.read_store(MEMORY_STORE)) == view(head_blob(alice))
    assert alice.cli("sync").returncode == 0 and bob.cli("sync").returncode == 0
    assert view(bob.read_live(MEMORY_FILE)) == view(live)


def test_a_dead_entry_that_superseded_another_stays_so_a_peer_holding_the_target_drops_it(
    tmp_path: Path,
) -> None:
    """Found by the chaos run: X superseded by Y, Y by Z; a peer had X and not yet Y when its store lost
    Y to the compaction, so X came back into that peer's view."""
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    x = alice.append_entry("alice: the release is on Monday.")
    assert alice.cli("sync").returncode == 0 and bob.cli("sync").returncode == 0
    assert x in bob.read_live(MEMORY_FILE)
    y = alice.append_entry("alice: the release is on Tuesday.", supersedes=entry_id(x))
    z = alice.append_entry("alice: the release is on Wednesday.", supersedes=entry_id(y))
    assert alice.cli("sync").returncode == 0
    result = alice.cli("compact", str(alice.memory_file))
    assert result.returncode == 0, result.stderr
    assert x not in alice.read_live(MEMORY_FILE) and x not in alice.read_store(MEMORY_STORE)
    assert y in alice.read_live(MEMORY_FILE) and y in alice.read_store(MEMORY_STORE)
    assert alice.cli("sync").returncode == 0 and bob.cli("sync").returncode == 0
    assert z in bob.read_live(MEMORY_FILE) and x not in bob.read_store(MEMORY_STORE)
    seen = view(alice.read_live(MEMORY_FILE))
    assert view(bob.read_live(MEMORY_FILE)) == seen and [entry_id(line) for line in seen] == [entry_id(z)]

"""A full disk (and a read-only store) at each step of a sync: publish, commit, fetch, merge, fast-forward,
deliver, sync-state write (DESIGN "Hostile input", I1, I2, I7). Each case puts the part of alice's machine
that step writes on a small tmpfs the test mounts (root only; skipped, saying why, elsewhere), fills it,
and runs `memsync sync`: the step stops, says "disk full: PATH" (a path on that tmpfs) in one line, and
leaves nothing torn. Once space returns, a few syncs bring every line to every peer, with no blob of an
append-only file in any store's history holding a partial line, and the same view everywhere.

Before memsync committed only what publish wrote, a fast-forward (or merge) that ran out of space left a
half-written file in the store, and the next cycle committed it and pushed it to every peer (issue 12).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memsync.base.fsio import append_once
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import parse_memory
from memsync.formats.jsonl.view import build_view
from tests.support.blobs import torn_blobs
from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, Peer, entry_line, running
from tests.support.tmpfs import Tmpfs, move_onto, tmpfs

WORDS = ("harbor", "agent", "request", "header", "proxy", "cache", "retry", "window", "ledger", "branch")
BIG_DAY = "2026-12-01"  # a daily log the full peer does not have yet
LEAVE = 64 * 1024  # bytes left free on a filled tmpfs: less than any step below writes


def _text(rng: random.Random, size: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(size // 7))


def _entries(peer: Peer, count: int, seed: int) -> list[bytes]:
    """``count`` memory lines of ~2 KB appended to ``peer``'s memory file in one write."""
    rng = random.Random(seed)
    lines = [entry_line(f"{peer.name} {i}: {_text(rng, 2000)}") for i in range(count)]
    append_once(peer.memory_file, b"".join(lines))
    return lines


def _big_daily(peer: Peer, seed: int) -> list[bytes]:
    """~450 KB of lines in a new daily log of ``peer``, in one write."""
    rng = random.Random(seed)
    lines = [f"- [10:{i % 60:02d}] {peer.name} {i}: {_text(rng, 1500)}\n".encode() for i in range(300)]
    peer.append_daily(b"".join(lines).decode(), day=BIG_DAY)
    return lines


def _sync(peer: Peer) -> subprocess.CompletedProcess[str]:
    # In-process: the sync and its one-line error edge are what is tested, not the interpreter's start.
    result = peer.main("sync")
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _settle(*peers: Peer) -> None:
    """One sync of each peer, in order (the first one brings what stayed behind, the next ones fetch it);
    each must have pushed everything."""
    for peer in peers:
        result = _sync(peer)
        assert result.returncode == 0, f"{peer.name}: {result.stderr}"


def _said_disk_full(result: subprocess.CompletedProcess[str], disk: Tmpfs) -> str:
    """The one failing sync: exit 1 or 75, a "disk full: PATH" naming a path on ``disk``."""
    assert result.returncode in (1, 75), result.stderr
    found = re.search(r"disk full: (\S+?)\.?(?:\s|$)", result.stderr)
    assert found, result.stderr
    assert Path(found[1]).is_relative_to(disk.path) or Path(found[1]).resolve().is_relative_to(disk.path), (
        result.stderr
    )
    return found[1]


def _view(peer: Peer) -> bytes:
    parsed = parse_memory(peer.read_live(MEMORY_FILE))
    when = datetime(2100, 1, 1, tzinfo=UTC)
    return b"\n".join(
        canonical_json(e.to_obj()) for e in build_view([r.record for r in parsed.records], when)
    )


def _converged(remote: Path, lines: list[bytes], daily: dict[str, list[bytes]], *peers: Peer) -> None:
    """Every line on every peer, no torn append-only blob in any history, the same views, a clean store."""
    for peer in peers:
        memory = peer.read_live(MEMORY_FILE)
        assert all(line in memory for line in lines), f"{peer.name} lacks memory lines"
        for day, written in daily.items():
            log = Counter(peer.read_live(f"daily/{day}.md").splitlines(keepends=True))
            assert all(log[line] >= 1 for line in written), f"{peer.name} lacks lines of {day}"
        assert torn_blobs(peer.store) == [], peer.name
        assert peer.store_git("status", "--porcelain") == "", peer.name
    assert torn_blobs(remote) == []
    assert len({_view(peer) for peer in peers}) == 1
    assert len({peer.read_live(f"daily/{BIG_DAY}.md") for peer in peers}) == 1


def _space_back(
    disk: Tmpfs, remote: Path, lines: list[bytes], daily: dict[str, list[bytes]], *peers: Peer
) -> None:
    """Free ``disk``, sync each peer once, and check they converged (``_converged``)."""
    disk.free()
    _settle(*peers)
    _converged(remote, lines, daily, *peers)


def _undone_on_a_full_disk(alice: Peer, disk: Tmpfs) -> None:
    """alice's store disk filled, her sync's merge or fast-forward of bob's big log stops, saying so, and
    is undone: nothing left in the store's worktree, nothing of the log delivered."""
    disk.fill(LEAVE)
    _said_disk_full(_sync(alice), disk)
    assert alice.store_git("status", "--porcelain") == ""
    assert not (alice.role_dir / "daily" / f"{BIG_DAY}.md").exists()


def _store_on(tmp_path: Path, remote: Path, disk: Tmpfs, name: str = "alice") -> Peer:
    """A peer whose store's worktree (and git dir) is on ``disk``, but for its objects and memsync's
    meta dir, which stay on the big disk: only what git checks out and publish writes goes to ``disk``."""
    peer = Peer.create(tmp_path, name, remote, init_store=False)
    peer.config.write_text(peer.config.read_text().replace(str(peer.store), str(disk.path / "store")))
    peer.store = disk.path / "store"
    peer.init_store()
    (tmp_path / f"{name}-big-disk").mkdir()
    for part in ("objects", "memsync"):
        move_onto(peer.store / ".git" / part, tmp_path / f"{name}-big-disk")
    return peer


def _pair(tmp_path: Path, remote: Path, alice: Peer | None = None) -> tuple[Peer, Peer]:
    """alice (made by the caller, say with her store on a small disk) and bob, on one history."""
    alice = alice or Peer.create(tmp_path, "alice", remote)
    return alice, Peer.create(tmp_path, "bob", remote)


def test_disk_full_while_publishing(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote, _store_on(tmp_path, remote, disk))
        disk.fill(LEAVE)
        lines = _entries(alice, 150, seed=1)
        before = alice.read_live(MEMORY_FILE)
        _said_disk_full(_sync(alice), disk)
        assert alice.read_live(MEMORY_FILE) == before  # nothing delivered, nothing cut
        _space_back(disk, remote, lines, {}, alice, bob)


def test_disk_full_while_committing(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote)
        move_onto(alice.store / ".git" / "objects", disk.path)
        disk.fill(8 * 1024)
        lines = _entries(alice, 150, seed=2)
        _said_disk_full(_sync(alice), disk)
        _space_back(disk, remote, lines, {}, alice, bob)


def test_disk_full_while_fetching(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote)
        move_onto(alice.store / ".git" / "objects", disk.path)
        lines = _entries(bob, 200, seed=3)
        assert _sync(bob).returncode == 0
        disk.fill(16 * 1024)
        said = _sync(alice)
        _said_disk_full(said, disk)
        assert "cannot fetch from origin" in said.stderr, said.stderr
        _space_back(disk, remote, lines, {}, alice, bob)


@pytest.mark.slow
def test_disk_full_while_merging(tmp_path: Path, remote: Path) -> None:
    """alice has a commit of her own when bob's arrive: a real merge (the memory file changed on both
    sides), whose new daily log does not fit. The merge is undone, the half-written log deleted."""
    link = tmp_path / "remote-link.git"
    link.symlink_to(remote)
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote, _store_on(tmp_path, link, disk))
        link.unlink()  # alice offline: her line is committed, not pushed
        mine = _entries(alice, 1, seed=4)
        assert _sync(alice).returncode == 75
        link.symlink_to(remote)
        theirs = _entries(bob, 1, seed=5)
        daily = _big_daily(bob, seed=6)
        assert _sync(bob).returncode == 0
        _undone_on_a_full_disk(alice, disk)
        _space_back(disk, remote, mine + theirs, {BIG_DAY: daily}, alice, bob)


def test_disk_full_while_fast_forwarding(tmp_path: Path, remote: Path) -> None:
    """The case of issue 12: a fast-forward runs out of space writing a big memory file. It is undone
    (the torn file deleted), never committed, never delivered."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote, _store_on(tmp_path, remote, disk))
        daily = _big_daily(bob, seed=7)
        assert _sync(bob).returncode == 0
        _undone_on_a_full_disk(alice, disk)
        _space_back(disk, remote, [], {BIG_DAY: daily}, alice, bob)


def test_disk_full_while_delivering(tmp_path: Path, remote: Path) -> None:
    """The live memory file's disk is full: the append of bob's lines is taken back whole, so no partial
    line is left there for publish to take as a line once the grace period ends."""
    alice = Peer.create(tmp_path, "alice", remote)
    alice.configure(partial_line_grace_s=1.0)  # a cut line would be published soon after
    live = alice.memory_file.parent
    with tmpfs(live.with_name("live-disk"), "1m") as disk:
        shutil.move(alice.memory_file, disk.path / MEMORY_FILE)
        live.rmdir()
        live.symlink_to(disk.path)
        alice, bob = _pair(tmp_path, remote, alice)
        lines = _entries(bob, 150, seed=8)
        assert _sync(bob).returncode == 0
        before = alice.read_live(MEMORY_FILE)
        disk.fill(16 * 1024)
        _said_disk_full(_sync(alice), disk)
        assert alice.read_live(MEMORY_FILE) == before
        _space_back(disk, remote, lines, {}, alice, bob)


def test_disk_full_under_the_sync_state(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "2m") as disk:
        alice, bob = _pair(tmp_path, remote)
        move_onto(alice.store / ".git" / "memsync", disk.path)
        disk.fill(0)
        lines = _entries(alice, 20, seed=9)
        _said_disk_full(_sync(alice), disk)
        _space_back(disk, remote, lines, {}, alice, bob)


def test_a_read_only_store_stops_the_sync_and_loses_nothing(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote, _store_on(tmp_path, remote, disk))
        disk.read_only()
        lines = _entries(alice, 3, seed=10)
        said = _sync(alice)
        assert said.returncode == 1 and "Read-only file system" in said.stderr, said.stderr
        disk.read_only(False)
        _settle(alice, bob)
        _converged(remote, lines, {}, alice, bob)


@pytest.mark.slow
def test_the_daemon_retries_a_full_disk_with_backoff_and_converges(tmp_path: Path, remote: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        alice, bob = _pair(tmp_path, remote, _store_on(tmp_path, remote, disk))
        disk.fill(LEAVE)
        with running(alice):
            daily = _big_daily(bob, seed=11)
            assert _sync(bob).returncode == 0
            wait_for(lambda: "disk full: " in alice.log(), timeout=60, what="alice's daemon to say disk full")
            wait_for(
                lambda: len(re.findall(r"cycle \(.*a remote is tried again", alice.log())) >= 2,
                timeout=60,
                what="retries with backoff",
            )
            assert not (alice.role_dir / "daily" / f"{BIG_DAY}.md").exists()
            disk.free()
            wait_for(lambda: alice.read_live(f"daily/{BIG_DAY}.md") == b"".join(daily), timeout=90)
        _settle(alice, bob)
        _converged(remote, [], {BIG_DAY: daily}, alice, bob)


def test_a_change_memsync_did_not_write_is_put_back_never_committed(tmp_path: Path, remote: Path) -> None:
    """A file left in the store (a half-written checkout, an edit by hand) and a committed file changed
    there: the next sync puts both back as the last commit has them and says so; nothing of them is
    committed, pushed or delivered."""
    alice = Peer.create(tmp_path, "alice", remote)
    entry = alice.write_curated("harbor", "The harbor site blocks requests without a user agent.\n")
    alice, bob = _pair(tmp_path, remote, alice)
    (alice.store / "roles" / "qa" / "daily").mkdir(parents=True, exist_ok=True)
    (alice.store / "roles" / "qa" / "daily" / f"{DAY}.md").write_bytes(b"- [10:00] a torn li")
    committed = alice.store / "roles" / "qa" / "harbor.md"
    committed.write_bytes(b"edited in the store by hand\n")
    line = alice.append_entry("published as usual")
    said = _sync(alice)
    assert said.returncode == 0, said.stderr
    assert "put back" in said.stderr and f"daily/{DAY}.md" in said.stderr, said.stderr
    assert committed.read_bytes() == entry
    assert alice.store_git("status", "--porcelain") == ""
    _settle(alice, bob)
    assert b"a torn li" not in alice.read_live(f"daily/{DAY}.md") + bob.read_live(f"daily/{DAY}.md")
    assert alice.read_live("harbor.md") == bob.read_live("harbor.md") == entry
    assert line in bob.read_live(MEMORY_FILE)
    assert torn_blobs(remote) == []


_KILLED_BEFORE_THE_COMMIT = """
import os, signal
from memsync.tracks.resolve import load_tracks
from memsync.commands.sync import run_all
from memsync.store.facade import Store
Store.commit_all = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
run_all(load_tracks())
"""


def test_lines_published_by_a_process_killed_before_its_commit_are_committed_on_restart(
    tmp_path: Path, remote: Path
) -> None:
    """kill -9 between publish and commit: the sync state says the lines are published, so the next sync
    must commit them (not put them back: they would never be published again, I1, I7)."""
    alice, bob = _pair(tmp_path, remote)
    lines = _entries(alice, 5, seed=12)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_BEFORE_THE_COMMIT],
        env={**os.environ, **alice.env},
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    assert all(line in alice.read_store(MEMORY_STORE) for line in lines)
    assert alice.store_git("status", "--porcelain") != ""  # published, not committed
    _settle(alice, bob)
    _converged(remote, lines, {}, alice, bob)

"""The short chaos run (about a minute): three peers, SIGKILLed daemons, an unreachable remote, clock
skew, one compaction; then DESIGN I1-I4 must hold. The long run is ``bench/chaos.py``. Also the bugs the
chaos run found, each as a small exact test."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsync.merge.daily import merge_daily
from tests.support.chaos.harness import Chaos
from tests.support.helpers import bare_remote
from tests.support.peers import Peer


@pytest.fixture
def chaos(tmp_path: Path) -> Iterator[Chaos]:
    run = Chaos.create(tmp_path, seed=7)
    try:
        yield run
    finally:
        run.kill_all()


@pytest.mark.slow
def test_three_peers_under_kills_and_outages_lose_nothing_and_converge(chaos: Chaos) -> None:
    chaos.run(write_s=22.0, min_kills=6)
    chaos.stop_daemons()
    figures = chaos.check()
    print(figures.render())
    assert figures.problems == []
    assert figures.kills >= 6 and figures.outages >= 1 and figures.compact_done
    assert figures.entries_written > 50 and figures.daily_lines_written > 50
    assert figures.lost == 0 and figures.duplicated_memory == 0
    assert figures.torn_blobs == 0 and figures.blobs_checked > 0
    assert figures.markers == 0
    assert figures.views_identical and figures.whole_files_identical and figures.daily_identical


def test_daily_merge_after_a_peer_reordered_our_block_keeps_each_line_once() -> None:
    """Found by the chaos run (~85 repeated lines per peer); fixed in merge_daily since."""
    # Peer Y appended b; peer X merged it after its own a (blocks ordered by stamp) and appended x;
    # meanwhile Y appended y. Y now merges X's head with base = its own commit with b.
    day, a, b = b"# 2026-11-30\n", b"- [10:00] a from X\n", b"- [10:01] b from Y\n"
    x, y = b"- [10:03] x from X\n", b"- [10:02] y from Y\n"
    merged = merge_daily(day + b, day + b + y, day + a + b + x)
    assert Counter(merged.splitlines(keepends=True)) == Counter([day, a, b, x, y])


def test_compact_on_a_tracked_file_survives_the_next_sync(tmp_path: Path) -> None:
    """Found by the chaos run (0 lines compacted away: the next sync delivered the dead lines back);
    fixed by memsync/compaction.py."""
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    dead = alice.append_entry("superseded soon")
    alice.append_entry("still true", supersedes=json.loads(dead)["id"])
    assert alice.cli("sync").returncode == 0
    assert alice.cli("compact", str(alice.memory_file)).returncode == 0
    assert dead not in alice.memory_file.read_bytes()
    assert alice.cli("sync").returncode == 0
    assert dead not in alice.memory_file.read_bytes()


def test_daily_merge_when_both_sides_moved_a_block_before_the_base_keeps_each_line_once() -> None:
    """Found by the chaos run after the first fix (~20 repeated lines per run); fixed in merge_daily."""
    base = b"- [13:56] b1 step 3\n- [13:56] b2 step 2\n"
    moved = b"- [13:56] a1 step 1\n- [13:56] a2 step 2\n"  # merged in before the base on both sides
    ours = moved + base + b"- [13:57] b1 step 9\n"
    theirs = b"- [13:55] c1 step 8\n" + moved + base + b"- [13:57] a2 step 4\n"
    merged = merge_daily(base, ours, theirs)
    assert Counter(merged.splitlines(keepends=True)) == Counter(
        (b"- [13:55] c1 step 8\n" + moved + base + b"- [13:57] b1 step 9\n- [13:57] a2 step 4\n").splitlines(
            keepends=True
        )
    )
    assert merge_daily(base, theirs, ours) == merged


def test_daily_merge_of_a_block_both_tails_hold_at_different_places_keeps_it_once() -> None:
    """Found by the 3-minute chaos run after the two fixes above (6-27 repeated lines): in the appended
    tail, a block both sides had merged from a third peer at different places (criss-cross merges) was
    kept twice; merge_daily now keeps a run of two or more text lines both tails hold once each only
    once (a lone such line is taken as written on both machines and kept twice)."""
    base = b"# 2026-11-30\n"
    a1, a2, a3 = b"- [14:21] a step 1\n", b"- [14:21] a step 2\n", b"- [14:22] a step 3\n"
    b1, b2, b3 = b"- [14:21] b step 1\n", b"- [14:21] b step 2\n", b"- [14:22] b step 3\n"
    ours = base + a1 + a2 + b1 + b2 + a3  # merged b's block after its own, then appended a3
    theirs = base + b1 + b2 + b3  # b's own machine appended b3
    merged = merge_daily(base, ours, theirs)
    assert Counter(merged.splitlines(keepends=True)) == Counter([base, a1, a2, a3, b1, b2, b3])
    assert merged == base + a1 + a2 + b1 + b2 + a3 + b3  # both tails in their own order
    assert merge_daily(base, theirs, ours) == merged

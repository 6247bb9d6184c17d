"""Two peers, each running `python -m memsync daemon` in its own HOME, syncing through one bare remote that
is a local path (issue 4 "Tests"): what one writes reaches the other, concurrent writes converge, an
outage heals, daily logs arrive byte-identical, no torn line is ever committed, kill -9 loses nothing,
a second daemon refuses, and the real corpus arrives whole."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.helpers import CORPUS_CREDENTIAL, git, wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer, running

pytestmark = pytest.mark.slow


@pytest.fixture
def pair(tmp_path: Path, remote: Path, peers: list[Peer]) -> tuple[Peer, Peer]:
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    peers.extend([alice, bob])
    return alice, bob


def lines_of(data: bytes) -> Counter[bytes]:
    return Counter(data.splitlines(keepends=True))


def test_entry_appended_on_a_arrives_in_b(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    # How fast it arrives is bench/sync_bench.py's figure; here, that each line arrives, whole and once.
    with running(alice, bob):
        for i in range(5):
            line = alice.append_entry(f"Lesson number {i} from alice.")
            wait_for(lambda line=line: line in bob.read_live(MEMORY_FILE), timeout=60, what="arrival at bob")
    assert lines_of(bob.read_live(MEMORY_FILE)) == lines_of(alice.read_live(MEMORY_FILE))


def test_curated_entry_written_on_b_appears_on_a(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    with running(alice, bob):
        data = bob.write_curated("harbor_user_agent", "The harbor site needs a user agent.\n")
        wait_for(lambda: alice.read_live("harbor_user_agent.md") == data, timeout=15)
        changed = bob.write_curated("harbor_user_agent", "The harbor site needs a browser user agent.\n")
        wait_for(lambda: alice.read_live("harbor_user_agent.md") == changed, timeout=15)


def test_both_append_at_once_both_see_the_union(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    with running(alice, bob):
        written: list[bytes] = []

        def writer(peer: Peer) -> None:
            for i in range(10):
                written.append(peer.append_entry(f"{peer.name} note {i}"))
                written.append(peer.append_daily(f"- [10:{i:02d}] {peer.name} did thing {i}\n"))

        threads = [threading.Thread(target=writer, args=(p,)) for p in (alice, bob)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        daily = f"daily/{DAY}.md"
        for peer in (alice, bob):
            wait_for(
                lambda peer=peer: all(
                    line in peer.read_live(MEMORY_FILE) + peer.read_live(daily) for line in written
                ),
                timeout=30,
                what=f"union at {peer.name}",
            )
    for rel in (MEMORY_FILE, daily):
        assert lines_of(alice.read_live(rel)) == lines_of(bob.read_live(rel))
        assert all(count == 1 for line, count in lines_of(alice.read_live(rel)).items() if line.strip())


def test_both_edit_the_same_curated_entry_and_converge(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    body = "".join(f"line {i}\n" for i in range(1, 8))
    with running(alice, bob):
        first = alice.write_curated("shared", body)
        wait_for(lambda: bob.read_live("shared.md") == first, timeout=15)
    alice.write_curated("shared", body.replace("line 1\n", "line 1 edited by alice\n"))
    bob.write_curated("shared", body.replace("line 7\n", "line 7 edited by bob\n"))
    with running(alice, bob):
        wait_for(
            lambda: (
                alice.read_live("shared.md") == bob.read_live("shared.md")
                and b"alice" in alice.read_live("shared.md")
                and b"bob" in alice.read_live("shared.md")
            ),
            timeout=30,
            what="the same merged entry on both",
        )
    merged = alice.read_live("shared.md")
    assert b"line 1 edited by alice\n" in merged and b"line 7 edited by bob\n" in merged
    assert b"<<<<<<<" not in merged


def test_offline_peer_converges_when_back(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    link = tmp_path / "bob-view-of-remote.git"
    link.symlink_to(remote)
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", link)
    peers.extend([alice, bob])
    with running(alice, bob):
        link.unlink()
        written = []
        for i in range(5):
            written.append(alice.append_entry(f"alice while bob is away {i}"))
            written.append(bob.append_entry(f"bob while away {i}"))
        wait_for(lambda: "remote origin failed" in bob.log(), timeout=15, what="bob notices the outage")
        wait_for(lambda: all(line in alice.read_store(MEMORY_STORE) for line in written[::2]), timeout=15)
        wait_for(
            lambda: (
                bob.commits() >= 2 and all(line in bob.read_store(MEMORY_STORE) for line in written[1::2])
            ),
            timeout=15,
        )
        link.symlink_to(remote)
        for peer in (alice, bob):
            wait_for(
                lambda peer=peer: all(line in peer.read_live(MEMORY_FILE) for line in written),
                timeout=30,
                what=f"convergence at {peer.name}",
            )
        assert "reachable again" in bob.log() or "works again" in bob.log()
    assert lines_of(alice.read_live(MEMORY_FILE)) == lines_of(bob.read_live(MEMORY_FILE))


def test_daily_log_with_repeated_and_blank_lines_arrives_byte_identical(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    daily = f"daily/{DAY}.md"
    chunks = [
        f"# {DAY} — qa\n\n",
        "- [09:00] ok\n",
        "- [09:00] ok\n\n\n",
        "```\ncode\n\n```\n",
        "- [09:00] ok\n",
        "\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "- ünïcødé → 🟥\n",
        "\n",
    ]
    with running(alice, bob):
        for i, chunk in enumerate(chunks):
            alice.append_daily(chunk)
            if i in (1, 4, len(chunks) - 1):  # arrivals in several cycles, not one
                wait_for(lambda: bob.read_live(daily) == alice.read_live(daily), timeout=15)
    assert bob.read_live(daily) == "".join(chunks).encode()


def all_blobs(peer: Peer, rel: str) -> list[bytes]:
    """Every version of store path ``rel`` in the peer's store history."""
    shas = peer.store_git("log", "--all", "--format=%H", "--", rel).split()
    return [
        subprocess.run(
            ["git", "show", f"{sha}:{rel}"], cwd=peer.store, capture_output=True, check=False
        ).stdout
        for sha in shas
    ]


def test_a_partial_line_is_never_committed(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    daily = f"daily/{DAY}.md"
    with running(alice, bob):
        for i in range(2):
            commits = alice.commits()
            alice.append_daily(f"- [11:0{i}] start of a line that is ")
            alice.append_entry(f"complete entry {i}")  # forces a cycle while the daily line is unfinished
            wait_for(lambda commits=commits: alice.commits() > commits, timeout=15)
            alice.append_daily("finished later\n")
            wait_for(lambda: bob.read_live(daily) == alice.read_live(daily), timeout=15)
        partial = alice.append_entry("an entry without its newline").rstrip(b"\n")
        os.truncate(alice.memory_file, alice.memory_file.stat().st_size - 1)
        commits = alice.commits()
        alice.append_daily("- [12:00] another complete line\n")
        wait_for(lambda: alice.commits() > commits, timeout=15)
        assert partial not in bob.read_live(MEMORY_FILE)
    for peer in (alice, bob):
        for rel in (f"{ROLE_STORE}/{daily}", MEMORY_STORE):
            blobs = all_blobs(peer, rel)
            assert blobs
            assert all(blob == b"" or blob.endswith(b"\n") for blob in blobs), f"torn line in {rel}"


def test_kill_9_during_cycles_loses_and_duplicates_nothing(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    rng = random.Random(4)
    written: list[bytes] = []
    with bob.running():
        for round_ in range(3):
            offset = alice.start()
            for i in range(5):
                written.append(alice.append_entry(f"round {round_} entry {i}"))
                written.append(alice.append_daily(f"- round {round_} line {i}\n"))
            marker = alice.log_path.stat().st_size
            wait_for(
                lambda marker=marker: "cycle (local changes" in alice.log(marker), timeout=15, interval=0.002
            )
            time.sleep(rng.uniform(0.0, 0.15))  # somewhere inside the cycle: the point of the test
            alice.kill()
            assert "Traceback" not in alice.log(offset)
        with alice.running():
            daily = f"daily/{DAY}.md"
            for peer in (alice, bob):
                wait_for(
                    lambda peer=peer: all(
                        line in peer.read_live(MEMORY_FILE) + peer.read_live(daily) for line in written
                    ),
                    timeout=30,
                    what=f"all at {peer.name}",
                )
    for peer in (alice, bob):
        for rel in (MEMORY_FILE, f"daily/{DAY}.md"):
            counts = lines_of(peer.read_live(rel))
            assert all(n == 1 for line, n in counts.items() if line.strip()), f"duplicate in {peer.name}"
        git(peer.store, "fsck", "--no-progress")
        assert peer.store_git("status", "--porcelain") == ""


def test_a_second_daemon_refuses_naming_the_first(pair: tuple[Peer, Peer]) -> None:
    alice, _ = pair
    with alice.running():
        assert alice.proc is not None
        second = alice.cli("daemon", timeout=30)
        assert second.returncode == 1
        assert f"PID {alice.proc.pid}" in second.stderr
        assert alice.status()["daemon"] == {"running": True, "pid": alice.proc.pid}
    assert alice.status()["daemon"]["running"] is False


def test_corpus_on_a_arrives_whole_on_b(
    tmp_path: Path, remote: Path, peers: list[Peer], corpus: Path
) -> None:
    extra = {
        "alice": {
            str(tmp_path / "alice" / ".claude" / "memory"): "claude/memory",
            str(tmp_path / "alice" / "acmp.jsonl"): "memory/acmp.jsonl",
            str(tmp_path / "alice" / "qa-engineer.jsonl"): "memory/qa-engineer.jsonl",
        },
        "bob": {
            str(tmp_path / "bob" / ".claude" / "memory"): "claude/memory",
            str(tmp_path / "bob" / "acmp.jsonl"): "memory/acmp.jsonl",
            str(tmp_path / "bob" / "qa-engineer.jsonl"): "memory/qa-engineer.jsonl",
        },
    }
    (tmp_path / "alice").mkdir()
    shutil.copytree(corpus / "skill" / "acmp-claude", tmp_path / "alice" / ".claude" / "memory")
    for name in ("acmp.jsonl", "qa-engineer.jsonl"):
        shutil.copyfile(corpus / "jsonl" / name, tmp_path / "alice" / name)
    alice = Peer.create(tmp_path, "alice", remote, extra_tracks=extra["alice"], memory_header=False)
    alice.role_dir.rmdir()
    shutil.copytree(corpus / "skill" / "scout", alice.role_dir)
    bob = Peer.create(tmp_path, "bob", remote, extra_tracks=extra["bob"], memory_header=False)
    peers.extend([alice, bob])

    def tree(root: Path) -> dict[str, bytes]:
        # memsync's own temp files come and go while a delivery runs: they are not memory.
        files = (p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".memsync-tmp-"))
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}

    # The corpus's one credential stays on alice's machine (held back by the scanner).
    credential = Path(CORPUS_CREDENTIAL[0]).name

    with running(alice, bob):
        pairs = [
            (alice.role_dir, bob.role_dir),
            (tmp_path / "alice" / ".claude" / "memory", tmp_path / "bob" / ".claude" / "memory"),
        ]
        for src, dst in pairs:
            wait_for(
                lambda src=src, dst=dst: (
                    dst.is_dir()
                    and tree(dst) == {rel: data for rel, data in tree(src).items() if rel != credential}
                ),
                timeout=60,
                what=f"{dst} complete",
            )
        for name in ("acmp.jsonl", "qa-engineer.jsonl"):
            wait_for(
                lambda name=name: (
                    (tmp_path / "bob" / name).exists()
                    and (tmp_path / "bob" / name).read_bytes() == (corpus / "jsonl" / name).read_bytes()
                ),
                timeout=60,
                what=name,
            )
    assert tree(bob.role_dir) == tree(corpus / "skill" / "scout")
    held = alice.status()["stores"]["main"]["held_back_secrets"]
    live = tmp_path / "alice" / ".claude" / "memory" / credential
    assert [(item["file"], item["line"], item["detector"]) for item in held] == [
        (str(live), CORPUS_CREDENTIAL[1], CORPUS_CREDENTIAL[2])
    ]

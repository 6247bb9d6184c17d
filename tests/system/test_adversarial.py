"""Adversarial end-to-end cases: real `python -m memsync` daemons and CLI runs in separate HOMEs, a real
bare remote, and users or agents doing what memsync does not expect. Each test names the invariant
(DESIGN I1-I9) it defends and checks the outcome by content on both peers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer, entry_line, running

pytestmark = pytest.mark.slow

DAILY = f"daily/{DAY}.md"


@pytest.fixture
def pair(tmp_path: Path, remote: Path) -> Iterator[tuple[Peer, Peer]]:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    yield alice, bob
    for peer in (alice, bob):
        if not peer.proc_dead():
            peer.kill()


def committed(peer: Peer, rel: str) -> bytes:
    """Store path ``rel`` as committed at the store's HEAD; b"" when absent."""
    result = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=peer.store, capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else b""


def no_markers(*peers: Peer) -> None:
    """No unmerged path in any store and no conflict marker in any live file (I3)."""
    for peer in peers:
        assert peer.store_git("ls-files", "-u") == ""
        for path in peer.role_dir.rglob("*"):
            assert not path.is_file() or b"<<<<<<< " not in path.read_bytes(), path


def test_a_renamed_role_directory_deletes_nothing_on_the_peers(pair: tuple[Peer, Peer]) -> None:
    """I1: a user renaming (or moving away) a tracked role directory is not an agent deleting every
    curated entry: the peers keep them, the store keeps them, and the live directory is restored."""
    alice, bob = pair
    with running(alice, bob):
        alice.write_curated("alpha", "alpha content\n")
        alice.write_curated("beta", "beta content\n")
        (alice.role_dir / "MEMORY.md").write_text("- [alpha](alpha.md) first\n- [beta](beta.md) second\n")
        alice.append_daily("- a log line\n")
        wait_for(
            lambda: all(bob.read_live(rel) for rel in ("alpha.md", "beta.md", "MEMORY.md", DAILY)),
            what="alice's role directory at bob",
        )
        os.rename(alice.role_dir, alice.role_dir.with_name("qa-renamed"))
        wait_for(
            lambda: all(alice.read_live(rel) for rel in ("alpha.md", "beta.md", "MEMORY.md", DAILY)),
            timeout=4,
            what="the role directory restored at alice on the rename's event",
        )
        later = alice.append_daily("- written into the restored directory\n")
        wait_for(lambda: later in bob.read_live(DAILY), what="a line written after the restore at bob")
        for rel in ("alpha.md", "beta.md", "MEMORY.md"):
            assert bob.read_live(rel) == alice.read_live(rel) != b""
            assert bob.read_store(f"{ROLE_STORE}/{rel}") != b""
        renamed = alice.role_dir.with_name("qa-renamed")
        assert (renamed / "alpha.md").read_bytes() == alice.read_live("alpha.md")
        no_markers(alice, bob)


@pytest.mark.parametrize(
    "where", [("--detach", "HEAD"), ("-b", "feature")], ids=["detached HEAD", "other branch"]
)
def test_a_store_left_off_its_branch_by_hand_still_syncs(
    pair: tuple[Peer, Peer], where: tuple[str, ...]
) -> None:
    """I1, I4: someone inspecting the store with git leaves it on a detached HEAD or another branch while
    the daemon runs. memsync returns to its branch, keeps what it committed meanwhile, and never takes
    its own stray commit for a rewritten remote (no "run memsync resync" advice, exchange continues)."""
    alice, bob = pair
    with running(alice, bob):
        first = alice.append_entry("written before the store was left off its branch")
        wait_for(lambda: first in bob.read_live(MEMORY_FILE), what="the first line at bob")
        alice.store_git("checkout", "-q", *where)
        stray = alice.append_entry("written while the store was off its branch")
        wait_for(lambda: stray in bob.read_live(MEMORY_FILE), timeout=10, what="the stray line at bob")
        back = bob.append_entry("bob answers")
        wait_for(lambda: back in alice.read_live(MEMORY_FILE), timeout=10, what="bob's line at alice")
        assert alice.store_git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
        assert "diverged" not in alice.log() and "resync" not in alice.log()
        no_markers(alice, bob)


def test_a_fifo_in_place_of_the_tracked_memory_file_does_not_hang_the_daemon(pair: tuple[Peer, Peer]) -> None:
    """Daemon liveness: a tracked path that is a named pipe (no writer) must not stop every other file
    from syncing."""
    alice, _bob = pair
    alice.start()
    alice.memory_file.unlink()
    os.mkfifo(alice.memory_file)
    after = alice.write_curated("after-the-fifo", "written after the memory file became a pipe\n")
    wait_for(
        lambda: committed(alice, f"{ROLE_STORE}/after-the-fifo.md") == after,
        timeout=4,
        what="a curated entry committed while the memory file is a FIFO",
    )


def test_a_stale_lock_in_the_remote_is_named_not_reported_as_a_busy_remote(
    pair: tuple[Peer, Peer], remote: Path
) -> None:
    """Clear messages: a git killed on the remote's machine leaves ``refs/heads/main.lock`` there and every
    push fails with "cannot lock ref". `status` must name that file (the user has to remove it), not say
    the remote "kept moving"; once it is gone the line arrives (I1)."""
    alice, bob = pair
    lock = remote / "refs" / "heads" / "main.lock"
    with running(alice, bob):
        lock.write_bytes(b"")
        line = alice.append_entry("written while the remote's branch is locked")
        error = wait_for(
            lambda: alice.status()["stores"]["main"]["remotes"]["origin"]["last_error"],
            what="the push failure in status",
        )
        assert "main.lock" in error and "kept moving" not in error, error
        lock.unlink()
        wait_for(lambda: line in bob.read_live(MEMORY_FILE), what="the line at bob once the lock is gone")


def test_an_agent_rewriting_a_daily_log_in_place_leaves_no_torn_line(pair: tuple[Peer, Peer]) -> None:
    """I2 (no torn line), I5: an agent that rewrites a daily log in place (truncate, think, write a
    shorter summary from offset 0, no O_APPEND) must not end up with a line nobody wrote, here or on the
    peer. The pause between truncate and write is the agent thinking: it is the scenario, not a wait."""
    alice, bob = pair
    written = [b"- one\n", b"- two\n", b"- three is a longer line of the log\n"]
    summary = b"- summary of the day\n"
    with running(alice, bob):
        alice.append_daily(b"".join(written).decode())
        wait_for(lambda: written[-1] in bob.read_live(DAILY), what="the log at bob")
        with (alice.role_dir / DAILY).open("r+b") as log:
            log.truncate(0)
            log.flush()
            time.sleep(2.0)
            log.write(summary)
        wait_for(lambda: summary in bob.read_live(DAILY), what="the summary at bob")
        for data in (alice.read_live(DAILY), bob.read_live(DAILY), bob.read_store(f"{ROLE_STORE}/{DAILY}")):
            assert set(data.splitlines(keepends=True)) <= {*written, summary}, data


def test_a_file_meeting_a_directory_does_not_block_every_other_line(pair: tuple[Peer, Peer]) -> None:
    """I1, I4: alice writes the curated entry ``notes.md`` while bob, offline, made ``notes.md/`` a
    directory. Whatever memsync does with that clash, the lines both write afterwards must still meet."""
    alice, bob = pair
    alice.write_curated("notes", "alice's notes file\n")
    (bob.role_dir / "notes.md").mkdir()
    (bob.role_dir / "notes.md" / "inner.md").write_text("bob's file inside a directory named notes.md\n")
    assert alice.cli("sync").returncode == 0
    bob.cli("sync")
    later = alice.append_entry("written by alice after the clash")
    alice.cli("sync")
    bob.cli("sync")
    assert later in bob.read_live(MEMORY_FILE)


def sync(*peers: Peer) -> None:
    """One `memsync sync` per peer, in order, each required to succeed (everything pushed)."""
    for peer in peers:
        result = peer.cli("sync")
        assert result.returncode == 0, f"{peer.name}: {result.stdout}{result.stderr}"


@pytest.mark.parametrize("file_at", ["alice", "bob"])
def test_a_file_meeting_a_directory_keeps_both_and_converges(pair: tuple[Peer, Peer], file_at: str) -> None:
    """I1, I3, I4, "memsync never deletes memory to settle a conflict": one peer writes the curated entry
    ``notes.md`` while the other, offline, made ``notes.md/`` a directory. The stores settle it alike
    (the directory keeps the name, the file moves to ``notes.conflict-file.md``), nothing is lost, and the
    live files converge: the synced live file gives way to the directory, its text beside it. An edit
    made to it meanwhile keeps it in place and `status` says what to rename."""
    alice, bob = pair
    with_file, with_dir = (alice, bob) if file_at == "alice" else (bob, alice)
    text = with_file.write_curated("notes", "the notes file\n")
    inner = b"a file inside a directory named notes.md\n"
    (with_dir.role_dir / "notes.md").mkdir()
    (with_dir.role_dir / "notes.md" / "inner.md").write_bytes(inner)
    sync(alice, bob, alice, bob)
    assert alice.store_git("ls-tree", "-r", "HEAD") == bob.store_git("ls-tree", "-r", "HEAD")
    for peer in (alice, bob):
        assert committed(peer, f"{ROLE_STORE}/notes.md/inner.md") == inner
        assert committed(peer, f"{ROLE_STORE}/notes.conflict-file.md") == text
        assert peer.read_live("notes.conflict-file.md") == text
    for peer in (alice, bob):
        assert peer.read_live("notes.md/inner.md") == inner
        assert peer.status()["stores"]["main"]["clashes"] == []
        assert peer.status()["stores"]["main"]["set_aside"] == [str(peer.role_dir / "notes.conflict-file.md")]
    lines = alice.append_entry("alice, after the clash"), bob.append_entry("bob, after the clash")
    sync(alice, bob, alice)
    assert all(line in peer.read_live(MEMORY_FILE) for line in lines for peer in (alice, bob))
    assert alice.store_git("ls-tree", "-r", "HEAD") == bob.store_git("ls-tree", "-r", "HEAD")
    no_markers(alice, bob)


def test_a_file_edited_while_a_peer_made_it_a_directory_keeps_the_edit_beside_it(
    pair: tuple[Peer, Peer],
) -> None:
    """Bob turns the synced ``notes.md`` into a directory while alice edits the file: the edit is
    published before the merge, so it lands beside the directory (``notes.conflict-file.md``) on both
    peers, alice's live path becomes the directory, and nothing clashes. (An edit made in the instant
    between publish and deliver is kept in place and reported instead: see tests/sync/test_passes.py.)"""
    alice, bob = pair
    alice.write_curated("notes", "the notes file\n")
    sync(alice, bob)
    inner = b"a file inside a directory named notes.md\n"
    (bob.role_dir / "notes.md").unlink()
    (bob.role_dir / "notes.md").mkdir()
    (bob.role_dir / "notes.md" / "inner.md").write_bytes(inner)
    sync(bob)
    edited = alice.write_curated("notes", "edited before the directory arrived\n")
    sync(alice, bob)
    for peer in (alice, bob):
        assert peer.read_live("notes.md/inner.md") == inner
        assert peer.read_live("notes.conflict-file.md") == edited
        assert peer.status()["stores"]["main"]["clashes"] == []
    assert alice.store_git("ls-tree", "-r", "HEAD") == bob.store_git("ls-tree", "-r", "HEAD")
    no_markers(alice, bob)


def test_a_directory_meeting_a_file_already_in_the_store_is_kept_and_named(
    tmp_path: Path, remote: Path
) -> None:
    """The reverse on one machine: bob starts syncing with a directory ``notes.md/`` in his role while
    the store he clones has alice's file ``notes.md``. Nothing of his is lost or published into the
    file's place, `status` tells him to rename the directory, the other files sync."""
    alice = Peer.create(tmp_path, "alice", remote)
    text = alice.write_curated("notes", "alice's notes file\n")
    sync(alice)
    bob = Peer.create(tmp_path, "bob", remote, init_store=False)
    inner = b"bob's file in a directory named notes.md\n"
    (bob.role_dir / "notes.md").mkdir()
    (bob.role_dir / "notes.md" / "inner.md").write_bytes(inner)
    other = bob.write_curated("other", "bob's other entry\n")
    bob.init_store()
    sync(bob, alice)
    assert alice.read_live("other.md") == other
    assert bob.read_live("notes.md/inner.md") == inner
    assert committed(bob, f"{ROLE_STORE}/notes.md") == text
    [clash] = bob.status()["stores"]["main"]["clashes"]
    assert clash["file"] == str(bob.role_dir / "notes.md") and clash["here"] == "directory"
    (bob.role_dir / "notes.md").rename(bob.role_dir / "notes-dir")
    sync(bob, alice)
    assert bob.read_live("notes.md") == text and alice.read_live("notes-dir/inner.md") == inner
    assert bob.status()["stores"]["main"]["clashes"] == []


def test_a_role_directory_behind_a_dangling_symlink_deletes_nothing(tmp_path: Path, remote: Path) -> None:
    """I1: ``~/.agents/memory/qa`` is a symlink to a drive that is not mounted right now. That is not an
    agent deleting every file: the peers keep them, the other tracks go on syncing without a failing
    cycle, and once the drive is back its changes sync again."""
    alice = Peer.create(tmp_path, "alice", remote, init_store=False)
    bob = Peer.create(tmp_path, "bob", remote)
    drive = tmp_path / "drive"
    drive.mkdir()
    alice.role_dir.rename(drive / "qa")
    alice.role_dir.symlink_to(drive / "qa")
    alice.init_store()
    try:
        with running(alice, bob):
            alice.write_curated("alpha", "alpha content\n")
            wait_for(lambda: bob.read_live("alpha.md"), what="alpha at bob")
            drive.rename(tmp_path / "drive-unmounted")
            line = alice.append_entry("the memory file still syncs")
            wait_for(lambda: line in bob.read_live(MEMORY_FILE), what="a line of the other track at bob")
            assert alice.read_store(f"{ROLE_STORE}/alpha.md") and bob.read_live("alpha.md")
            assert "sync cycle failed" not in alice.log()
            (tmp_path / "drive-unmounted").rename(drive)
            beta = alice.write_curated("beta", "written once the drive is back\n")
            alice.append_entry("an agent writes on")  # the old watch is gone with the drive
            wait_for(lambda: bob.read_live("beta.md") == beta, what="beta at bob")
            assert bob.read_live("alpha.md")
    finally:
        for peer in (alice, bob):
            if not peer.proc_dead():
                peer.kill()


def test_writes_behind_symlinked_tracked_paths_are_seen_at_once(tmp_path: Path, remote: Path) -> None:
    """Issue 4 "Watch": a role directory and a memory file that are symlinks (to a synced folder, say)
    get their changes committed on the event, not minutes later on the safety-net pull timer."""
    alice = Peer.create(tmp_path, "alice", remote, init_store=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for live in (alice.role_dir, alice.memory_file):
        live.rename(elsewhere / live.name)
        live.symlink_to(elsewhere / live.name)
    alice.init_store()
    try:
        with running(alice):
            entry = alice.write_curated("alpha", "written through the symlinked role directory\n")
            wait_for(
                lambda: committed(alice, f"{ROLE_STORE}/alpha.md") == entry,
                timeout=4,
                what="a curated entry committed on its event",
            )
            line = entry_line("appended to the memory file's target")
            with (elsewhere / alice.memory_file.name).open("ab") as target:
                target.write(line)
            wait_for(
                lambda: line in committed(alice, MEMORY_STORE),
                timeout=4,
                what="an append to the symlink's target committed on its event",
            )
    finally:
        if not alice.proc_dead():
            alice.kill()


def test_a_second_daemon_on_the_same_config_by_another_path_refuses(pair: tuple[Peer, Peer]) -> None:
    """Issue 4 "Daemon": single instance per store, whatever spelling of the config path starts it."""
    alice, _bob = pair
    alice.start()
    other_name = alice.config.parent / ".." / alice.config.parent.name / alice.config.name
    second = subprocess.Popen(
        [sys.executable, "-m", "memsync", "daemon"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **alice.env, "MEMSYNC_CONFIG": str(other_name)},
    )
    try:
        _out, err = second.communicate(timeout=60)  # generous: a loaded machine starts Python slowly
    except subprocess.TimeoutExpired:
        second.kill()
        second.communicate()
        raise AssertionError(f"a second daemon runs for {other_name}") from None
    assert second.returncode == 1 and "already running" in err, err


def test_conflict_markers_pushed_by_another_tool_never_reach_a_live_memory_file(
    pair: tuple[Peer, Peer], remote: Path, tmp_path: Path
) -> None:
    """I3: a tool other than memsync pushed a memory file holding a conflict it left unresolved. The
    entry inside reaches the live file; the marker lines never do."""
    alice, _bob = pair
    assert alice.cli("sync").returncode == 0
    hand = tmp_path / "tools" / "hand"
    subprocess.run(["git", "clone", "-q", str(remote), str(hand)], check=True, capture_output=True)
    entry = b'{"created_at":"2026-11-30T10:00:00Z","id":"byhand1","kind":"fact","text":"pushed by hand"}\n'
    with (hand / MEMORY_STORE).open("ab") as memory:
        memory.write(b"<<<<<<< HEAD\n" + entry + b"=======\n>>>>>>> other\n")
    for args in (("add", "-A"), ("commit", "-qm", "by hand"), ("push", "-q", "origin", "main")):
        subprocess.run(["git", *args], cwd=hand, check=True, capture_output=True)
    assert alice.cli("sync").returncode == 0
    live = alice.read_live(MEMORY_FILE)
    assert entry in live
    assert b"<<<<<<<" not in live and b">>>>>>>" not in live and b"=======\n" not in live

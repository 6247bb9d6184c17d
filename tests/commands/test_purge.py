"""`memsync purge` (DESIGN I6) across two peers and a bare remote, through real subprocesses: the text
leaves the live files, every object of both stores and every reachable object of the remote, the remote is
rewritten once, the other peer's status says so, and after that peer's purge nothing else is lost."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.commands.needle import Needle
from memsync.commands.purge import PURGE_RECORD, record_line, recorded_hashes, reset_sync_state
from memsync.errors import MemsyncError
from memsync.merge.kinds import merge_for_path
from memsync.store.rewrite import filter_stream, line_hash
from memsync.sync.records import AppendState, HeldLine, PendingDelivery, WholeState
from memsync.sync.state import SyncState
from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, Peer, entry_line
from tests.support.stores import new_store

# A credential no scanner knows (the scanner does know one after "PIN:"): it reaches the store and must
# be purged.
PIN = "4711-ALPHA-ZULU-pin"
DAILY = f"daily/{DAY}.md"


def objects_holding(repo: Path, text: bytes, *, reachable_only: bool) -> int:
    """How many objects of ``repo`` contain ``text`` (every object, or those reachable from a ref)."""
    if reachable_only:
        listing = subprocess.run(
            ["git", "rev-list", "--objects", "--all"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.split()
        request = "".join(f"{word}\n" for word in listing if len(word) == 40).encode()
        args = ["git", "cat-file", "--batch"]
    else:
        request, args = b"", ["git", "cat-file", "--batch-all-objects", "--batch"]
    out = subprocess.run(args, cwd=repo, input=request, capture_output=True, check=True).stdout
    count = pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        count += text in out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return count


def run(peer: Peer, *args: str, expect: int = 0) -> str:
    # In-process (cli_main): the command and its output are tested here, not the interpreter's start.
    result = peer.main(*args)
    assert result.returncode == expect, f"{peer.name} {args}: exit {result.returncode}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result.stdout + result.stderr


@pytest.mark.slow
def test_purge_removes_text_from_live_files_and_all_history_on_both_peers(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    keep = [alice.append_entry("the harbor site needs a user agent")]
    alice.append_entry(f"door code for the lab is {PIN}")
    alice.append_daily(f"- [09:00] unlocked with {PIN}\n- [09:01] ran the probe\n")
    alice.write_curated("lab_access", f"How to get in.\n\nDoor code: {PIN}\nAsk facilities for a badge.\n")
    run(alice, "sync")
    run(bob, "sync")
    keep.append(bob.append_entry("bob's lesson from before the purge"))
    run(bob, "sync")
    run(alice, "sync")
    assert PIN.encode() in bob.read_live(MEMORY_FILE)
    keep.append(bob.append_entry("bob wrote this while alice purged"))  # not yet synced

    said = run(alice, "purge", PIN, "--yes")
    assert "force-pushed" in said
    assert "Run the same `memsync purge` (or `memsync resync REMOTE`) on every other machine" in said
    pin = PIN.encode()
    for rel in (MEMORY_FILE, DAILY, "lab_access.md"):
        assert pin not in alice.read_live(rel)
    assert b"- [09:01] ran the probe\n" in alice.read_live(DAILY)
    assert alice.read_live("lab_access.md").endswith(b"How to get in.\n\nAsk facilities for a badge.\n")
    assert objects_holding(alice.store, pin, reachable_only=False) == 0
    assert objects_holding(remote, pin, reachable_only=True) == 0

    # Bob's next sync sees a rewritten remote and does not merge it back; status says what happened.
    said = run(bob, "sync", expect=75)
    assert "rewritten" in said
    origin = bob.status()["stores"]["main"]["remotes"]["origin"]
    assert origin["status"] == "diverged" and "resync origin" in origin["last_error"]
    assert objects_holding(remote, pin, reachable_only=True) == 0

    said = run(bob, "purge", PIN, "--yes")
    assert "adopted" in said
    assert objects_holding(bob.store, pin, reachable_only=False) == 0
    run(bob, "sync")
    run(alice, "sync")
    for peer in (alice, bob):
        memory = peer.read_live(MEMORY_FILE) + peer.read_live(DAILY) + peer.read_live("lab_access.md")
        assert pin not in memory
        assert all(line in peer.read_live(MEMORY_FILE) for line in keep), peer.name
        assert b"- [09:01] ran the probe\n" in peer.read_live(DAILY)
        assert objects_holding(peer.store, pin, reachable_only=False) == 0
        assert peer.status()["stores"]["main"]["remotes"]["origin"]["status"] == "ok"
    assert objects_holding(remote, pin, reachable_only=True) == 0
    assert alice.store_git("rev-parse", "HEAD") == bob.store_git("rev-parse", "HEAD")


def test_purge_an_entry_by_id_and_refuse_what_is_not_one(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    wrong = entry_line("the staging host is prod-db-01 (wrong!)")
    entry_id = wrong.split(b'"id":"')[1].split(b'"')[0].decode()
    right = alice.append_entry("the staging host is stage-db-01")
    with alice.memory_file.open("ab") as out:
        out.write(
            wrong + b'{"created_at":"2026-11-30T10:00:00Z","deleted":true,"id":"%s"}\n' % entry_id.encode()
        )
    run(alice, "sync")
    assert run(alice, "purge", "--entry", entry_id, "--yes").count("force-pushed") == 1
    shown = subprocess.run(
        ["git", "show", f"main:{MEMORY_STORE}"], cwd=remote, capture_output=True, check=True
    ).stdout
    assert entry_id.encode() not in shown and right in shown
    assert objects_holding(remote, entry_id.encode(), reachable_only=True) == 0
    assert "was not found" in run(alice, "purge", "--entry", entry_id, "--yes")
    refused = alice.main("purge", "ab", "--yes")
    assert refused.returncode == 1 and "at least 4 characters" in refused.stderr
    assert alice.cli("purge", PIN).returncode == 1  # no terminal and no --yes: refuses
    unknown = alice.main("purge", PIN, "--store", "team", "--yes")
    assert unknown.returncode == 1 and "no store named 'team'" in unknown.stderr


def test_filter_stream_drops_matching_lines_from_every_payload() -> None:
    def data(payload: bytes) -> bytes:
        return b"data %d\n" % len(payload) + payload

    head = b"commit refs/heads/main\nmark :2\ncommitter a <a@b> 0 +0000\n"
    stream = (
        b"blob\nmark :1\n"
        + data(b"keep me\nsecret-XYZ1 here\n")
        + b"\n"
        + head
        + data(b"msg\nnote secret-XYZ1\n")
        + b"M 100644 :1 f.md\n\n"
    )
    out, changed, hashes = filter_stream(stream, Needle(text="secret-XYZ1"))
    assert changed == 2
    assert out == (
        b"blob\nmark :1\n" + data(b"keep me\n") + b"\n" + head + data(b"msg\n") + b"M 100644 :1 f.md\n\n"
    )
    assert hashes == {line_hash(b"secret-XYZ1 here"), line_hash(b"note secret-XYZ1")}
    # What a purge record lists is purged by hash alone, whatever the line end; the record itself never.
    record = record_line(hashes, "alice", datetime(2026, 11, 30, 10, 0, tzinfo=UTC))
    by_hash = Needle(line_hashes=recorded_hashes(record))
    assert by_hash.drop_lines(b"keep me\r\nsecret-XYZ1 here\r\nnote secret-XYZ1") == (
        b"keep me\r\n",
        [b"secret-XYZ1 here\r\n", b"note secret-XYZ1"],
    )
    assert filter_stream(stream, by_hash)[0] == out
    assert not Needle(text="2026-11-30T10").matches(record)
    with pytest.raises(MemsyncError):
        Needle(text="x\ny")
    with pytest.raises(MemsyncError):
        Needle()


_LINE = st.lists(st.sampled_from([b"a", b"b", b" ", b"secret-XYZ1", b"{", b"2026", b"\r"]), max_size=6).map(
    b"".join
)
_PAYLOAD = st.lists(_LINE, max_size=6).map(lambda lines: b"\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(st.lists(_PAYLOAD, min_size=1, max_size=5))
def test_filtering_by_the_recorded_hashes_equals_filtering_by_the_text(payloads: list[bytes]) -> None:
    """What resync relies on: the hashes a purge by text records remove, from the same history, exactly
    what the text removed, so the rewritten commits of both machines are the same commits."""
    stream = b"".join(
        b"blob\nmark :%d\ndata %d\n%b\n" % (mark, len(data), data) for mark, data in enumerate(payloads)
    )
    by_text = filter_stream(stream, Needle(text="secret-XYZ1"))
    if not by_text[2]:
        assert by_text == (stream, 0, frozenset())
        return
    record = record_line(by_text[2], "alice", datetime(2026, 11, 30, tzinfo=UTC))
    assert b"secret-XYZ1" not in record
    assert filter_stream(stream, Needle(line_hashes=recorded_hashes(record))) == by_text


@pytest.mark.slow
def test_a_peer_that_only_runs_resync_does_not_bring_the_text_back(tmp_path: Path) -> None:
    """Bob runs `memsync resync origin` (not purge) after alice's purge: the purge record the rewritten
    history carries makes his resync remove the purged lines from his live files and his own history
    first, so nothing of his old history returns; his work from after the purge (one line committed while
    the remote was diverged, one not yet synced) reaches alice."""
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    keep = alice.append_entry("the harbor site needs a user agent")
    alice.append_entry(f"door code for the lab is {PIN}")
    alice.append_daily(f"- [09:00] unlocked with {PIN}\n- [09:01] ran the probe\n")
    alice.write_curated("lab_access", f"How to get in.\n\nDoor code: {PIN}\nAsk facilities for a badge.\n")
    run(alice, "sync")
    run(bob, "sync")
    pin = PIN.encode()
    purged_lines = [
        line
        for rel in (MEMORY_FILE, DAILY, "lab_access.md")
        for line in bob.read_live(rel).splitlines()
        if pin in line
    ]
    assert len(purged_lines) == 3

    run(alice, "purge", PIN, "--yes")
    record = subprocess.run(
        ["git", "show", f"main:{PURGE_RECORD}"], cwd=remote, capture_output=True, check=True
    ).stdout
    assert pin not in record and record.count(b"\n") == 1
    assert {line_hash(line) for line in purged_lines} <= recorded_hashes(record)
    assert not any(path.startswith(".memsync") for path in alice.status()["stores"]["main"]["untracked"])

    after = bob.append_entry("bob after the purge, committed while the remote was diverged")
    assert "rewritten" in run(bob, "sync", expect=75)
    unsynced = bob.append_entry("bob after the purge, not synced yet")
    said = run(bob, "resync", "origin")
    assert "3 lines purged there removed from 3 live files" in said and "everything pushed" in said
    assert objects_holding(remote, pin, reachable_only=True) == 0
    assert objects_holding(bob.store, pin, reachable_only=False) == 0
    run(bob, "sync")
    run(alice, "sync")
    run(bob, "sync")
    for peer in (alice, bob):
        memory = peer.read_live(MEMORY_FILE)
        assert pin not in memory + peer.read_live(DAILY) + peer.read_live("lab_access.md"), peer.name
        assert keep in memory and after in memory and unsynced in memory, peer.name
        assert b"- [09:01] ran the probe\n" in peer.read_live(DAILY)
        assert peer.read_live("lab_access.md").endswith(b"How to get in.\n\nAsk facilities for a badge.\n")
        assert peer.status()["stores"]["main"]["remotes"]["origin"]["status"] == "ok"
    assert objects_holding(remote, pin, reachable_only=True) == 0
    assert alice.store_git("rev-parse", "HEAD") == bob.store_git("rev-parse", "HEAD")


@pytest.mark.slow
def test_purge_records_from_both_peers_are_all_kept_and_honoured(tmp_path: Path) -> None:
    """Alice purges one text, bob (after adopting it by resync) another: the record file holds both
    records after the merge, and a third machine that missed both purges resyncs without bringing
    either text back."""
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    carol = Peer.create(tmp_path, "carol", remote)
    other = "token-9931-KILO-other"
    alice.append_entry(f"door code for the lab is {PIN}")
    alice.append_entry(f"the printer token is {other}")
    run(alice, "sync")
    for peer in (bob, carol):
        run(peer, "sync")
    run(alice, "purge", PIN, "--yes")
    run(bob, "resync", "origin")
    assert "force-pushed" in run(bob, "purge", other, "--yes")
    run(alice, "resync", "origin")
    record = alice.read_store(PURGE_RECORD)
    assert record == bob.read_store(PURGE_RECORD) and record.count(b"\n") == 2
    assert b'"host":"alice"' in record and b'"host":"bob"' in record
    said = run(carol, "resync", "origin")
    assert "2 lines purged there removed from 1 live file" in said
    # Carol's history, rewritten by hash, is the remote's commit for commit: nothing was re-applied.
    remote_head = subprocess.run(
        ["git", "rev-parse", "main"], cwd=remote, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert carol.store_git("rev-parse", "HEAD").strip() == remote_head
    assert objects_holding(carol.store, PIN.encode(), reachable_only=False) == 0
    run(alice, "sync")
    for peer in (alice, bob, carol):
        assert PIN.encode() not in peer.read_live(MEMORY_FILE) and other.encode() not in peer.read_live(
            MEMORY_FILE
        ), peer.name
    for text in (PIN, other):
        assert objects_holding(remote, text.encode(), reachable_only=True) == 0


def test_purge_record_files_merge_as_a_union() -> None:
    """Two machines adding a record to the same record file: git's merge (the jsonl driver, which the
    ``.jsonl`` name selects) keeps both, in one order whichever side merges."""
    base = record_line([line_hash(b"old")], "carol", datetime(2026, 11, 29, tzinfo=UTC))
    ours = base + record_line([line_hash(b"a")], "alice", datetime(2026, 11, 30, 10, tzinfo=UTC))
    theirs = base + record_line([line_hash(b"b")], "bob", datetime(2026, 11, 30, 9, tzinfo=UTC))
    merged = merge_for_path(PURGE_RECORD, base, ours, theirs)
    assert merged == merge_for_path(PURGE_RECORD, base, theirs, ours)
    assert recorded_hashes(merged) == {line_hash(b"old"), line_hash(b"a"), line_hash(b"b")}
    assert merged.count(b"\n") == 3


@pytest.mark.slow
def test_purge_while_both_daemons_run(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    pin = PIN.encode()
    try:
        with alice.running(), bob.running():
            line = alice.append_entry(f"door code for the lab is {PIN}")
            wait_for(lambda: line in bob.read_live(MEMORY_FILE), timeout=20, what="the entry at bob")
            assert "force-pushed" in run(alice, "purge", PIN, "--yes")
            wait_for(lambda: "rewritten" in bob.log(), timeout=20, what="bob noticing the rewrite")
            assert "adopted" in run(bob, "purge", PIN, "--yes")
            after = alice.append_entry("alice after the purge")
            wait_for(lambda: after in bob.read_live(MEMORY_FILE), timeout=20, what="sync after the purge")
            assert pin not in alice.read_live(MEMORY_FILE) + bob.read_live(MEMORY_FILE)
    finally:
        for peer in (alice, bob):
            if not peer.proc_dead():
                peer.kill()
    for peer in (alice, bob):
        assert objects_holding(peer.store, pin, reachable_only=False) == 0
    assert objects_holding(remote, pin, reachable_only=True) == 0


@pytest.mark.slow
def test_a_purge_on_a_machine_that_missed_another_purge_keeps_it(tmp_path: Path) -> None:
    """Alice purges one text; bob, who has not resynced, purges another. Bob's purge first adopts the
    remote's purge (its record removes alice's lines from his live files and history) and only then
    rewrites and force-pushes: the remote holds neither text, both records are in the record file, and
    carol's resync brings neither back; every other line written by anyone survives."""
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    carol = Peer.create(tmp_path, "carol", remote)
    other = "token-9931-KILO-other"
    alice.append_entry(f"door code for the lab is {PIN}")
    bob.append_entry(f"the printer token is {other}")
    keep = [
        alice.append_entry("alice plain"),
        bob.append_entry("bob plain"),
        carol.append_entry("carol plain"),
    ]
    for peer in (alice, bob, carol, alice, bob, carol):
        run(peer, "sync")
    assert run(alice, "purge", PIN, "--yes").count("force-pushed") == 1
    keep.append(bob.append_entry("bob after alice's purge, not synced"))
    keep.append(alice.append_entry("alice after her purge"))
    run(alice, "sync")

    said = run(bob, "purge", other, "--yes")
    assert "force-pushed" in said
    record = subprocess.run(
        ["git", "show", f"main:{PURGE_RECORD}"], cwd=remote, capture_output=True, check=True
    ).stdout
    assert record.count(b"\n") == 2 and b'"host":"alice"' in record and b'"host":"bob"' in record
    for text in (PIN, other):
        assert objects_holding(remote, text.encode(), reachable_only=True) == 0, text
        assert objects_holding(bob.store, text.encode(), reachable_only=False) == 0, text

    said = run(carol, "resync", "origin")
    assert "2 lines purged there removed from 1 live file" in said
    run(alice, "resync", "origin")
    for peer in (bob, carol, alice, bob, carol):
        run(peer, "sync")
    for peer in (alice, bob, carol):
        memory = peer.read_live(MEMORY_FILE)
        assert PIN.encode() not in memory and other.encode() not in memory, peer.name
        assert all(line in memory for line in keep), peer.name
        assert peer.read_store(PURGE_RECORD) == record, peer.name
    for text in (PIN, other):
        assert objects_holding(remote, text.encode(), reachable_only=True) == 0, text
    assert (
        alice.store_git("rev-parse", "HEAD")
        == bob.store_git("rev-parse", "HEAD")
        == carol.store_git("rev-parse", "HEAD")
    )


@pytest.mark.slow
def test_resync_merges_a_local_edit_of_a_whole_file_a_purge_changed(tmp_path: Path) -> None:
    """Alice purges a line of two curated entries; bob had added a line to his copy of one before he
    resyncs, alice (before her purge, not synced) to the other. The last synced version of each file is
    kept, without the purged line, as the base of the three-way merge: both end with the purged entries
    plus the added lines, and no both-kept note."""
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    alice.write_curated("harbor", f"line one\nthe key is {PIN}\nline three\n")
    alice.write_curated("dock", f"dock one\nthe dock key is {PIN}\ndock three\n")
    for peer in (alice, bob, alice, bob):
        run(peer, "sync")
    dock = alice.role_dir / "dock.md"
    dock.write_bytes(dock.read_bytes() + b"alice added dock four\n")
    run(alice, "purge", PIN, "--yes")
    harbor = bob.role_dir / "harbor.md"
    harbor.write_bytes(harbor.read_bytes() + b"bob added line four\n")
    run(bob, "resync", "origin")
    for peer in (alice, bob, alice):
        run(peer, "sync")
    for peer in (alice, bob):
        assert peer.read_live("harbor.md").endswith(b"\n\nline one\nline three\nbob added line four\n"), (
            peer.name
        )
        assert peer.read_live("dock.md").endswith(b"\n\ndock one\ndock three\nalice added dock four\n"), (
            peer.name
        )
        assert b"[memsync]" not in peer.read_live("harbor.md") + peer.read_live("dock.md")


def test_reset_sync_state_keeps_whole_file_bases_without_the_purged_lines(tmp_path: Path) -> None:
    """After a purge or resync: a whole file keeps its last synced version (and kept bytes) minus the
    purged lines; an append-only file keeps a row with its offset unknown; pending writes are dropped."""
    store = new_store(tmp_path / "store", "alice")
    with SyncState(store.meta_dir) as state:
        state.put(
            WholeState(
                "roles/qa/harbor.md",
                synced=f"one\nkey {PIN}\nthree\n".encode(),
                synced_known=True,
                held=(HeldLine(2, "pin"),),
            )
        )
        state.put(
            WholeState(
                "roles/qa/gone.md",
                synced=None,
                synced_known=True,
                kept=f"{PIN}\nx\n".encode(),
                kept_base=b"x\n",
                kept_present=True,
            )
        )
        state.put(AppendState("memory/memory.jsonl", offset=120, prefix_hash="ab" * 32))
        state.begin_delivery(
            "memory/memory.jsonl",
            PendingDelivery(b"line\n", 120, False, AppendState("memory/memory.jsonl", offset=125)),
        )
    reset_sync_state(store, Needle(text=PIN))
    with SyncState(store.meta_dir) as state:
        assert state.get("roles/qa/harbor.md") == WholeState(
            "roles/qa/harbor.md", synced=b"one\nthree\n", synced_known=True
        )
        assert state.get("roles/qa/gone.md") == WholeState(
            "roles/qa/gone.md",
            synced=None,
            synced_known=True,
            kept=b"x\n",
            kept_base=b"x\n",
            kept_present=True,
        )
        assert state.get("memory/memory.jsonl") == AppendState("memory/memory.jsonl")
        assert state.pending_delivery("memory/memory.jsonl") is None
    reset_sync_state(store)  # no purge record in the store: nothing is filtered
    with SyncState(store.meta_dir) as state:
        assert state.get("roles/qa/gone.md") == WholeState(
            "roles/qa/gone.md",
            synced=None,
            synced_known=True,
            kept=b"x\n",
            kept_base=b"x\n",
            kept_present=True,
        )

"""Publish and deliver between two simulated machines sharing one store worktree (a plain directory).

Each machine has its own live role directory or memory file and its own sync state; "the store" is one
directory both publish into and deliver from, standing in for a store that git keeps identical.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from memsync.config.file import Track
from memsync.sync.clashes import Clash
from memsync.sync.passes import deliver, publish, reconcile
from memsync.sync.records import HeldLine
from memsync.sync.reports import DeliverReport, FileChange, HeldBack, PublishReport, describe_changes
from memsync.sync.state import SyncState
from memsync.sync.swap import replace_keeping as _replace_keeping
from tests.support.helpers import CORPUS_CREDENTIAL

DAILY = "daily/2026-11-30.md"
TOKEN = "ghp_" + "Zq7Xw2Lk9Vb4Nm8Rt5Yp1Hs6Jd3Gf0Ca2Eu7"


@dataclass
class Machine:
    """One simulated machine: a tracked path, the shared store worktree, its own sync state."""

    track: Track
    store: Path
    state: SyncState

    @property
    def live(self) -> Path:
        return self.track.live

    def publish(self, now: float = 1000.0, grace_s: float = 300.0) -> PublishReport:
        return publish(self.track, self.store, self.state, now, grace_s=grace_s)

    def deliver(self, now: float | None = None, grace_s: float = 300.0) -> DeliverReport:
        return deliver(self.track, self.store, self.state, now, grace_s=grace_s)

    def sync(self) -> None:
        self.publish()
        self.deliver()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Machine, Machine]]:
    """Two machines A and B tracking a role directory ``qa`` mapped to ``roles/qa`` in a shared store."""
    store = tmp_path / "store"
    store.mkdir()
    machines = []
    for name in ("a", "b"):
        live = tmp_path / name / ".agents" / "memory" / "qa"
        live.mkdir(parents=True)
        machines.append(Machine(Track(live, "roles/qa"), store, SyncState(tmp_path / name / "meta")))
    yield machines[0], machines[1]
    for machine in machines:
        machine.state.close()


def append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(data)


def test_daily_log_with_repeats_and_blank_lines_arrives_byte_identical(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    log = (
        b"# 2026-11-30 \xe2\x80\x94 qa\n\n- [09:00] ran the suite\n\n\n- [09:00] ran the suite\n"
        b"```\ncode\n```\n\n- [09:00] ran the suite\n"
    )
    append(a.live / DAILY, log)
    report = a.publish()
    assert report.changes == (FileChange("roles/qa/" + DAILY, DAILY, "daily", "appended", 11),)
    assert (a.store / "roles/qa" / DAILY).read_bytes() == log
    b.deliver()
    assert (b.live / DAILY).read_bytes() == log
    # More repeats later on A, and B's own repeats, arrive as often as they were written.
    append(a.live / DAILY, b"\n- [09:00] ran the suite\n")
    append(b.live / DAILY, b"\n- [10:00] B was here\n\n")
    for _ in range(2):
        a.sync()
        b.sync()
    expected = log + b"\n- [09:00] ran the suite\n" + b"\n- [10:00] B was here\n\n"
    assert (a.store / "roles/qa" / DAILY).read_bytes() == expected
    # Each live file keeps its own lines where its agent wrote them and gets the peer's after them, every
    # repeat as often as it was written (which of two equal blank lines is "the peer's" is not knowable).
    assert (a.live / DAILY).read_bytes() == expected
    b_live = (b.live / DAILY).read_bytes()
    assert b_live.startswith(log + b"\n- [10:00] B was here\n\n")
    assert sorted(b_live.splitlines()) == sorted(expected.splitlines())
    # Quiet now: nothing more is published or delivered.
    assert a.publish().changes == () and a.deliver().changes == ()
    assert b.publish().changes == () and b.deliver().changes == ()


def test_memory_file_track_and_commit_message(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    live = tmp_path / "qa-engineer.jsonl"
    with SyncState(tmp_path / "meta") as state:
        track = Track(live, "memory/qa-engineer.jsonl")
        header = b'{"format": "agent-memory/0.1", "created_at": "2026-11-30T09:00:00Z"}\n'
        entries = b"".join(
            b'{"id": "%02d", "kind": "fact", "text": "t", "created_at": "2026-11-30T09:00:00Z"}\n' % i
            for i in range(3)
        )
        tomb = b'{"id": "01", "deleted": true, "created_at": "2026-11-30T10:00:00Z"}\n'
        live.write_bytes(header + entries + tomb)
        report = publish(track, store, state, 0.0)
        assert report.name == "qa-engineer"
        assert report.changes[0].entries == 3 and report.changes[0].tombstones == 1
        assert (store / "memory/qa-engineer.jsonl").read_bytes() == header + entries + tomb
        daily = PublishReport(
            "scout",
            (
                FileChange("roles/scout/" + DAILY, DAILY, "daily", "appended", 2),
                FileChange("roles/scout/MEMORY.md", "MEMORY.md", "index", "changed"),
            ),
        )
        assert describe_changes([report, daily, PublishReport("idle")]) == (
            "qa-engineer: +3 entries, 1 tombstone; scout: daily/2026-11-30.md +2 lines, MEMORY.md changed"
        )
        assert describe_changes([]) == ""


def test_partial_line_withheld_then_ended_after_grace(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    path = a.live / DAILY
    append(path, b"- [09:00] done\n- [09:01] half a li")
    a.publish(now=1000.0)
    store_copy = a.store / "roles/qa" / DAILY
    assert store_copy.read_bytes() == b"- [09:00] done\n"
    a.publish(now=1200.0)
    assert store_copy.read_bytes() == b"- [09:00] done\n"
    b.deliver()
    assert (b.live / DAILY).read_bytes() == b"- [09:00] done\n"
    # The agent finishes the line: published at once, whole.
    append(path, b"ne\n- [09:02] another unfinish")
    a.publish(now=1250.0)
    assert store_copy.read_bytes() == b"- [09:00] done\n- [09:01] half a line\n"
    # The grace period counts from when this unfinished line was first seen (1250 s).
    report = a.publish(now=1500.0)
    assert report.changes == ()
    report = a.publish(now=1551.0)
    assert path.read_bytes().endswith(b"- [09:02] another unfinish\n")
    assert store_copy.read_bytes().endswith(b"- [09:02] another unfinish\n")
    assert any("no newline" in warning for warning in report.warnings)
    b.deliver()
    assert (b.live / DAILY).read_bytes() == store_copy.read_bytes()


def test_grace_period_restarts_when_the_unfinished_line_grows(pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    path = a.live / DAILY
    append(path, b"slow writ")
    a.publish(now=0.0)
    append(path, b"er still")
    a.publish(now=299.0)
    a.publish(now=301.0)
    assert path.read_bytes() == b"slow writer still"
    a.publish(now=600.0)
    assert path.read_bytes() == b"slow writer still\n"


def test_rewritten_file_is_detected_and_nothing_is_lost(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    path = a.live / DAILY
    append(path, b"one\ntwo\nthree\n")
    a.sync()
    b.sync()
    path.write_bytes(b"one\nTWO edited\nthree\nfour\n")
    report = a.publish()
    assert any("rewritten" in warning for warning in report.warnings)
    assert (a.store / "roles/qa" / DAILY).read_bytes() == b"one\ntwo\nthree\nTWO edited\nfour\n"
    a.deliver()
    assert path.read_bytes() == b"one\nTWO edited\nthree\nfour\ntwo\n"
    append(path, b"five\n")
    a.sync()
    b.sync()
    assert (b.live / DAILY).read_bytes() == b"one\ntwo\nthree\nTWO edited\nfour\nfive\n"


def test_a_log_truncated_in_place_gets_nothing_while_an_agent_holds_it_open_to_rewrite(
    pair: tuple[Machine, Machine],
) -> None:
    """I2, I5: an agent that truncated a log may go on writing from its own file position (no O_APPEND);
    lines delivered meanwhile would be overwritten into a torn line. So after a shrink deliver waits while
    a process holds the file open for writing without O_APPEND, then brings back what the store has."""
    a, b = pair
    path = a.live / DAILY
    append(path, b"- one\n- two\n")
    a.sync()
    b.sync()
    append(b.live / DAILY, b"- from b\n")
    b.publish()
    with path.open("r+b") as agent:
        agent.truncate(0)
        report = a.publish(now=1000.0)
        assert any("rewritten" in warning for warning in report.warnings)
        for when in (1001.0, 5000.0):
            waiting = a.deliver(now=when)
            assert path.read_bytes() == b""
            assert [reason for _, reason in waiting.waiting] == [
                "an agent holds it open to write at its own file position (not appending); delivery waits "
                "until it closes the file"
            ]
        agent.write(b"- summary\n")
        agent.flush()
        a.publish(now=5001.0)
        a.deliver(now=5002.0)
        agent.write(b"- summary, part two\n")
    a.publish(now=5003.0)
    a.deliver(now=5004.0)
    assert path.read_bytes() == b"- summary\n- summary, part two\n- one\n- two\n- from b\n"
    with path.open("ab") as appender:  # an O_APPEND writer is no danger
        path.write_bytes(b"- short\n")
        a.publish(now=6000.0)
        a.deliver(now=6001.0)
        appender.write(b"- appended\n")
    assert path.read_bytes() == (
        b"- short\n- one\n- two\n- from b\n- summary\n- summary, part two\n- appended\n"
    )


def test_secret_line_held_back_later_lines_published_removal_resumes(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    path = a.live / DAILY
    append(path, b"before\n")
    a.sync()
    append(path, f"token used: {TOKEN}\nafter\n".encode())
    report = a.publish()
    assert [(h.path, h.line) for h in report.held] == [("roles/qa/" + DAILY, 2)]
    assert [line for _, line in a.state.held()] == [HeldLine(2, report.held[0].detector)]
    store_copy = a.store / "roles/qa" / DAILY
    assert store_copy.read_bytes() == b"before\nafter\n"
    assert TOKEN.encode() not in store_copy.read_bytes()
    # Held lines stay held: later publishes never let them through.
    append(path, b"later\n")
    a.sync()
    assert store_copy.read_bytes() == b"before\nafter\nlater\n"
    b.sync()
    assert (b.live / DAILY).read_bytes() == b"before\nafter\nlater\n"
    # The user rewrites the line without the secret: it is published, nothing else is lost or repeated.
    path.write_bytes(path.read_bytes().replace(TOKEN.encode(), b"<redacted>"))
    append(path, b"resumed\n")
    a.sync()
    assert store_copy.read_bytes() == b"before\nafter\nlater\ntoken used: <redacted>\nresumed\n"
    assert a.state.held() == []
    b.sync()
    assert sorted((b.live / DAILY).read_bytes().splitlines()) == sorted(store_copy.read_bytes().splitlines())


def test_whole_file_local_edit_while_peer_change_waits_is_merged(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    entry = "feedback_tests.md"
    base = b"---\nname: tests\ndescription: run tests\ntype: feedback\n---\nline one\nline two\nline three\n"
    (a.live / entry).write_bytes(base)
    a.sync()
    b.sync()
    assert (b.live / entry).read_bytes() == base
    (b.live / entry).write_bytes(base.replace(b"line one", b"line ONE by B"))
    b.sync()
    # A edits locally while B's change waits in the store: deliver must not revert A's edit.
    (a.live / entry).write_bytes(base.replace(b"line three", b"line THREE by A"))
    a.deliver()
    assert b"line THREE by A" in (a.live / entry).read_bytes()
    a.sync()
    merged = base.replace(b"line one", b"line ONE by B").replace(b"line three", b"line THREE by A")
    assert (a.store / "roles/qa" / entry).read_bytes() == merged
    a.deliver()
    assert (a.live / entry).read_bytes() == merged
    b.sync()
    assert (b.live / entry).read_bytes() == merged


def test_whole_file_add_and_delete_sync(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    (a.live / "MEMORY.md").write_bytes(b"# Memory\n- [x](x.md) thing\n")
    (a.live / "x.md").write_bytes(b"x\n")
    report = a.publish()
    assert sorted((c.label, c.action) for c in report.changes) == [("MEMORY.md", "added"), ("x.md", "added")]
    b.deliver()
    assert (b.live / "x.md").read_bytes() == b"x\n"
    (b.live / "x.md").unlink()
    report = b.publish()
    assert [(c.label, c.action) for c in report.changes] == [("x.md", "deleted")]
    assert not (b.store / "roles/qa/x.md").exists()
    a.deliver()
    assert not (a.live / "x.md").exists()
    assert (a.live / "MEMORY.md").exists()
    # A deletion on one side while the other changed the file keeps the change.
    (a.live / "MEMORY.md").write_bytes(b"# Memory\n- [y](y.md) changed\n")
    a.publish()
    (b.live / "MEMORY.md").unlink()
    b.publish()
    b.deliver()
    assert (b.live / "MEMORY.md").read_bytes() == b"# Memory\n- [y](y.md) changed\n"


def test_whole_file_with_secret_held_back(pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    (a.live / "notes.md").write_bytes(b"fine\n")
    a.publish()
    (a.live / "notes.md").write_bytes(f"fine\napi_key = {TOKEN}\n".encode())
    report = a.publish()
    assert [(h.path, h.line) for h in report.held] == [("roles/qa/notes.md", 2)]
    assert (a.store / "roles/qa/notes.md").read_bytes() == b"fine\n"
    a.deliver()  # the held local version is not overwritten
    assert TOKEN.encode() in (a.live / "notes.md").read_bytes()
    (a.live / "notes.md").write_bytes(b"fine\nno secret\n")
    a.publish()
    assert (a.store / "roles/qa/notes.md").read_bytes() == b"fine\nno secret\n"
    assert a.state.held() == []


def test_ignored_symlinked_and_special_files_are_skipped(
    pair: tuple[Machine, Machine], tmp_path: Path
) -> None:
    a, _ = pair
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"outside\n")
    (a.live / "real.md").write_bytes(b"real\n")
    (a.live / ".real.md.swp").write_bytes(b"swap")
    (a.live / "real.md~").write_bytes(b"backup")
    (a.live / "4913").write_bytes(b"")
    (a.live / "snapshot.md").write_bytes(b"generated\n")
    (a.live / "escape.md").symlink_to(outside)
    (a.live / "inside.md").symlink_to(a.live / "real.md")
    (a.live / "linkdir").symlink_to(tmp_path)
    os.mkfifo(a.live / "pipe.md")
    a.publish()
    stored = sorted(p.relative_to(a.store).as_posix() for p in a.store.rglob("*") if p.is_file())
    assert stored == ["roles/qa/inside.md", "roles/qa/real.md"]


def test_reconcile_without_state_publishes_the_multiset_difference(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "roles/qa/daily").mkdir(parents=True)
    (store / "roles/qa" / DAILY).write_bytes(b"a\n\nb\n")
    live = tmp_path / "live"
    (live / "daily").mkdir(parents=True)
    (live / DAILY).write_bytes(b"a\n\n\nb\nc\nunfinished")
    with SyncState(tmp_path / "meta") as state:
        report = reconcile(Track(live, "roles/qa"), store, state)
        assert [c.lines for c in report.changes] == [2]
        assert (store / "roles/qa" / DAILY).read_bytes() == b"a\n\nb\n\nc\n"
        record = state.get_append("roles/qa/" + DAILY)
        assert record is not None and record.offset == len(b"a\n\n\nb\nc\n")
        assert reconcile(Track(live, "roles/qa"), store, state).changes == ()


@pytest.mark.slow
def test_corpus_arrives_whole_on_the_other_machine(corpus: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    tracks = [
        ("skill/scout", "roles/scout"),
        ("skill/acmp-claude", "claude/memory"),
        ("jsonl/acmp.jsonl", "memory/acmp.jsonl"),
        ("jsonl/qa-engineer.jsonl", "memory/qa-engineer.jsonl"),
    ]
    held: list[HeldBack] = []
    with SyncState(tmp_path / "a-meta") as state_a, SyncState(tmp_path / "b-meta") as state_b:
        for source, store_path in tracks:
            live_a = tmp_path / "a" / source
            if (corpus / source).is_dir():
                shutil.copytree(corpus / source, live_a)
            else:
                live_a.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(corpus / source, live_a)
            report = publish(Track(live_a, store_path), store, state_a)
            held += report.held
            deliver(Track(tmp_path / "b" / source, store_path), store, state_b)
        credential, line, detector = CORPUS_CREDENTIAL
        assert held == [HeldBack(f"claude/memory/{Path(credential).name}", line, detector)]
        for path in sorted(p for p in (corpus).rglob("*") if p.is_file() and p.name != "README.md"):
            if path.relative_to(corpus).parts[0] == "history":
                continue
            rel = path.relative_to(corpus)
            if str(rel) == credential:
                assert not (tmp_path / "b" / rel).exists()
            else:
                assert (tmp_path / "b" / rel).read_bytes() == path.read_bytes(), rel


def test_bytes_an_agent_wrote_during_delivery_are_published_next_cycle(pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    base = b"one\ntwo\nthree\n"
    (a.live / "x.md").write_bytes(base)
    a.sync()
    (a.store / "roles/qa/x.md").write_bytes(b"ONE\ntwo\nthree\n")  # a peer's change arrived
    a.deliver()
    assert (a.live / "x.md").read_bytes() == b"ONE\ntwo\nthree\n"
    # What deliver records when the swap caught an agent's write made after its check:
    record = a.state.get_whole("roles/qa/x.md")
    assert record is not None
    a.state.put(replace(record, kept=b"one\ntwo\nTHREE\n", kept_base=base, kept_present=True))
    assert a.deliver().waiting
    a.publish()
    assert (a.store / "roles/qa/x.md").read_bytes() == b"ONE\ntwo\nTHREE\n"
    a.deliver()
    assert (a.live / "x.md").read_bytes() == b"ONE\ntwo\nTHREE\n"


def test_replace_keeping_returns_what_it_replaced(tmp_path: Path) -> None:
    path = tmp_path / "x.md"
    path.write_bytes(b"old\n")
    path.chmod(0o600)
    assert _replace_keeping(path, b"new\n") == b"old\n"
    assert path.read_bytes() == b"new\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["x.md"]


def test_long_commit_message_names_tracks_and_lists_changes() -> None:
    changes = tuple(FileChange(f"roles/qa/{i:02d}.md", f"{i:02d}.md", "entry", "changed") for i in range(30))
    message = describe_changes([PublishReport("qa", changes)])
    subject, _, body = message.partition("\n\n")
    assert subject == "30 changes in qa"
    assert body.startswith("qa: 00.md changed, 01.md changed")


def test_same_line_written_on_both_machines_arrives_twice(pair: tuple[Machine, Machine]) -> None:
    """A new daily log in an already synced role: B's lines are all its own, even the ones A also wrote."""
    a, b = pair
    (a.live / "MEMORY.md").write_bytes(b"# Memory\n")
    a.sync()
    b.sync()
    title = b"# 2026-12-01 - qa\n"
    append(a.live / "daily/2026-12-01.md", title + b"- from A\n")
    a.sync()
    append(b.live / "daily/2026-12-01.md", title + b"- from B\n")
    b.sync()
    a.sync()
    store = (a.store / "roles/qa/daily/2026-12-01.md").read_bytes()
    assert store == title + b"- from A\n" + title + b"- from B\n"
    assert (a.live / "daily/2026-12-01.md").read_bytes() == store
    b_live = (b.live / "daily/2026-12-01.md").read_bytes()
    assert b_live.startswith(title + b"- from B\n")
    assert sorted(b_live.splitlines()) == sorted(store.splitlines())


def test_store_copy_lost_is_republished(pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    append(a.live / DAILY, b"one\ntwo\n")
    a.publish()
    (a.store / "roles/qa" / DAILY).unlink()
    append(a.live / DAILY, b"three\n")
    report = a.publish()
    assert any("lost its copy" in warning for warning in report.warnings)
    assert (a.store / "roles/qa" / DAILY).read_bytes() == b"one\ntwo\nthree\n"


def test_paths_another_store_tracks_are_left_to_it_on_both_sides(tmp_path: Path) -> None:
    """A folder track with an excluded role: neither publishes its files nor delivers the store's copy."""
    root = tmp_path / "a" / ".agents" / "memory"
    owned = root / "qa"
    append(root / "dev" / DAILY, b"# Daily log\n\n- [09:00] dev note\n")
    append(owned / DAILY, b"# Daily log\n\n- [09:00] team note\n")
    store = tmp_path / "store"
    append(store / "roles" / "qa" / "from_peer.md", b"---\nname: p\n---\n\nfrom the personal store\n")
    with SyncState(tmp_path / "meta") as state:
        track = Track(root, "roles", excludes=(owned,))

        published = publish(track, store, state, 1000.0)
        deliver(track, store, state)

    assert [c.path for c in published.changes] == [f"roles/dev/{DAILY}"]
    assert not (store / "roles" / "qa" / DAILY).exists()
    assert not (owned / "from_peer.md").exists()


def test_commit_message_of_folder_tracks_names_each_role_and_memory_file() -> None:
    roles = PublishReport(
        "roles",
        (
            FileChange(f"roles/python-dev/{DAILY}", f"python-dev/{DAILY}", "daily", "appended", lines=2),
            FileChange("roles/scout/MEMORY.md", "scout/MEMORY.md", "index", "changed"),
            FileChange("roles/python-dev/tz.md", "python-dev/tz.md", "entry", "added"),
        ),
    )
    memory = PublishReport(
        "memory",
        (
            FileChange(
                "memory/lessons.jsonl", "lessons.jsonl", "jsonl", "appended", lines=2, entries=1, tombstones=1
            ),
        ),
    )

    assert describe_changes([roles, memory]) == (
        "python-dev: daily/2026-11-30.md +2 lines, tz.md added; scout: MEMORY.md changed; "
        "lessons: +1 entry, 1 tombstone"
    )


def _a_peer_made_notes_a_directory(a: Machine, mine: bytes) -> Path:
    """``notes.md`` (``mine``) synced from ``a``; then the store holds what a merge with a peer that made
    ``notes.md/`` a directory leaves: the directory, and ``a``'s version aside. Returns the store role."""
    (a.live / "notes.md").write_bytes(mine)
    a.sync()
    roles = a.store / "roles" / "qa"
    (roles / "notes.md").unlink()
    (roles / "notes.md").mkdir()
    (roles / "notes.md" / "inner.md").write_bytes(b"a peer's file in a directory\n")
    (roles / "notes.conflict-file.md").write_bytes(mine)
    return roles


def test_a_live_file_meeting_a_store_directory_gives_way_when_unchanged(
    pair: tuple[Machine, Machine],
) -> None:
    """The store's merge put a peer's directory at ``notes.md`` and this machine's version aside: the live
    file, unchanged since it synced, gives way (its text is in the store beside the directory) and the
    directory arrives; nothing is reported."""
    a, _b = pair
    mine = b"my notes\n"
    roles = _a_peer_made_notes_a_directory(a, mine)
    a.publish()
    report = a.deliver()
    assert report.clashes == ()
    assert (a.live / "notes.md" / "inner.md").read_bytes() == b"a peer's file in a directory\n"
    assert (a.live / "notes.conflict-file.md").read_bytes() == mine
    a.publish()
    assert a.deliver().changes == ()
    assert sorted(p.relative_to(roles).as_posix() for p in roles.rglob("*") if p.is_file()) == [
        "notes.conflict-file.md",
        "notes.md/inner.md",
    ]


def test_a_live_file_edited_while_it_meets_a_store_directory_is_left_alone_and_reported(
    pair: tuple[Machine, Machine],
) -> None:
    """As above, but an agent edited the live file after it synced: it is neither deleted nor published
    into the directory, the rest syncs, and renaming it settles it."""
    a, _b = pair
    mine = b"my notes\n"
    roles = _a_peer_made_notes_a_directory(a, mine)
    append(roles / DAILY, b"- a peer's log line\n")
    edited = b"edited while it clashes\n"
    (a.live / "notes.md").write_bytes(edited)
    clash = Clash("roles/qa/notes.md", a.live / "notes.md", "file")
    for _cycle in range(2):
        a.publish()
        report = a.deliver()
        assert report.clashes == (clash,) and "rename" in clash.advice()
        assert (a.live / "notes.md").read_bytes() == edited
        assert (a.live / DAILY).read_bytes() == b"- a peer's log line\n"
        assert (a.live / "notes.conflict-file.md").read_bytes() == mine
    assert (roles / "notes.md" / "inner.md").read_bytes() == b"a peer's file in a directory\n"
    (a.live / "notes.md").rename(a.live / "notes-mine.md")
    a.publish()
    assert a.deliver().clashes == ()
    assert (a.live / "notes.md" / "inner.md").read_bytes() == b"a peer's file in a directory\n"
    assert (roles / "notes-mine.md").read_bytes() == edited


def test_a_live_directory_meeting_a_store_file_is_left_alone_and_reported(
    pair: tuple[Machine, Machine],
) -> None:
    """A peer's file ``notes.md`` is in the store while this machine, syncing for the first time, has a
    directory of that name: nothing is published into the file's place, nothing deleted, the rest syncs."""
    a, b = pair
    (b.live / "notes.md").write_bytes(b"b's notes\n")
    b.sync()
    (a.live / "notes.md").mkdir()
    (a.live / "notes.md" / "inner.md").write_bytes(b"a's file in a directory\n")
    (a.live / "other.md").write_bytes(b"other\n")
    reconcile(a.track, a.store, a.state)
    a.publish()
    report = a.deliver()
    assert report.clashes == (Clash("roles/qa/notes.md", a.live / "notes.md", "directory"),)
    roles = a.store / "roles" / "qa"
    assert (roles / "notes.md").read_bytes() == b"b's notes\n"
    assert (roles / "other.md").read_bytes() == b"other\n"
    assert (a.live / "notes.md" / "inner.md").read_bytes() == b"a's file in a directory\n"
    (a.live / "notes.md").rename(a.live / "notes-dir")
    a.publish()
    assert a.deliver().clashes == ()
    assert (a.live / "notes.md").read_bytes() == b"b's notes\n"
    assert (roles / "notes-dir" / "inner.md").read_bytes() == b"a's file in a directory\n"


def test_an_agent_turning_a_file_into_a_directory(pair: tuple[Machine, Machine]) -> None:
    """The machine where it happens publishes the change in one cycle; a peer with the old file,
    unchanged, gets the directory at once."""
    a, b = pair
    (a.live / "notes.md").write_bytes(b"before\n")
    a.sync()
    b.sync()
    (a.live / "notes.md").unlink()
    (a.live / "notes.md").mkdir()
    (a.live / "notes.md" / "inner.md").write_bytes(b"after\n")
    a.publish()
    assert a.deliver().clashes == ()
    assert (a.store / "roles" / "qa" / "notes.md" / "inner.md").read_bytes() == b"after\n"
    b.publish()
    assert b.deliver().clashes == ()
    assert (b.live / "notes.md" / "inner.md").read_bytes() == b"after\n"


def test_a_directory_turned_into_a_file_is_unavailable_never_deleted(pair: tuple[Machine, Machine]) -> None:
    """The machine where it happens publishes no deletion (its peer keeps the old file, byte for byte),
    is told to rename the path, and once it does gets the store's files back while what it wrote under
    the new name syncs too."""
    a, b = pair
    (a.live / "notes.md").mkdir()
    (a.live / "notes.md" / "inner.md").write_bytes(b"before\n")
    a.sync()
    b.sync()
    shutil.rmtree(a.live / "notes.md")
    (a.live / "notes.md").write_bytes(b"after\n")
    for _ in range(2):
        a.publish()
        assert a.deliver().clashes == (Clash("roles/qa/notes.md", a.live / "notes.md", "file"),)
    assert (a.store / "roles" / "qa" / "notes.md" / "inner.md").read_bytes() == b"before\n"
    assert (a.live / "notes.md").read_bytes() == b"after\n"
    b.sync()
    assert (b.live / "notes.md" / "inner.md").read_bytes() == b"before\n"
    (a.live / "notes.md").rename(a.live / "renamed")
    a.sync()
    b.sync()
    assert (a.live / "notes.md" / "inner.md").read_bytes() == b"before\n"
    assert (b.live / "renamed").read_bytes() == (a.live / "renamed").read_bytes() == b"after\n"


def test_an_entry_replaced_by_a_dangling_symlink_is_unavailable_never_deleted(
    pair: tuple[Machine, Machine], tmp_path: Path
) -> None:
    """A curated entry replaced by a symlink to nothing publishes no deletion, gets nothing written
    through it, is named once a pass; with the symlink gone the store's entry comes back."""
    a, b = pair
    (a.live / "entry.md").write_bytes(b"keep me\n")
    a.sync()
    b.sync()
    (a.live / "entry.md").unlink()
    (a.live / "entry.md").symlink_to(tmp_path / "nowhere")
    for _ in range(2):  # each pass here has its own notices: the warning once per pass
        warnings = a.publish().warnings + a.deliver().warnings
        assert [w.split(" ")[0] for w in warnings] == [str(a.live / "entry.md")]
    assert (a.store / "roles" / "qa" / "entry.md").read_bytes() == b"keep me\n"
    assert not (tmp_path / "nowhere").exists()
    (a.live / "entry.md").unlink()
    a.sync()
    b.sync()
    assert (a.live / "entry.md").read_bytes() == (b.live / "entry.md").read_bytes() == b"keep me\n"


def test_a_line_cut_by_a_truncation_is_completed_from_the_store_not_published_as_a_fragment(
    pair: tuple[Machine, Machine],
) -> None:
    """A log truncated in the middle of a line and left so: past the grace period the fragment is
    ended with the rest of the store's line (an append), never published as a line of its own."""
    a, b = pair
    path = a.live / DAILY
    append(path, b"- [09:00] a line that gets cut\n- [09:01] the next line\n")
    a.sync()
    b.sync()
    os.truncate(path, len(b"- [09:00] a line th"))
    a.publish(now=1000.0)
    a.deliver(now=1001.0)
    assert path.read_bytes() == b"- [09:00] a line th"
    report = a.publish(now=1400.0)
    assert any("completed it from the store" in warning for warning in report.warnings)
    a.deliver(now=1401.0)
    assert path.read_bytes() == b"- [09:00] a line that gets cut\n- [09:01] the next line\n"
    assert (a.store / "roles/qa" / DAILY).read_bytes() == path.read_bytes()
    b.deliver()
    assert (b.live / DAILY).read_bytes() == path.read_bytes()


def test_nothing_is_appended_to_a_log_an_agent_writes_at_its_own_position(
    pair: tuple[Machine, Machine],
) -> None:
    """I2, I5: an agent that creates today's log with ``open(..., "w")`` and keeps writing through its
    own file position would overwrite a delivered line; the peer's lines wait until it closes the file."""
    a, b = pair
    append(b.live / DAILY, b"- [09:00] bob first\n")
    b.publish()
    (a.live / DAILY).parent.mkdir(parents=True)
    with (a.live / DAILY).open("wb") as agent:
        agent.write(b"- [09:01] alice first\n")
        agent.flush()
        a.publish()
        assert a.deliver().waiting and (a.live / DAILY).read_bytes() == b"- [09:01] alice first\n"
        agent.write(b"- [09:02] alice second\n")
    a.publish()
    a.deliver()
    assert (a.live / DAILY).read_bytes() == (
        b"- [09:01] alice first\n- [09:02] alice second\n- [09:00] bob first\n"
    )


def test_two_index_lines_for_one_file_written_while_a_peer_adds_an_item_are_both_published(
    pair: tuple[Machine, Machine],
) -> None:
    """Publish merges the live index over a store a peer changed (nothing committed yet): both lines
    linking parts of one file stay, on both machines."""
    a, b = pair
    title = b"# Memory index\n\n"
    (a.live / "MEMORY.md").write_bytes(title)
    a.sync()
    b.sync()
    peer_item = b"- [Peer](peer.md) \xe2\x80\x94 from b\n"
    (b.live / "MEMORY.md").write_bytes(title + peer_item)
    b.publish()
    parts = (
        b"- [Deploy: staging](deploy.md#staging) \xe2\x80\x94 staging\n"
        b"- [Deploy: rollback](deploy.md#rollback) \xe2\x80\x94 rollback\n"
    )
    (a.live / "MEMORY.md").write_bytes(title + parts)
    a.sync()
    b.sync()
    expected = title + parts + peer_item
    assert (a.store / "roles/qa/MEMORY.md").read_bytes() == expected
    assert (a.live / "MEMORY.md").read_bytes() == (b.live / "MEMORY.md").read_bytes() == expected


def test_a_folder_swapped_for_a_symlink_and_then_an_empty_folder_deletes_nothing(
    pair: tuple[Machine, Machine], tmp_path: Path
) -> None:
    """A role subfolder replaced by a symlink, later by an empty folder: its files' deletions are held
    (the store and the peer keep every byte), nothing is delivered into it, the folder is named; removing
    the empty folder itself is the deletion, and it syncs."""
    a, b = pair
    files = {f"team/{name}.md": f"{name}\n".encode() for name in ("one", "two", "three")}
    (a.live / "MEMORY.md").write_bytes(b"- kept at the root\n")
    for rel, data in files.items():
        (a.live / rel).parent.mkdir(exist_ok=True)
        (a.live / rel).write_bytes(data)
    a.sync()
    b.sync()
    (a.live / "team").rename(tmp_path / "team.bak")
    (a.live / "team").symlink_to(tmp_path / "team.bak")
    a.sync()
    (a.live / "team").unlink()
    (a.live / "team").mkdir()
    for _ in range(2):
        warnings = a.publish().warnings + a.deliver().warnings
        # each pass here has its own notices: named once by publish, once by deliver
        assert [w.split(" ")[0] for w in warnings] == [str(a.live / "team")] * 2
        assert "the store has 3 files" in warnings[0]
    assert list((a.live / "team").iterdir()) == []
    b.sync()
    for rel, data in files.items():
        assert (a.store / "roles/qa" / rel).read_bytes() == data
        assert (b.live / rel).read_bytes() == data
    (a.live / "team").rmdir()
    a.sync()
    b.sync()
    assert not any((a.store / "roles/qa" / rel).exists() or (b.live / rel).exists() for rel in files)


def test_a_tracked_root_emptied_like_a_mount_point_deletes_nothing_and_a_single_deletion_syncs(
    pair: tuple[Machine, Machine],
) -> None:
    """A tracked folder found empty (a drive not mounted over its mount point) publishes no deletion and
    gets nothing delivered, a peer's new file included; once its files are back, the peer's file arrives.
    One entry an agent deletes from a folder it empties still syncs as a deletion."""
    a, b = pair
    (a.live / "MEMORY.md").write_bytes(b"- [one](one.md)\n")
    (a.live / "one.md").write_bytes(b"one\n")
    (a.live / "solo").mkdir()
    (a.live / "solo" / "only.md").write_bytes(b"only\n")
    append(a.live / DAILY, b"- [09:00] a line\n")
    a.sync()
    b.sync()
    (a.live / "solo" / "only.md").unlink()
    a.sync()
    assert not (a.store / "roles/qa/solo/only.md").exists()
    b.sync()
    assert not (b.live / "solo" / "only.md").exists()
    drive = a.live.parent / "drive"
    a.live.rename(drive)
    a.live.mkdir()
    (b.live / "two.md").write_bytes(b"two\n")
    b.sync()
    a.sync()
    assert sorted(p.name for p in a.live.iterdir()) == []
    assert (a.store / "roles/qa/one.md").read_bytes() == b"one\n"
    assert (a.store / "roles/qa/MEMORY.md").read_bytes() == b"- [one](one.md)\n"
    a.live.rmdir()
    drive.rename(a.live)
    a.sync()
    assert (a.live / "two.md").read_bytes() == b"two\n"
    assert (a.live / "one.md").read_bytes() == b"one\n"

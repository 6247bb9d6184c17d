"""Append-only files by their tail (DESIGN step 2, "sync state", I1, I7): what tells an appended file from
a rewritten one is its size, device:inode and the mark of a bounded window (``records.mark``); publish
and deliver read only what changed, chunk by chunk; an old state database migrates. Real files, a real
SQLite state, real processes killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memsync.config.file import Track
from memsync.sync import content
from memsync.sync.passes import deliver, publish, reconcile
from memsync.sync.records import HEAD, WINDOW, digest
from memsync.sync.state import SyncState
from tests.support.helpers import REPO_ROOT, wait_for

DAILY = "daily/2026-11-30.md"
REL = "roles/qa/" + DAILY
TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def _lines(start: int, count: int, tag: str = "a") -> bytes:
    return b"".join(f"- [{tag}] note {i:07d} {'x' * 80}\n".encode() for i in range(start, start + count))


def _setup(tmp_path: Path, data: bytes) -> tuple[Track, Path, SyncState, Path]:
    """A role directory on machine A whose daily log holds ``data``, published once."""
    track = Track(tmp_path / "a" / "qa", "roles/qa")
    live = track.live / DAILY
    live.parent.mkdir(parents=True)
    live.write_bytes(data)
    worktree = tmp_path / "store"
    worktree.mkdir()
    state = SyncState(tmp_path / "a" / "meta")
    publish(track, worktree, state)
    store_copy = worktree / REL
    assert store_copy.read_bytes() == data
    return track, live, state, store_copy


def _rewrite_at(path: Path, pos: int, old: bytes, new: bytes) -> None:
    """Overwrite ``old`` at byte ``pos`` with ``new`` (same length) in place: same inode, same size."""
    assert len(old) == len(new)
    with path.open("r+b") as handle:
        handle.seek(pos)
        assert handle.read(len(old)) == old
        handle.seek(pos)
        handle.write(new)


def test_a_rewrite_inside_the_window_is_seen_and_settled_by_content(tmp_path: Path) -> None:
    """Same size, same inode, one line changed in the last 64 KiB: publish sees a rewrite, and the store
    copy keeps the old line and gains the new one (nothing lost)."""
    data = _lines(0, 12_000)  # ~1.1 MB
    track, live, state, store_copy = _setup(tmp_path, data)
    old = b"- [a] note 0011990 "
    _rewrite_at(live, data.index(old), old, b"- [A] NOTE 0011990 ")
    report = publish(track, tmp_path / "store", state)
    assert any("rewritten" in warning for warning in report.warnings)
    store = store_copy.read_bytes()
    assert store.startswith(data)
    assert store[len(data) :] == b"- [A] NOTE 0011990 " + b"x" * 80 + b"\n"
    # Settled: the next publish appends only what is new.
    live.open("ab").write(b"- [a] after\n")
    assert not publish(track, tmp_path / "store", state).warnings
    assert store_copy.read_bytes() == store + b"- [a] after\n"


def test_a_rewrite_in_the_first_bytes_is_seen(tmp_path: Path) -> None:
    """The mark covers the first 4 KiB too: an edit of the first line is a rewrite."""
    data = _lines(0, 12_000)
    track, live, state, store_copy = _setup(tmp_path, data)
    _rewrite_at(live, 0, b"- [a] note 0000000", b"- [a] NOTE 0000000")
    report = publish(track, tmp_path / "store", state)
    assert any("rewritten" in warning for warning in report.warnings)
    assert store_copy.read_bytes() == data + b"- [a] NOTE 0000000 " + b"x" * 80 + b"\n"


def test_a_rewrite_between_head_and_window_is_the_documented_limit(tmp_path: Path) -> None:
    """Same size, same inode, a line changed after the first 4 KiB and before the last 64 KiB: the bounded
    check does not see it (docs/reliability.md). The line as published stays in the store; lines
    appended after it are published as ever."""
    data = _lines(0, 12_000)
    assert len(data) > HEAD + WINDOW + 100_000
    track, live, state, store_copy = _setup(tmp_path, data)
    old = b"- [a] note 0000500 "
    assert HEAD < data.index(old) < len(data) - WINDOW
    _rewrite_at(live, data.index(old), old, b"- [A] NOTE 0000500 ")
    live.open("ab").write(b"- [a] after\n")
    report = publish(track, tmp_path / "store", state)
    assert not report.warnings
    assert store_copy.read_bytes() == data + b"- [a] after\n"


def test_a_replaced_file_is_seen_by_its_inode(tmp_path: Path) -> None:
    """An agent that writes the file anew (temp + rename) with the same bytes and a line more: a rewrite by
    its new inode, settled by content: the new line is published once."""
    data = _lines(0, 2_000)
    track, live, state, store_copy = _setup(tmp_path, data)
    tmp = live.with_name("tmp-write")
    tmp.write_bytes(data + b"- [a] rewritten whole\n")
    os.replace(tmp, live)
    report = publish(track, tmp_path / "store", state)
    assert any("rewritten" in warning for warning in report.warnings)
    assert store_copy.read_bytes() == data + b"- [a] rewritten whole\n"
    assert not publish(track, tmp_path / "store", state).warnings


def test_first_sight_of_a_big_file_goes_chunk_by_chunk_and_holds_a_secret_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the store lacks, no state: copied in chunks (here 64 KiB), the scanner run on each; the
    line with a token, in a late chunk, stays here and is reported at its line number."""
    monkeypatch.setattr(content, "CHUNK", 64 * 1024)
    secret = f"- [a] the CI token is {TOKEN}\n".encode()
    data = _lines(0, 3_000) + secret + _lines(3_000, 500)
    track = Track(tmp_path / "a" / "qa", "roles/qa")
    live = track.live / DAILY
    live.parent.mkdir(parents=True)
    live.write_bytes(data)
    state = SyncState(tmp_path / "a" / "meta")
    report = reconcile(track, tmp_path / "store", state)
    assert [(h.path, h.line) for h in report.held] == [(REL, 3_001)]
    assert (tmp_path / "store" / REL).read_bytes() == data.replace(secret, b"")
    # One change reported for the file, all its lines counted.
    assert [(c.path, c.lines) for c in report.changes] == [(REL, 3_500)]
    assert state.pending_publish(REL) is None
    current = state.get_append(REL)
    assert current is not None and current.offset == len(data)


def test_delivery_reads_past_the_sync_point_and_survives_a_reordered_store(tmp_path: Path) -> None:
    """Peer lines arrive once, repeated lines as often as the store has them; when a merge rewrote the
    store copy in another order, deliver compares both files whole and still brings only what is
    missing."""
    data = _lines(0, 2_000)
    track, live, state, store_copy = _setup(tmp_path, data)
    worktree = tmp_path / "store"
    deliver(track, worktree, state)
    peer = b"- [b] peer one\n- [b] repeated\n- [b] repeated\n"
    store_copy.open("ab").write(peer)
    deliver(track, worktree, state)
    assert live.read_bytes() == data + peer
    current = state.get_append(REL)
    assert current is not None and current.store_at == len(data + peer) == current.live_at
    # A merge reorders the store copy (peer lines first) and adds a line: only that line is missing.
    store_copy.write_bytes(peer + data + b"- [b] repeated\n")
    publish(track, worktree, state)
    deliver(track, worktree, state)
    assert Counter(live.read_bytes().splitlines()) == Counter(store_copy.read_bytes().splitlines())
    assert live.read_bytes() == data + peer + b"- [b] repeated\n"


_KILLED_PUBLISH = """
import sys
from pathlib import Path
from memsync.config.file import Track
from memsync.sync import content
from memsync.sync.passes import publish
from memsync.sync.state import SyncState
content.CHUNK = 128 * 1024
root = Path(sys.argv[1])
state = SyncState(root / "a" / "meta")
publish(Track(root / "a" / "qa", "roles/qa"), root / "store", state)
"""


@pytest.mark.parametrize("when", ["recorded", "writing"])
def test_kill_9_inside_a_chunked_publish_of_a_big_file(tmp_path: Path, when: str) -> None:
    """A publisher process killed (SIGKILL) while a 3 MB burst goes to the store in 128 KiB chunks: just
    after an intent is recorded (before or during its write), or while the store copy grows. Reconcile
    and publish then leave the store copy equal to the live file: every line once (I1, I7)."""
    data = _lines(0, 2_000)
    track, live, state, store_copy = _setup(tmp_path, data)
    state.close()
    live.open("ab").write(_lines(2_000, 30_000))
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_PUBLISH, str(tmp_path)], cwd=REPO_ROOT, start_new_session=True
    )
    db = tmp_path / "a" / "meta" / "state.sqlite"

    def pending() -> bool:
        with sqlite3.connect(db, timeout=30) as con:
            return con.execute("SELECT count(*) FROM pending WHERE slot = 'publish'").fetchone()[0] > 0

    if when == "recorded":
        wait_for(lambda: pending() or child.poll() is not None, timeout=120, interval=0.001)
    else:
        wait_for(
            lambda: store_copy.stat().st_size > len(data) + 600_000 or child.poll() is not None,
            timeout=120,
            interval=0.001,
        )
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    with SyncState(tmp_path / "a" / "meta") as state:
        reconcile(track, tmp_path / "store", state)
        publish(track, tmp_path / "store", state)
        assert state.pending_publish(REL) is None
    assert store_copy.read_bytes() == live.read_bytes()


def _old_database(meta: Path, rows: list[tuple[str, int, str]]) -> None:
    """A state database as memsync made it before the bounded mark: no live_id or sync point columns,
    ``user_version`` 0, ``prefix_hash`` the sha256 of the whole prefix."""
    meta.mkdir(parents=True)
    with sqlite3.connect(meta / "state.sqlite") as con:
        con.execute(
            "CREATE TABLE states (path TEXT NOT NULL, slot TEXT NOT NULL, offset INTEGER, prefix_hash TEXT, "
            "partial_at INTEGER, partial_hash TEXT, partial_since REAL, synced BLOB, "
            "synced_known INTEGER NOT NULL DEFAULT 0, kept BLOB, kept_base BLOB, "
            "kept_present INTEGER NOT NULL DEFAULT 0, held TEXT NOT NULL DEFAULT '[]', store_seen TEXT, "
            "rewritten_since REAL, PRIMARY KEY (path, slot))"
        )
        con.executemany(
            "INSERT INTO states (path, slot, offset, prefix_hash) VALUES (?, 'current', ?, ?)", rows
        )


def test_an_old_state_database_migrates_and_loses_nothing(tmp_path: Path) -> None:
    """Whole-prefix hashes of an older memsync: a short prefix's hash is its mark and stays trusted; a long
    one's offset becomes unknown, and the file is settled by content once, without a rewrite warning, its
    new lines published once."""
    big, small = _lines(0, 3_000), b"- small one\n"
    small_rel = "roles/qa/daily/2026-11-29.md"
    track = Track(tmp_path / "a" / "qa", "roles/qa")
    (track.live / "daily").mkdir(parents=True)
    worktree = tmp_path / "store"
    (worktree / "roles/qa/daily").mkdir(parents=True)
    for rel, data in ((REL, big), (small_rel, small)):
        (worktree / rel).write_bytes(data)
        (tmp_path / "a" / rel.replace("roles/", "")).write_bytes(data + b"- new\n")
    _old_database(
        tmp_path / "a" / "meta", [(REL, len(big), digest(big)), (small_rel, len(small), digest(small))]
    )
    with SyncState(tmp_path / "a" / "meta") as state:
        migrated = state.get_append(REL)
        assert migrated is not None and migrated.offset is None
        kept = state.get_append(small_rel)
        assert kept is not None and kept.offset == len(small)
        report = publish(track, worktree, state)
        assert not report.warnings
        assert (worktree / REL).read_bytes() == big + b"- new\n"
        assert (worktree / small_rel).read_bytes() == small + b"- new\n"
    with sqlite3.connect(tmp_path / "a" / "meta" / "state.sqlite") as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1


def test_a_missing_live_file_is_created_from_a_big_store_copy_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Machine B lacks the file: deliver creates it with the store copy's first chunk (here 64 KiB) and
    appends the rest in the same pass, every line once, the unfinished store line left out."""
    monkeypatch.setattr(content, "CHUNK", 64 * 1024)
    data = _lines(0, 3_000, "b")
    worktree = tmp_path / "store"
    (worktree / "roles/qa/daily").mkdir(parents=True)
    (worktree / REL).write_bytes(data + b"- unfinished")
    track = Track(tmp_path / "b" / "qa", "roles/qa")
    track.live.mkdir(parents=True)
    with SyncState(tmp_path / "b" / "meta") as state:
        report = deliver(track, worktree, state)
        assert (track.live / DAILY).read_bytes() == data
        assert sum(c.lines for c in report.changes) == 3_000
        assert state.pending_delivery(REL) is None
        current = state.get_append(REL)
        assert current is not None and current.offset == len(data) == current.store_at
        assert not publish(track, worktree, state).changes
    assert (worktree / REL).read_bytes() == data + b"- unfinished"

"""The sync state database: records survive reopening, pending intents settle, kills leave it consistent."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.sync.records import AppendState, HeldLine, PendingDelivery, PendingPublish, WholeState
from memsync.sync.state import SyncState
from tests.support.helpers import REPO_ROOT, wait_for


def test_states_survive_reopen(tmp_path: Path) -> None:
    with SyncState(tmp_path / "meta") as state:
        state.put(
            AppendState(
                "roles/qa/daily/2026-11-30.md",
                offset=12,
                prefix_hash="ab",
                partial_at=12,
                partial_hash="cd",
                partial_since=5.5,
                held=(HeldLine(3, "GitHub token"),),
            )
        )
        state.put(WholeState("roles/qa/MEMORY.md", synced=b"# Memory\n", synced_known=True))
        state.put(WholeState("roles/qa/gone.md", synced=None, synced_known=True))
    assert (tmp_path / "meta" / "state.sqlite").is_file()
    with SyncState(tmp_path / "meta") as state:
        daily = state.get("roles/qa/daily/2026-11-30.md")
        assert daily == AppendState(
            "roles/qa/daily/2026-11-30.md",
            offset=12,
            prefix_hash="ab",
            partial_at=12,
            partial_hash="cd",
            partial_since=5.5,
            held=(HeldLine(3, "GitHub token"),),
        )
        assert state.get("roles/qa/MEMORY.md") == WholeState(
            "roles/qa/MEMORY.md", synced=b"# Memory\n", synced_known=True
        )
        gone = state.get_whole("roles/qa/gone.md")
        assert gone is not None and gone.synced is None and gone.synced_known
        assert state.get("roles/other") is None
        assert state.paths("roles/qa") == [
            "roles/qa/MEMORY.md",
            "roles/qa/daily/2026-11-30.md",
            "roles/qa/gone.md",
        ]
        assert state.paths("roles/q") == []
        assert state.held() == [("roles/qa/daily/2026-11-30.md", HeldLine(3, "GitHub token"))]
        state.forget("roles/qa/gone.md")
        assert state.get("roles/qa/gone.md") is None
        state.clear()
        assert state.paths() == []


def test_pending_publish_finish_and_drop(tmp_path: Path) -> None:
    with SyncState(tmp_path) as state:
        state.put(AppendState("m.jsonl", offset=10, prefix_hash="old"))
        then = AppendState("m.jsonl", offset=20, prefix_hash="new")
        pending = PendingPublish("b" * 64, 10, "a" * 64, 20, then)
        state.begin_publish("m.jsonl", pending)
        assert state.pending_publish("m.jsonl") == pending
        assert state.get("m.jsonl") == AppendState("m.jsonl", offset=10, prefix_hash="old")
        state.finish_publish("m.jsonl")
        assert state.pending_publish("m.jsonl") is None
        assert state.get("m.jsonl") == AppendState("m.jsonl", offset=20, prefix_hash="new")
        state.begin_publish("m.jsonl", pending)
        state.drop_publish("m.jsonl")
        assert state.pending_publish("m.jsonl") is None
        assert state.get("m.jsonl") == AppendState("m.jsonl", offset=20, prefix_hash="new")


def test_pending_delivery_keeps_exact_bytes(tmp_path: Path) -> None:
    data = b"\n\nsame line\nsame line\n\xff\xfe not utf-8\n"
    with SyncState(tmp_path) as state:
        then = AppendState("d/daily/2026-11-30.md", offset=4 + len(data), prefix_hash="x")
        state.begin_delivery("d/daily/2026-11-30.md", PendingDelivery(data, 4, False, then))
    with SyncState(tmp_path) as state:
        pending = state.pending_delivery("d/daily/2026-11-30.md")
        assert pending == PendingDelivery(data, 4, False, then)
        assert state.get("d/daily/2026-11-30.md") is None
        state.finish_delivery("d/daily/2026-11-30.md")
        assert state.get("d/daily/2026-11-30.md") == then
        assert state.pending_delivery("d/daily/2026-11-30.md") is None


_WRITER = """
import sys
from pathlib import Path
from memsync.sync.records import AppendState, WholeState
from memsync.sync.state import SyncState
state = SyncState(Path(sys.argv[1]))
print("ready", flush=True)
n = 0
while True:
    n += 1
    state.put(AppendState("f", offset=n, prefix_hash=str(n)))
"""


def test_kill_during_writes_leaves_a_consistent_record(tmp_path: Path) -> None:
    for _ in range(2):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        with SyncState(tmp_path) as reader:

            def written(r: SyncState = reader) -> bool:
                record = r.get_append("f")
                return record is not None and (record.offset or 0) > 3

            wait_for(written, what="writes")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with SyncState(tmp_path) as state:
            record = state.get_append("f")
            assert record is not None and record.offset is not None
            assert record.prefix_hash == str(record.offset)


def test_a_database_from_before_a_column_gains_it_and_keeps_its_records(tmp_path: Path) -> None:
    """A state database written by an earlier memsync opens, keeps what it knew, and stores the new
    field (``rewritten_since``)."""
    with SyncState(tmp_path) as state:
        state.put(AppendState("roles/qa/daily/2026-11-30.md", offset=12, prefix_hash="ab"))
    db = sqlite3.connect(tmp_path / "state.sqlite")
    db.execute("ALTER TABLE states DROP COLUMN rewritten_since")
    db.commit()
    db.close()
    with SyncState(tmp_path) as state:
        old = state.get("roles/qa/daily/2026-11-30.md")
        assert old == AppendState("roles/qa/daily/2026-11-30.md", offset=12, prefix_hash="ab")
        state.put(AppendState("roles/qa/daily/2026-11-30.md", offset=0, rewritten_since=1000.5))
    with SyncState(tmp_path) as state:
        assert state.get("roles/qa/daily/2026-11-30.md") == AppendState(
            "roles/qa/daily/2026-11-30.md", offset=0, rewritten_since=1000.5
        )


def test_scrub_leaves_no_copy_of_a_replaced_record_on_disk(tmp_path: Path) -> None:
    """After a purge rewrote a whole file's base, the old text is in no file of the database."""
    secret = b"door code 4417-2290 for the lab"
    with SyncState(tmp_path) as state:
        state.put(WholeState("roles/qa/notes.md", synced=b"line one\n" + secret + b"\n", synced_known=True))
        for i in range(50):  # other rows, so the freed cell sits among live pages
            state.put(WholeState(f"roles/qa/n{i}.md", synced=b"x" * 200, synced_known=True))
        state.put(WholeState("roles/qa/notes.md", synced=b"line one\n", synced_known=True))
        state.scrub()
        assert state.get("roles/qa/notes.md") == WholeState(
            "roles/qa/notes.md", synced=b"line one\n", synced_known=True
        )
    for path in tmp_path.iterdir():
        assert secret not in path.read_bytes(), path


def test_close_optimizes_once_and_a_second_close_is_harmless(tmp_path: Path) -> None:
    """SQLite's advice before closing a connection that ran queries: ``PRAGMA optimize``; closing twice is
    safe, and a use after the close fails as sqlite3 says."""
    state = SyncState(tmp_path / "meta")
    state.put(WholeState("roles/qa/MEMORY.md", synced=b"# Memory\n", synced_known=True))
    ran: list[str] = []
    state._db.set_trace_callback(ran.append)
    state.close()
    state.close()
    assert ran.count("PRAGMA optimize") == 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        state.get("roles/qa/MEMORY.md")
    with SyncState(tmp_path / "meta") as again:  # the state closed is whole
        assert again.get("roles/qa/MEMORY.md") == WholeState(
            "roles/qa/MEMORY.md", synced=b"# Memory\n", synced_known=True
        )

"""SyncState.batch: one transaction for many files, durable at each commit, all or nothing between."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.sync.records import AppendState, PendingDelivery, PendingPublish
from memsync.sync.state import SyncState
from tests.support.helpers import REPO_ROOT, wait_for


def test_updates_in_a_batch_are_durable_at_commit_and_rolled_back_after_it(tmp_path: Path) -> None:
    with SyncState(tmp_path) as state, SyncState(tmp_path) as other:
        with pytest.raises(RuntimeError), state.batch():
            state.put(AppendState("a", offset=1))
            assert state.get("a") == AppendState("a", offset=1), "a batch sees its own updates"
            assert other.get("a") is None, "nothing is durable before a commit"
            state.commit()
            assert other.get("a") == AppendState("a", offset=1)
            state.put(AppendState("b", offset=2))
            state.forget("a")
            raise RuntimeError("a failure inside the batch")
        assert state.get("a") == AppendState("a", offset=1), "rolled back to the last commit"
        assert state.get("b") is None
        with state.batch():
            state.put(AppendState("b", offset=3))
            with state.batch():  # nested: part of the outer batch
                state.put(AppendState("c", offset=4))
            assert other.get("c") is None
        assert other.paths() == ["a", "b", "c"]


def test_an_intent_is_committed_at_once_unless_its_write_is_staged(tmp_path: Path) -> None:
    then = AppendState("f", offset=9)
    with SyncState(tmp_path) as state, SyncState(tmp_path) as other, state.batch():
        state.put(AppendState("before", offset=1))
        state.begin_publish("f", PendingPublish("absent", -1, "x", 9, then), durable=False)
        assert other.pending_publish("f") is None and other.get("before") is None
        state.begin_delivery("g", PendingDelivery(b"line\n", 0, False, AppendState("g", offset=5)))
        assert other.pending_publish("f") == PendingPublish("absent", -1, "x", 9, then)
        assert other.pending_delivery("g") is not None and other.get("before") is not None


def test_a_failed_method_in_a_batch_leaves_no_half_record(tmp_path: Path) -> None:
    with SyncState(tmp_path) as state, state.batch():
        state.put(AppendState("kept", offset=1))
        # A delivery whose state row is written and whose pending row cannot be (data SQLite cannot bind).
        bad = PendingDelivery(object(), 0, False, AppendState("f", offset=1))  # type: ignore[arg-type]
        with pytest.raises(sqlite3.Error):
            state.begin_delivery("f", bad, durable=False)
        assert state.pending_delivery("f") is None and state.paths() == ["kept"]


_WRITER = """
import sys
from pathlib import Path
from memsync.sync.records import AppendState
from memsync.sync.state import SyncState
state = SyncState(Path(sys.argv[1]))
print("ready", flush=True)
group = 0
with state.batch():
    while True:
        group += 1
        for i in range(10):
            state.put(AppendState(f"g{group:06d}-{i}", offset=group))
        state.commit()
"""


def test_kill_during_a_batch_leaves_whole_groups(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    with SyncState(tmp_path) as reader:
        wait_for(lambda: len(reader.paths()) >= 50, what="groups committed")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    with SyncState(tmp_path) as state:
        paths = state.paths()
        groups = len(paths) // 10
        assert len(paths) == groups * 10, "a group is committed whole or not at all"
        assert paths == sorted(f"g{group:06d}-{i}" for group in range(1, groups + 1) for i in range(10))

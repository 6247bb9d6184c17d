"""Writers of the same machine update the kept recall index in turn: a `remember` waits for another
writer's lock (SQLite's busy timeout) instead of warning that the index was not refreshed."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.helpers import cli_main

N = 8


def _remember(text: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memsync", "remember", text],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _index(home: Path) -> Path:
    """The kept index, built by a first recall."""
    cli_main("recall", "anything")
    path = home / ".local" / "state" / "memsync" / "recall.sqlite"
    assert path.is_file()
    return path


def test_parallel_remembers_all_reach_the_index_without_a_warning(home: Path) -> None:
    _index(home)
    writers = [_remember(f"Parallel fact number {i} about zebras.") for i in range(N)]
    results = [(w.wait(timeout=120), *w.communicate()) for w in writers]
    assert [rc for rc, _, _ in results] == [0] * N, results
    assert all(err == "" for _, _, err in results), [err for _, _, err in results]
    found = cli_main("recall", "zebras", "--limit", "50").stdout
    assert all(f"Parallel fact number {i} about zebras." in found for i in range(N)), found


@pytest.mark.slow
def test_a_remember_waits_out_another_writer_holding_the_index_longer_than_five_seconds(
    home: Path,
) -> None:
    index = _index(home)
    holder = sqlite3.connect(index, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # what another writer's refresh holds
    writer = _remember("Held back fact about okapis.")
    memory = home / ".agent-memory" / "root.jsonl"
    deadline = time.monotonic() + 60
    while b"okapis" not in (memory.read_bytes() if memory.exists() else b""):
        assert time.monotonic() < deadline and writer.poll() is None
        time.sleep(0.05)
    time.sleep(6)  # the file is written: the writer is now at the index, past a 5 s wait
    holder.commit()
    holder.close()
    assert writer.wait(timeout=60) == 0
    assert writer.communicate()[1] == ""
    assert "Held back fact about okapis." in cli_main("recall", "okapis").stdout

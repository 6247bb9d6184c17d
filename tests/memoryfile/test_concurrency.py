"""agent-memory/0.1 with several real processes: concurrent appends never tear or interleave lines, and
compaction refuses while another process holds the writer lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import read_memory
from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.helpers import REPO_ROOT, wait_for

APPENDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from memsync.memoryfile.file import MemoryFile, NewEntry
    path, name, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    while not go.exists():  # start both writers at the same moment
        time.sleep(0.005)
    memory = MemoryFile(path)
    for i in range(count):
        text = f"{name} entry {i} " + "x" * 200
        memory.remember(NewEntry(text, "lesson", source="session:" + name, confidence=0.5))
""")

LOCK_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from memsync.base.fsio import writer_lock
    path, ready, release = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    with writer_lock(path):
        ready.touch()
        while not release.exists():
            time.sleep(0.01)
""")


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on tmpfs where there is one: 2,000 appends each fsync, and this test is about
    interleaving, not durability. Falls back to ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="memsync-test-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow  # about 4 s alone; over 5 s when the machine is busy
def test_two_processes_appending_1000_entries_each_give_2000_valid_lines(fast_dir: Path) -> None:
    path, go = fast_dir / "shared.jsonl", fast_dir / "go"
    writers = [_spawn(APPENDER, str(path), name, "1000", str(go)) for name in ("alice", "bob")]
    go.touch()
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert len(lines) - 1 == 2001  # header + 2000 entries
    parsed = read_memory(path)
    assert parsed.problems == () and parsed.partial_tail == b""
    texts = [json.loads(line)["text"] for line in lines[1:-1]]
    for name in ("alice", "bob"):
        mine = [t for t in texts if t.startswith(f"{name} ")]
        assert mine == [f"{name} entry {i} " + "x" * 200 for i in range(1000)]  # each writer's order kept
    assert len({r.record.id for r in parsed.records}) == 2000


def test_compact_refuses_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    memory = MemoryFile(path)
    kept = memory.remember(NewEntry("Keep me.", "fact"))
    memory.forget(memory.remember(NewEntry("Drop me.", "fact")).id)
    before = path.read_bytes()
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = _spawn(LOCK_HOLDER, str(path), str(ready), str(release))
    try:
        wait_for(ready.exists, timeout=20, what="the other process to take the writer lock")
        with pytest.raises(MemsyncError, match="another memsync process is writing it"):
            memory.compact()
        assert path.read_bytes() == before
    finally:
        release.touch()
        holder.communicate(timeout=20)
    assert holder.returncode == 0
    report = memory.compact()
    assert (report.lines_before, report.lines_after) == (4, 3)
    assert [e.id for e in memory.view()] == [kept.id]

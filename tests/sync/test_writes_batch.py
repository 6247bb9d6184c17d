"""Publish and deliver of many files, applied in groups (sync.writes.Writes), under SIGKILL.

Two simulated machines A and B share one store directory (as in tests/sync/test_passes.py). A holds a few
hundred
whole files and daily logs, many groups of writes at the group size the worker sets. The worker is killed
at random instants, or kills itself with SIGKILL just before the N-th file of a group is put in place
(``WriteBatch._place``: after the group's intents are committed, among its writes), while both machines
keep writing between kills. Afterwards every file must be the same on A, B and in the store, and every
line of every log there exactly once (DESIGN I1, I7). Run as ``python -m tests.sync.test_writes_batch worker
ROOT MODE [KILL_AT]`` the module is the worker the tests start.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pytest

import memsync.base.fsio
import memsync.sync.writes
from memsync.base.fsio import TEMP_PREFIX, append_once, atomic_write
from memsync.base.layout import is_append_only
from tests.support.helpers import REPO_ROOT
from tests.sync.test_passes_chaos import worker as chaos_worker

_WORKER = (sys.executable, "-m", "tests.sync.test_writes_batch", "worker")
NOTES = 120
LOGS = 120
GROUP = 16  # files per group in the worker: many groups, so kills land inside and between them


def _kill_self_at(count: int) -> None:
    """SIGKILL this process just before the ``count``-th file a WriteBatch puts in place (real writes,
    real kill: only the instant is chosen)."""
    place = memsync.base.fsio.WriteBatch._place
    calls = itertools.count(1)

    def placing(staged: memsync.base.fsio._Staged, tmp: Path | None) -> bool:
        if next(calls) == count:
            os.kill(os.getpid(), signal.SIGKILL)
        return place(staged, tmp)

    memsync.base.fsio.WriteBatch._place = staticmethod(placing)  # type: ignore[method-assign]


def worker(root: Path, mode: str, kill_at: int = 0) -> None:
    """``tests.sync.test_passes_chaos.worker`` (reconcile, then sync rounds: "loop" or "settle") with small
    groups; with ``kill_at``, killed by ``_kill_self_at``."""
    memsync.sync.writes.BATCH_FILES = GROUP
    if kill_at:
        _kill_self_at(kill_at)
    chaos_worker(root, mode)


def _log_name(day: int) -> str:
    return f"daily/{date(2026, 1, 1) + timedelta(days=day)}.md"


def _files(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of the files under ``root``, memsync's temp files left out (a kill inside
    a group's writes may leave some; memsync never syncs them)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not path.name.startswith(TEMP_PREFIX)
    }


@dataclass
class World:
    """Machines A and B (live role directories) and the shared store, with what was written since."""

    root: Path
    rng: random.Random
    appended: Counter[bytes] = field(default_factory=Counter)
    own: int = 0

    @property
    def a(self) -> Path:
        return self.root / "a" / "qa"

    @property
    def b(self) -> Path:
        return self.root / "b" / "qa"

    @classmethod
    def create(cls, root: Path, seed: int) -> World:
        world = cls(root, random.Random(seed))
        for directory in (world.a / "notes", world.a / "daily", world.b, root / "store"):
            directory.mkdir(parents=True)
        for i in range(NOTES):
            (world.a / "notes" / f"n{i:03d}.md").write_bytes(b"note %d version 0\n" % i)
        for day in range(LOGS):
            append_once(world.a / _log_name(day), b"- [a] day %d line 0\n" % day, create=True)
        return world

    def write(self, tag: int) -> None:
        """What agents do between two runs of the worker: new versions, appended lines, a new file on B."""
        for i in self.rng.sample(range(NOTES), 40):
            atomic_write(self.a / "notes" / f"n{i:03d}.md", b"note %d version %d\n" % (i, tag))
        for day in self.rng.sample(range(LOGS), 40):
            line = b"- [a] day %d write %d\n" % (day, tag)
            append_once(self.a / _log_name(day), line)
            self.appended[line] += 1
        atomic_write(self.b / "own" / f"b{tag}.md", b"b's note %d\n" % tag)
        self.own += 1
        if (self.b / _log_name(0)).exists():
            line = b"- [b] write %d\n" % tag
            append_once(self.b / _log_name(0), line)
            self.appended[line] += 1

    def settle_and_check(self) -> None:
        """Run the worker until quiet; then A, B and the store agree and no line is lost or doubled."""
        settle = subprocess.run(
            [*_WORKER, str(self.root), "settle"],
            cwd=REPO_ROOT,
            timeout=300,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        assert settle.returncode == 0
        store, on_a, on_b = _files(self.root / "store" / "roles" / "qa"), _files(self.a), _files(self.b)
        whole = {path for path in on_a if not is_append_only(path)}
        assert len(whole) == NOTES + self.own and {p for p in store if not is_append_only(p)} == whole
        for path in whole:
            assert on_a[path] == store[path] == on_b[path], path
        logs = {path for path in store if is_append_only(path)}
        assert len(logs) == LOGS
        for path in logs:
            lines = Counter(store[path].splitlines(keepends=True))
            assert (
                lines
                == Counter(on_a[path].splitlines(keepends=True))
                == Counter(on_b[path].splitlines(keepends=True))
            ), path
            assert max(lines.values()) == 1, f"{path}: a line published or delivered twice"
        everything = Counter(line for path in logs for line in store[path].splitlines(keepends=True))
        assert all(everything[line] == 1 for line in self.appended), "a line written between runs was lost"


@pytest.mark.slow
def test_sigkill_at_chosen_writes_of_a_group_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    world = World.create(tmp_path, seed=5)
    # The first run writes ~240 store files, then ~240 live files on B: 15 groups each way. Later runs
    # write ~80 of each. Kill points: first write of a group, inside one, last of one, then later runs.
    killed = 0
    for tag, kill_at in enumerate((1, 9, 16, 17, 130, 250, 300, 480, 5, 40, 70, 90), start=1):
        run = subprocess.run(
            [*_WORKER, str(tmp_path), "settle", str(kill_at)],
            cwd=REPO_ROOT,
            timeout=300,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        killed += run.returncode == -signal.SIGKILL
        world.write(tag)
    assert killed >= 10, "most chosen kill points must be reached"
    world.settle_and_check()


@pytest.mark.slow
def test_sigkill_at_random_instants_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    world = World.create(tmp_path, seed=11)
    for tag in range(1, 11):
        proc = subprocess.Popen([*_WORKER, str(tmp_path), "loop"], cwd=REPO_ROOT, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"
        time.sleep(world.rng.uniform(0.0, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        world.write(tag)
    world.settle_and_check()


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "worker":
        worker(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 0)
    else:
        sys.exit("usage: python -m tests.sync.test_writes_batch worker ROOT loop|settle [KILL_AT]")

"""Publish/deliver against real concurrent writer processes, and under SIGKILL at random points.

Two simulated machines A and B share one store directory (see tests/sync/test_passes.py). Writer processes
append unique lines to both machines' daily logs while publish/deliver run; afterwards every line must be
in the store and in both live files exactly once (DESIGN I1, I7). Run as ``python -m
tests.sync.test_passes_chaos
worker ROOT MODE`` the module is the sync worker the tests start and kill.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memsync.config.file import Track
from memsync.sync.passes import deliver, publish, reconcile
from memsync.sync.records import AppendState, PendingDelivery, PendingPublish, digest
from memsync.sync.state import SyncState
from tests.support.helpers import REPO_ROOT

DAILY = "daily/2026-11-30.md"
_WORKER = (sys.executable, "-m", "tests.sync.test_passes_chaos", "worker")

_APPENDER = """
import os, sys, time
path, tag, count, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
os.makedirs(os.path.dirname(path), exist_ok=True)
for i in range(count):
    line = f"- [{tag}] line {i}\\n" + ("\\n" if tag.endswith("+blank") and i % 5 == 0 else "")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line.encode())
    os.close(fd)
    if tag.startswith("a") and i % 10 == 0:
        notes = os.path.join(os.path.dirname(os.path.dirname(path)), "notes.md")
        tmp = notes + ".tmp"
        with open(tmp, "w") as out:
            out.write(f"version {i}\\n")
        os.replace(tmp, notes)
    time.sleep(pause)
"""


def _machines(root: Path) -> list[tuple[Track, SyncState]]:
    return [(Track(root / name / "qa", "roles/qa"), SyncState(root / name / "meta")) for name in ("a", "b")]


def _round(root: Path, machines: list[tuple[Track, SyncState]]) -> bool:
    """One sync round of both machines; True when anything was published, delivered or left waiting."""
    busy = False
    for track, state in machines:
        report = publish(track, root / "store", state)
        delivered = deliver(track, root / "store", state)
        busy = busy or bool(report.changes or delivered.changes or delivered.waiting)
    return busy


def worker(root: Path, mode: str) -> None:
    """Reconcile both machines, then sync in rounds: forever ("loop") or until two quiet rounds ("settle")."""
    machines = _machines(root)
    print("started", flush=True)
    for track, state in machines:
        reconcile(track, root / "store", state)
    quiet = 0
    while mode == "loop" or quiet < 2:
        quiet = 0 if _round(root, machines) else quiet + 1


def _start_appenders(root: Path, count: int, pause: float, blank: bool) -> list[subprocess.Popen[bytes]]:
    suffix = "+blank" if blank else ""
    return [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _APPENDER,
                str(root / name / "qa" / DAILY),
                name + suffix,
                str(count),
                str(pause),
            ]
        )
        for name in ("a", "b")
    ]


def _expected(count: int, blank: bool) -> Counter[bytes]:
    expected: Counter[bytes] = Counter()
    for name in ("a", "b"):
        tag = name + ("+blank" if blank else "")
        for i in range(count):
            expected[f"- [{tag}] line {i}\n".encode()] += 1
            if blank and i % 5 == 0:
                expected[b"\n"] += 1
    return expected


def _lines(path: Path) -> Counter[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends in a partial line"
    return Counter(data.splitlines(keepends=True))


def _check(root: Path, count: int, blank: bool) -> None:
    expected = _expected(count, blank)
    assert _lines(root / "store" / "roles/qa" / DAILY) == expected
    assert _lines(root / "a" / "qa" / DAILY) == expected
    assert _lines(root / "b" / "qa" / DAILY) == expected
    last = f"version {(count - 1) // 10 * 10}\n".encode()
    for where in (root / "store/roles/qa", root / "a/qa", root / "b/qa"):
        assert (where / "notes.md").read_bytes() == last


def _layout(root: Path) -> None:
    for name in ("a", "b"):
        (root / name / "qa" / "daily").mkdir(parents=True)
    (root / "store").mkdir()


def test_concurrent_appenders_every_line_exactly_once(tmp_path: Path) -> None:
    _layout(tmp_path)
    count = 300
    appenders = _start_appenders(tmp_path, count, 0.001, blank=True)
    machines = _machines(tmp_path)
    rounds = 0
    while any(p.poll() is None for p in appenders):
        _round(tmp_path, machines)
        rounds += 1
    assert all(p.wait() == 0 for p in appenders)
    while _round(tmp_path, machines):
        pass
    assert rounds > 3, "publish/deliver did not run while the writers were appending"
    _check(tmp_path, count, blank=True)
    for _, state in machines:
        state.close()


@pytest.mark.slow
def test_sigkill_at_random_points_then_reconcile_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    _layout(tmp_path)
    count = 1500
    appenders = _start_appenders(tmp_path, count, 0.004, blank=False)
    rng = random.Random(4)
    for _ in range(10):
        proc = subprocess.Popen([*_WORKER, str(tmp_path), "loop"], cwd=REPO_ROOT, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"
        # A random kill point in the worker's reconcile or its publish/deliver rounds.
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    assert all(p.wait() == 0 for p in appenders)
    settle = subprocess.run([*_WORKER, str(tmp_path), "settle"], cwd=REPO_ROOT, timeout=60, check=False)
    assert settle.returncode == 0
    _check(tmp_path, count, blank=False)


def test_kill_between_store_append_and_state_update_is_settled(tmp_path: Path) -> None:
    """The torn-store case: a store append killed half way is cut back, then published once."""
    _layout(tmp_path)
    machines = _machines(tmp_path)
    track, state = machines[0]
    live = track.live / DAILY
    live.write_bytes(b"one\n")
    publish(track, tmp_path / "store", state)
    live.write_bytes(b"one\ntwo\nthree\n")
    # Reproduce what a process killed inside its append leaves: the intent recorded, half the bytes written.
    store_copy = tmp_path / "store/roles/qa" / DAILY
    before = store_copy.read_bytes()
    after = before + b"two\nthree\n"
    state.begin_publish(
        "roles/qa/" + DAILY,
        PendingPublish(
            digest(before),
            len(before),
            digest(after),
            len(after),
            AppendState("roles/qa/" + DAILY, offset=len(after), prefix_hash=digest(after)),
        ),
    )
    with store_copy.open("ab") as handle:
        handle.write(b"two\nthr")
    reconcile(track, tmp_path / "store", state)
    assert store_copy.read_bytes() == b"one\n"
    publish(track, tmp_path / "store", state)
    assert store_copy.read_bytes() == b"one\ntwo\nthree\n"
    for _, s in machines:
        s.close()


def test_recorded_delivery_is_applied_or_dropped_by_content(tmp_path: Path) -> None:
    """Killed after recording a delivery: before the write it is dropped, after the write it is applied."""
    _layout(tmp_path)
    (tmp_path / "store/roles/qa/daily").mkdir(parents=True)
    store_copy = tmp_path / "store/roles/qa" / DAILY
    store_copy.write_bytes(b"mine\npeer 1\npeer 2\n")
    (track, state), (_, other) = _machines(tmp_path)
    live = track.live / DAILY
    live.write_bytes(b"mine\n")
    publish(track, tmp_path / "store", state)
    rel = "roles/qa/" + DAILY
    data = b"peer 1\npeer 2\n"
    then = AppendState(rel, offset=5 + len(data), prefix_hash=digest(b"mine\n" + data))
    # Killed before the write: the record is dropped and deliver writes the lines once.
    state.begin_delivery(rel, PendingDelivery(data, 5, False, then))
    reconcile(track, tmp_path / "store", state)
    assert state.pending_delivery(rel) is None
    deliver(track, tmp_path / "store", state)
    assert live.read_bytes() == b"mine\npeer 1\npeer 2\n"
    # Killed after the write: the record is applied, nothing is published back or delivered twice.
    store_copy.write_bytes(store_copy.read_bytes() + b"peer 3\n")
    current = state.get_append(rel)
    assert current is not None and current.offset is not None
    then = AppendState(rel, offset=current.offset + 7, prefix_hash=digest(live.read_bytes() + b"peer 3\n"))
    state.begin_delivery(rel, PendingDelivery(b"peer 3\n", current.offset, False, then))
    with live.open("ab") as handle:
        handle.write(b"peer 3\n")
    reconcile(track, tmp_path / "store", state)
    assert state.get(rel) == then
    publish(track, tmp_path / "store", state)
    deliver(track, tmp_path / "store", state)
    assert live.read_bytes() == b"mine\npeer 1\npeer 2\npeer 3\n"
    assert store_copy.read_bytes() == b"mine\npeer 1\npeer 2\npeer 3\n"
    # An agent appended in the instant between deliver's check and its write: the delivered block sits
    # after the agent's line; publish sends the agent's line and not the delivered one.
    store_copy.write_bytes(store_copy.read_bytes() + b"peer 4\n")
    size = len(live.read_bytes())
    state.begin_delivery(rel, PendingDelivery(b"peer 4\n", size, False, AppendState(rel, offset=size + 7)))
    with live.open("ab") as handle:
        handle.write(b"agent line\npeer 4\n")
    publish(track, tmp_path / "store", state)
    assert store_copy.read_bytes() == b"mine\npeer 1\npeer 2\npeer 3\npeer 4\nagent line\n"
    assert state.pending_delivery(rel) is None
    assert deliver(track, tmp_path / "store", state).changes == ()
    state.close()
    other.close()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "worker":
        worker(Path(sys.argv[2]), sys.argv[3])
    else:
        sys.exit("usage: python -m tests.sync.test_passes_chaos worker ROOT loop|settle")

"""Benchmark of the jsonl merge driver as git runs it, against ``git merge-file --union`` (issue 3
"Benchmark"): a base of N lines of about 300 bytes, each side appending 1k different lines; wall time
and peak RSS of each, in the same run, and their ratios. And the driver's start-up per kind on a tiny
file (issue 15 row 8): the command registered in a store's git config, run through ``sh -c`` as git
runs it, against a bare ``python -c pass`` of the same interpreter, alternating, in the same run.

Run: ``.venv/bin/python bench/merge_bench.py [--lines 100000 1000000] [--repeat 3] [--quick]``.
``--quick`` (2,000 lines, one run, 3 start-ups) proves the script works; its figures mean nothing.
Targets at 1M lines: time ratio (driver / git) below 1.0, driver peak RSS below 3x one input file.
Start-up target: driver median at most 1.3x the bare interpreter's median, for every kind (the verdict is
on wall time; the CPU ratio beside it is steadier on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memsync.merge.registration import driver_command

APPENDED = 1000
STARTUP_TARGET = 1.3
# A tiny merge per kind where both sides changed the file (entry: the bodies conflict, so git merge-file
# runs, as in a real edit of one entry on two machines).
TINY = {
    "jsonl": (b"H\n", b'H\n{"id":"a"}\n', b'H\n{"id":"b"}\n'),
    "daily": (b"x\n", b"x\ny\n", b"x\nz\n"),
    "index": (b"- [a](a.md)\n", b"- [a](a.md)\n- [b](b.md)\n", b"- [a](a.md)\n- [c](c.md)\n"),
    "entry": (b"x\n", b"x\ny\n", b"x\nz\n"),
}
# Runs a command and prints its wall time (s) and the peak RSS of its process tree (KiB, Linux).
_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], 'wb')).returncode\n"
    "took = time.perf_counter() - start\n"
    "print(code, took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def line(n: int, side: str) -> bytes:
    """One canonical entry line of about 300 bytes."""
    obj = {
        "id": f"{side}{n:011x}",
        "kind": "lesson",
        "text": f"Lesson {n} learned on {side}: keep the tail small and stream the prefix; " + "x" * 55,
        "scope": "project:bench",
        "tags": ["bench"],
        "source": "session:2026-11-30-a",
        "confidence": 0.9,
        "created_at": f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z",
    }
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def make_files(folder: Path, lines: int) -> tuple[Path, Path, Path]:
    header = b'{"created_at":"2026-11-01T00:00:00Z","format":"agent-memory/0.1"}\n'
    base, ours, theirs = folder / "base.jsonl", folder / "ours.jsonl", folder / "theirs.jsonl"
    with base.open("wb") as out:
        out.write(header)
        batch: list[bytes] = []
        for n in range(lines):
            batch.append(line(n, "b"))
            if len(batch) == 10_000:
                out.write(b"".join(batch))
                batch.clear()
        out.write(b"".join(batch))
    shutil.copyfile(base, ours)
    shutil.copyfile(base, theirs)
    with ours.open("ab") as out:
        out.write(b"".join(line(n, "o") for n in range(APPENDED)))
    with theirs.open("ab") as out:
        out.write(b"".join(line(n, "t") for n in range(APPENDED)))
    return base, ours, theirs


def measure(command: list[str], stdout: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of ``command`` run in a fresh child of a fresh helper process."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(stdout), *command], capture_output=True, text=True, check=True
    )
    code, took, rss = done.stdout.split()
    if code != "0":
        raise SystemExit(f"{command[:4]} exited {code}")
    return float(took), int(rss) * 1024


def run(lines: int, repeat: int, folder: Path) -> None:
    base, ours, theirs = make_files(folder, lines)
    size = ours.stat().st_size
    work, sink = folder / "work.jsonl", folder / "stdout"
    driver_runs, git_runs = [], []
    for _ in range(repeat):
        shutil.copyfile(ours, work)
        command = registered_argv("jsonl", base, work, theirs, "memory/bench.jsonl")
        driver_runs.append(measure(command, sink))
        merged = work.stat().st_size
        with work.open("rb") as result:
            result.seek(max(0, merged - 4 * 1024 * 1024))
            tail = result.read().splitlines()
        assert merged == size + theirs.stat().st_size - base.stat().st_size, "merge lost or added bytes"
        assert len(set(tail[-2 * APPENDED :])) == 2 * APPENDED
        shutil.copyfile(ours, work)
        git_runs.append(measure(["git", "merge-file", "--union", str(work), str(base), str(theirs)], sink))
    driver_time = statistics.median(t for t, _ in driver_runs)
    git_time = statistics.median(t for t, _ in git_runs)
    driver_rss = max(r for _, r in driver_runs)
    git_rss = max(r for _, r in git_runs)
    mib = 1024 * 1024
    print(f"{lines:>9,} lines, one input file {size / mib:7.1f} MiB, median of {repeat}:")
    print(
        f"    memsync driver jsonl  {driver_time:7.3f} s   peak RSS {driver_rss / mib:7.1f} MiB"
        f" = {driver_rss / size:4.2f}x one input file"
    )
    print(
        f"    git merge-file --union {git_time:6.3f} s   peak RSS {git_rss / mib:7.1f} MiB"
        f" = {git_rss / size:4.2f}x one input file"
    )
    print(f"    ratio driver/git: time {driver_time / git_time:4.2f}, memory {driver_rss / git_rss:4.2f}")


def registered_argv(kind: str, base: Path, ours: Path, theirs: Path, rel_path: str) -> list[str]:
    """The argv of the driver command registered for ``kind``, git's placeholders filled in."""
    fill = {"%O": str(base), "%A": str(ours), "%B": str(theirs), "%P": rel_path}
    return [fill.get(arg, arg) for arg in shlex.split(driver_command(kind))]


def _timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process and the children it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _figures(label: str, runs: list[tuple[float, float]], floor: tuple[float, float] | None) -> str:
    wall, cpu = statistics.median(t for t, _ in runs), statistics.median(c for _, c in runs)
    line = (
        f"    {label:<38}{min(t for t, _ in runs) * 1000:6.1f} / {wall * 1000:6.1f} ms"
        f"   CPU {cpu * 1000:6.1f} ms"
    )
    if floor is None:
        return line
    verdict = "PASS" if wall / floor[0] <= STARTUP_TARGET else "FAIL"
    ratios = f"ratio {wall / floor[0]:4.2f} (CPU {cpu / floor[1]:4.2f})"
    return f"{line}   {ratios} (target <= {STARTUP_TARGET}): {verdict}"


def startup(folder: Path, runs: int) -> None:
    """Row 8: the driver's wall time per kind on a tiny file, started as git starts it (``sh -c`` and the
    registered command), against a bare ``python -c pass``; runs alternate so load hits both alike. CPU
    time (user + system, git merge-file included) is printed too: it varies less under load."""
    base, ours, theirs = folder / "O", folder / "A", folder / "B"
    bare: list[tuple[float, float]] = []
    drivers: dict[str, list[tuple[float, float]]] = {kind: [] for kind in TINY}
    for _ in range(runs):
        for kind, (old, mine, other) in TINY.items():
            base.write_bytes(old)
            ours.write_bytes(mine)
            theirs.write_bytes(other)
            shell = " ".join(shlex.quote(arg) for arg in registered_argv(kind, base, ours, theirs, "f"))
            drivers[kind].append(_timed(["sh", "-c", shell]))
            assert ours.read_bytes() != mine, f"the {kind} driver did not merge"
            bare.append(_timed([sys.executable, "-c", "pass"]))
    floor = statistics.median(t for t, _ in bare), statistics.median(c for _, c in bare)
    print(
        f"driver start-up + tiny merge as git runs it (row 8), wall min / median of {runs},"
        f" load average {os.getloadavg()[0]:.1f}:"
    )
    print(_figures("bare interpreter (python -c pass)", bare, None))
    for kind, times in drivers.items():
        print(_figures(f"driver {kind}", times, floor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--startup-runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="2,000 lines, one run, 3 start-ups")
    args = parser.parse_args()
    lines, repeat, runs = ([2000], 1, 3) if args.quick else (args.lines, args.repeat, args.startup_runs)
    with tempfile.TemporaryDirectory(prefix="memsync-bench-") as tmp:
        startup(Path(tmp), runs)
        for count in lines:
            run(count, repeat, Path(tmp))


if __name__ == "__main__":
    main()

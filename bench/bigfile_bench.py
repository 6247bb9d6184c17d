"""Benchmark of big append-only memory files: what an append, and the first sight of a file, cost in
time and memory when the file is 30 MB or 300 MB, against plain git on the same file in the same run.

Per size (memory files of ~300 B entries, filled like ``bench/sync_bench.py``):

(a) first sight: a daemon (``python -m memsync daemon``, tests/support/peers.py) starts on a file it has never
    synced and its store lacks; timed from the daemon's start to its "start-up cycle done" (publish,
    commit and push of the file), and its peak RSS then (``VmHWM`` of ``/proc/<pid>/status``). Baseline:
    ``git add + git commit + git push`` of the same file in a fresh repository, to a local bare remote.
(b) append -> committed: the daemon restarted (the file synced, its state on disk), single-entry appends
    (each after the previous one was pushed: a quiet daemon), each timed from the ``O_APPEND`` write until
    the HEAD of the store holds the line; minus the debounce, against raw ``git add + git commit`` after a
    one-entry append to the baseline's copy of the file, run just before each append (the same load).
    The daemon's peak RSS over this run is (c).

Targets: (a) <= 2x the baseline, peak RSS <= 150 MB; (b) (median - debounce) <= 1.1x raw commit;
(c) peak RSS <= 150 MB whatever the file's size.

Run: ``.venv/bin/python bench/bigfile_bench.py [--sizes 30,300] [--appends 5] [--quick]``. ``--quick``
(1 and 3 MB, 2 appends) proves the script works; its figures mean little. Temporary files go to a fresh
directory (``--dir``, default the system's temp dir: give a directory on disk where that is a small
tmpfs), removed at the end. The load average is printed with each section: other work on the machine
skews every figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

# sync_bench puts the repository on the path and confines git and memsync to a throwaway HOME.
from sync_bench import (  # noqa: E402
    BRANCH_REF,
    LINE_BYTES,
    POLL_S,
    HeadProbe,
    bench_line,
    daemons,
    fill,
)

from memsync.base.fsio import append_once  # noqa: E402
from memsync.base.refs import read_ref  # noqa: E402
from tests.support.helpers import bare_remote, git, wait_for  # noqa: E402
from tests.support.peers import Peer  # noqa: E402

DEBOUNCE_S = 0.2
RSS_TARGET = 150 << 20
LINE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class SizeResult:
    """Everything measured at one file size (seconds, bytes)."""

    megabytes: int
    file_bytes: int
    first_sight_s: float
    first_sight_hwm: int
    first_baseline_s: float
    latencies: tuple[float, ...]
    raw_commit_s: float
    append_hwm: int


def hwm(pid: int) -> int:
    """The peak resident set size (``VmHWM``) of process ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for {pid}")


def load() -> str:
    """The load average, as printed beside every section."""
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def first_commit_baseline(root: Path, source: Path) -> tuple[float, Path]:
    """Seconds of ``git add + git commit + git push`` of a copy of ``source`` in a fresh repository, and
    that repository's copy of the file."""
    repo = root / "first"
    repo.mkdir()
    remote = bare_remote(root / "first.git")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", str(remote))
    shutil.copyfile(source, repo / source.name)
    start = time.perf_counter()
    subprocess.run(
        ["sh", "-c", f"git add {source.name} && git commit -q -m x && git push -q origin HEAD:main"],
        cwd=repo,
        check=True,
    )
    return time.perf_counter() - start, repo / source.name


def raw_commit(copy: Path, n: int) -> float:
    """Seconds of raw ``git add + git commit`` after a one-entry append to ``copy`` (in its repository)."""
    append_once(copy, bench_line(n, "raw"))
    start = time.perf_counter()
    subprocess.run(["sh", "-c", f"git add {copy.name} && git commit -q -m x"], cwd=copy.parent, check=True)
    return time.perf_counter() - start


def timed_start(peer: Peer) -> tuple[float, int]:
    """Start the daemon of ``peer`` and wait for its start-up cycle: (seconds, peak RSS bytes)."""
    start = time.perf_counter()
    offset = peer.start(wait_ready=False)
    wait_for(
        lambda: "start-up cycle done" in peer.log(offset) or peer.proc_dead(),
        timeout=3600,
        interval=0.05,
        what=f"{peer.name}: start-up cycle",
    )
    took = time.perf_counter() - start
    assert peer.proc is not None and not peer.proc_dead(), peer.log(offset)
    peak = hwm(peer.proc.pid)
    assert peer.stop(600) == 0, peer.log(offset)
    return took, peak


def append_latencies(
    peer: Peer, appends: int, raw_copy: Path
) -> tuple[tuple[float, ...], tuple[float, ...], int]:
    """(b) on a running daemon: seconds from each append until committed, each after a raw commit of
    ``raw_copy`` (the baseline, measured under the same load); the raw seconds; the daemon's peak RSS."""
    probe = HeadProbe(peer.store / ".git", peer.store, "memory/" + peer.memory_file.name)
    latencies: list[float] = []
    raw: list[float] = []
    for n in range(appends):
        raw.append(raw_commit(raw_copy, n))
        line = bench_line(n, "new")
        sent = time.monotonic()
        append_once(peer.memory_file, line)
        seen: dict[bytes, float] = {}
        while line not in seen and time.monotonic() - sent < LINE_TIMEOUT_S:
            time.sleep(POLL_S)
            seen.update(probe.poll([line]))
        latencies.append(seen.get(line, float("inf")) - sent)
        # The next append meets a quiet daemon: this cycle's push (seconds for a big file) is done.
        wait_for(
            lambda: read_ref(peer.remote, BRANCH_REF) == read_ref(peer.store / ".git", BRANCH_REF),
            timeout=LINE_TIMEOUT_S,
            interval=0.05,
            what="the push of the append",
        )
        time.sleep(DEBOUNCE_S + 0.5)
    assert peer.proc is not None
    return tuple(latencies), tuple(raw), hwm(peer.proc.pid)


def bench_size(root: Path, megabytes: int, appends: int) -> SizeResult:
    """Measure one file size in a fresh directory under ``root``."""
    entries = megabytes * (1 << 20) // LINE_BYTES
    here = root / f"{megabytes}mb"
    here.mkdir()
    remote = bare_remote(here / "remote.git")
    peer = Peer.create(here, "alice", remote, debounce_s=DEBOUNCE_S, max_delay_s=10.0, pull_interval_s=3600.0)
    fill(peer.memory_file, entries)
    first_baseline, raw_copy = first_commit_baseline(here, peer.memory_file)
    first_s, first_hwm = timed_start(peer)
    with daemons(peer):
        latencies, raw, append_hwm = append_latencies(peer, appends, raw_copy)
    return SizeResult(
        megabytes,
        peer.memory_file.stat().st_size,
        first_s,
        first_hwm,
        first_baseline,
        latencies,
        statistics.median(raw),
        append_hwm,
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**FAIL**"


def report(result: SizeResult) -> list[str]:
    """Print one size's tables; return its verdict lines."""
    mb = f"{result.file_bytes / (1 << 20):.1f} MiB"
    median = statistics.median(result.latencies)
    beyond = median - DEBOUNCE_S
    ratio = beyond / result.raw_commit_s
    first_ratio = result.first_sight_s / result.first_baseline_s
    print(f"\n## memory file of {mb} ({load()})\n")
    print("| figure | memsync | baseline | ratio |")
    print("| --- | --- | --- | --- |")
    print(
        f"| (a) first sight: start-up cycle vs git add+commit+push | {result.first_sight_s:.2f} s, "
        f"peak RSS {result.first_sight_hwm / (1 << 20):.0f} MiB | {result.first_baseline_s:.2f} s | "
        f"{first_ratio:.2f} |"
    )
    print(
        f"| (b) append -> committed, median - debounce {DEBOUNCE_S:g} s (max) | {beyond:.2f} s "
        f"({max(result.latencies) - DEBOUNCE_S:.2f} s) | raw add+commit {result.raw_commit_s:.2f} s | "
        f"{ratio:.2f} |"
    )
    print(f"| (c) daemon peak RSS over the appends | {result.append_hwm / (1 << 20):.0f} MiB | | |")
    return [
        f"{mb} (a) first sight <= 2x baseline: {first_ratio:.2f}x {verdict(first_ratio <= 2.0)}",
        f"{mb} (a) first sight peak RSS <= 150 MB: {verdict(result.first_sight_hwm <= RSS_TARGET)}",
        f"{mb} (b) append -> committed <= 1.1x raw commit: {ratio:.2f}x {verdict(ratio <= 1.1)}",
        f"{mb} (c) daemon peak RSS <= 150 MB: {verdict(result.append_hwm <= RSS_TARGET)}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30,300", help="file sizes in MiB, comma-separated")
    parser.add_argument("--appends", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1 and 3 MiB, 2 appends: a smoke run")
    parser.add_argument("--dir", type=Path, default=None, help="where the temp directory goes (on disk)")
    args = parser.parse_args(argv)
    sizes = [1, 3] if args.quick else [int(s) for s in args.sizes.split(",")]
    appends = 2 if args.quick else args.appends
    print(f"# big memory files: sizes {sizes} MiB, {appends} appends each ({load()})")
    root = Path(tempfile.mkdtemp(prefix="bigfile-bench-", dir=args.dir))
    verdicts: list[str] = []
    try:
        for megabytes in sizes:
            verdicts += report(bench_size(root, megabytes, appends))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n## targets ({load()})\n")
    for line in verdicts:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

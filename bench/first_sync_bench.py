"""Benchmark of a first sync of many new files (issue 7, bad input: a role directory with 10,000 files),
against the simplest alternative measured in the same run.

For N new files of ~12 bytes in a tracked role directory (``notes/nNNNNN.md``), measured:

(a) ``memsync sync`` on peer A (a CLI subprocess: interpreter start, publish, commit, push to a bare
    remote that is a local path, deliver, status), against the baseline ``cp -r`` of the same files into
    a git repository + ``git add -A`` + ``git commit`` + ``git push`` to a bare remote;
(b) the next ``memsync sync`` on peer B (fetch, merge, deliver of N new files into its live directory),
    against ``git pull`` in a clone of the baseline's remote + ``cp -r`` of the files into a live directory.

git runs with ``gc.autoDetach=false`` in the baseline, as in a memsync store: both pay git's own
``gc --auto`` (thousands of new loose objects trigger it) inside the measured time. Each size is run
``--repeats`` times, memsync and baseline interleaved; the median and the best run are printed, with
the ratio memsync / baseline of each. Other work on a shared machine only adds time (file creation and
fsync here vary 10x with the other users' I/O), so the targets are judged on the best runs.

Targets: (a) at 10,000 files below TARGET_S seconds and (a), (b) within TARGET_RATIO x the baseline.
The last table, "first sync of 10,000 files on A / on B", is the row of the cost-proportional-to-the-
change table (docs/benchmarks.md): both ratios on the best runs, with the load average of the run.

Run: ``.venv/bin/python bench/first_sync_bench.py [--sizes 1000,10000] [--repeats 3] [--quick]``.
``--quick`` (50 files, one run) proves the script works; its figures mean nothing. Temporary files go
to a fresh temp dir, removed at the end.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from tests.support.helpers import bare_remote, git  # noqa: E402
from tests.support.peers import Peer  # noqa: E402

TARGET_S = 5.0
TARGET_FILES = 10_000
TARGET_RATIO = 2.0
SYNC_TIMEOUT_S = 600.0
GIT_NO_DETACH = ("-c", "gc.autoDetach=false")


@dataclass(frozen=True)
class Run:
    """Seconds of one repetition at one size: memsync and baseline, (a) first sync on A, (b) sync on B."""

    memsync_a: float
    memsync_b: float
    baseline_a: float
    baseline_b: float


def make_files(root: Path, count: int) -> Path:
    """``root/notes`` holding ``count`` small markdown files; returns it."""
    notes = root / "notes"
    notes.mkdir(parents=True)
    for i in range(count):
        (notes / f"n{i:06d}.md").write_bytes(b"note %d\n" % i)
    return notes


def timed(action: Callable[[], None]) -> float:
    """Seconds ``action`` took (monotonic clock)."""
    start = time.monotonic()
    action()
    return time.monotonic() - start


def run_memsync(root: Path, notes: Path) -> tuple[float, float]:
    """(a) and (b) for memsync: two peers over a bare remote; the files copied (untimed) into A's role
    directory. Raises AssertionError when a sync fails or a file is missing on B."""
    remote = bare_remote(root / "remote.git")
    alice, bob = Peer.create(root, "alice", remote), Peer.create(root, "bob", remote)
    shutil.copytree(notes, alice.role_dir / "notes")

    def sync(peer: Peer) -> None:
        result = peer.cli("sync", timeout=SYNC_TIMEOUT_S)
        assert result.returncode == 0, f"{peer.name}: memsync sync failed: {result.stderr}"

    first = timed(lambda: sync(alice))
    second = timed(lambda: sync(bob))
    arrived = len(list((bob.role_dir / "notes").iterdir()))
    assert arrived == len(list(notes.iterdir())), f"bob has {arrived} files"
    return first, second


def run_baseline(root: Path, notes: Path) -> tuple[float, float]:
    """(a) and (b) for plain git: ``cp -r`` + add + commit + push; then pull in a clone + ``cp -r``."""
    remote = bare_remote(root / "remote.git")
    repo, clone, live = root / "repo", root / "clone", root / "live"
    for path in (repo, live):
        path.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    git(root, "clone", "-q", str(remote), str(clone))
    target = repo / "roles" / "qa"
    target.mkdir(parents=True)

    def publish() -> None:
        subprocess.run(["cp", "-r", str(notes), str(target)], check=True)
        git(repo, *GIT_NO_DETACH, "add", "-A")
        git(repo, *GIT_NO_DETACH, "commit", "-q", "-m", "new notes")
        git(repo, "push", "-q", "origin", "main")

    def receive() -> None:
        git(clone, *GIT_NO_DETACH, "pull", "-q", "--ff-only")
        subprocess.run(["cp", "-r", str(clone / "roles" / "qa" / "notes"), str(live)], check=True)

    return timed(publish), timed(receive)


def bench_size(count: int, repeats: int, tmp: Path) -> list[Run]:
    """``repeats`` interleaved runs of memsync and the baseline with ``count`` files."""
    source = make_files(tmp / f"source-{count}", count)
    runs = []
    for i in range(repeats):
        memsync_root, baseline_root = tmp / f"memsync-{count}-{i}", tmp / f"baseline-{count}-{i}"
        memsync_root.mkdir()
        baseline_root.mkdir()
        memsync_a, memsync_b = run_memsync(memsync_root, source)
        baseline_a, baseline_b = run_baseline(baseline_root, source)
        runs.append(Run(memsync_a, memsync_b, baseline_a, baseline_b))
        shutil.rmtree(memsync_root)
        shutil.rmtree(baseline_root)
    shutil.rmtree(source.parent)
    return runs


def report(count: int, runs: Sequence[Run]) -> list[tuple[str, bool]]:
    """Print one size's figures; return the verdicts (label, passed) of its targets, on the best runs."""

    def figures(label: str, mine: Callable[[Run], float], base: Callable[[Run], float]) -> float:
        median_m, median_b = statistics.median(map(mine, runs)), statistics.median(map(base, runs))
        best_m, best_b = min(map(mine, runs)), min(map(base, runs))
        print(
            f"| {label} | {median_m:.2f} | {median_b:.2f} | {median_m / median_b:.1f} | {best_m:.2f} | "
            f"{best_b:.2f} | {best_m / best_b:.1f} |"
        )
        return best_m / best_b

    plural = "" if len(runs) == 1 else "s"
    print(
        f"\n## {count} new files, {len(runs)} run{plural}; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(
        "| | memsync s (median) | baseline s | ratio | memsync s (best) | baseline s | ratio |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    ratio_a = figures("(a) first sync on A", lambda r: r.memsync_a, lambda r: r.baseline_a)
    ratio_b = figures("(b) next sync on B", lambda r: r.memsync_b, lambda r: r.baseline_b)
    verdicts = [
        (f"{count} files: (a) < {TARGET_RATIO:g} x baseline", ratio_a < TARGET_RATIO),
        (f"{count} files: (b) < {TARGET_RATIO:g} x baseline", ratio_b < TARGET_RATIO),
    ]
    if count == TARGET_FILES:
        best_a = min(run.memsync_a for run in runs)
        verdicts.append((f"{count} files: (a) < {TARGET_S:g} s", best_a < TARGET_S))
    return verdicts


def print_row(count: int, runs: Sequence[Run]) -> None:
    """The table row "first sync of ``count`` files on A / on B": memsync / baseline on the best runs."""
    ratio_a = min(r.memsync_a for r in runs) / min(r.baseline_a for r in runs)
    ratio_b = min(r.memsync_b for r in runs) / min(r.baseline_b for r in runs)
    print(
        f"\n## row: first sync of {count:,} files on A / on B\n"
        "| figure | today | target |\n| --- | --- | --- |\n"
        f"| first sync of {count:,} files on A / on B | {ratio_a:.1f}x / {ratio_b:.1f}x the "
        "`cp + git add/commit/push` / `git pull + cp` baseline (best runs; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs) | <= {TARGET_RATIO:g}x each |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options, run every size, print the tables and the targets; exit 0 (the figures are the
    result, a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated file counts")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (median printed)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 50 files, one run")
    args = parser.parse_args(argv)
    sizes = [50] if args.quick else [int(size) for size in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    verdicts: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="memsync-first-sync-bench-") as tmp:
        for count in sizes:
            runs = bench_size(count, repeats, Path(tmp))
            verdicts += report(count, runs)
        print_row(sizes[-1], runs)
    print("\n## targets")
    for label, passed in verdicts:
        print(f"- {label}: {'PASS' if passed else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

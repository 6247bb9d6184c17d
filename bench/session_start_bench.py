"""Benchmark of the agent-host hooks (issue 13 "Tests and figures"): how long ``hook session-start``
and ``hook sync-now`` keep an agent waiting, against Python's own start in the same run.

Two machines share a bare remote (tests/support/peers.py): alice writes, bob reads. Bob tracks a memory file
of N entries (~300 B lines) that alice wrote, and Claude Code's projects folder with a project whose
checkout paths differ between the two. Then alice adds 20 entries, 5 index lines and 5 daily-log lines
and both sync. Measured on bob, each run a fresh process as the host starts it (``<python> -P -m
memsync.hook ...`` with the hook JSON on stdin):

(a) session-start, since the last session: the 30 new items (a ``compact`` start, which repeats its
    session's window, so every run does the same work);
(b) session-start, first session: no earlier session recorded, so the whole look-back window (7 days,
    all N entries) is read and cut to 8,000 characters;
(c) sync-now with bob's daemon running (a signal, then exit);
(d) sync-now with no daemon (one publish-and-commit of every store, no exchange).

Baselines in the same run: ``python -c pass`` (the interpreter's start) and ``memsync --version`` (the
full CLI's start). Targets: (a) and (b) p95 < 300 ms with 10,000 entries; (c) p95 < 200 ms.

Run: ``.venv/bin/python bench/session_start_bench.py [--sizes 100,10000] [--runs 30] [--quick]``.
``--quick`` (20 entries, 3 runs) proves the script works; its figures mean nothing. The load average
is printed with each section: other work on the machine skews every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from memsync.base.fsio import append_once  # noqa: E402
from memsync.commands.session_context import SESSIONS_FILE  # noqa: E402
from tests.support.claude_fixtures import checkout, claude_folder  # noqa: E402
from tests.support.helpers import bare_remote, wait_for  # noqa: E402
from tests.support.peers import HEADER, Peer, entry_line, sync  # noqa: E402

SESSION_P95_MS = 300.0
SYNC_NOW_P95_MS = 200.0


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(command: Sequence[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None) -> float:
    """Milliseconds one run of ``command`` takes (it must exit 0)."""
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr}")
    return elapsed


def row(label: str, times: Sequence[float]) -> None:
    median, p95 = statistics.median(times), percentile(times, 0.95)
    print(f"| {label} | {median:.0f} ms | {p95:.0f} ms | {min(times):.0f} ms |")


def measure(
    label: str,
    runs: int,
    command: Sequence[str],
    env: dict[str, str],
    stdin: str = "",
    cwd: Path | None = None,
) -> list[float]:
    times = [timed(command, env, stdin, cwd) for _ in range(runs)]
    row(label, times)
    return times


def bench_size(root: Path, entries: int, runs: int) -> dict[str, list[float]]:
    remote = bare_remote(root / "remote.git")
    alice = Peer.create(root, "alice", remote, memory_header=False)
    bob = Peer.create(root, "bob", remote, memory_header=False)
    shop_a = checkout(alice.home / "src" / "shop", "git@example.com:org/shop.git")
    shop_b = checkout(bob.home / "code" / "shop", "https://example.com/org/shop")
    memory_a = claude_folder(alice.home, shop_a) / "memory"
    claude_folder(bob.home, shop_b)
    for peer in (alice, bob):
        peer.add_track(peer.home / ".claude" / "projects")
    lines = b"".join(
        entry_line(f"Lesson {i}: the bridge on the harbor road closes at dusk.") for i in range(entries)
    )
    append_once(alice.memory_file, HEADER + lines, create=True)
    sync(alice, bob)
    env = {**os.environ, **bob.env}
    hook = [sys.executable, "-P", "-m", "memsync.hook"]
    payload = {"session_id": "s", "cwd": str(shop_b), "hook_event_name": "SessionStart"}
    start = json.dumps({**payload, "source": "startup"})
    compact = json.dumps({**payload, "source": "compact"})
    timed([*hook, "session-start"], env, start, shop_b)  # bob's last session starts here

    for i in range(20):
        alice.append_entry(f"New lesson {i}: ask before deleting a branch.")
    with (memory_a / "MEMORY.md").open("a") as index:
        index.writelines(f"- [Topic {i}](topic-{i}.md) — something alice learned\n" for i in range(5))
    for i in range(5):
        alice.append_daily(f"- [10:0{i}] alice noted item {i}\n")
    sync(alice, bob)
    timed([*hook, "session-start"], env, start, shop_b)  # a new session: its window holds the 30 items

    print(f"\n## {entries:,} entries tracked (load {os.getloadavg()[0]:.2f})\n")
    sessions = Path(bob.env["XDG_STATE_HOME"]) / "memsync" / SESSIONS_FILE

    def first_session() -> float:
        sessions.unlink(missing_ok=True)
        return timed([*hook, "session-start"], env, start, shop_b)

    pass_ = [sys.executable, "-c", "pass"]
    cases: dict[str, tuple[str, Callable[[], float]]] = {
        "pass": ("baseline: `python -c pass`", lambda: timed(pass_, env)),
        "version": (
            "baseline: `memsync --version`",
            lambda: timed([sys.executable, "-m", "memsync", "--version"], env),
        ),
        "(a)": (
            "(a) session-start, 30 new items",
            lambda: timed([*hook, "session-start"], env, compact, shop_b),
        ),
        "(b)": (f"(b) session-start, first session (7 days, {entries:,} entries)", first_session),
    }
    # Round robin: every case sees the same changes of the machine's load.
    times: dict[str, list[float]] = {key: [] for key in cases}
    for _ in range(runs):
        for key, (_, run) in cases.items():
            times[key].append(run())
    times["pass (c)"], times["(c)"] = [], []
    with bob.running():
        for _ in range(runs):
            times["pass (c)"].append(timed(pass_, env))
            times["(c)"].append(timed([*hook, "sync-now"], env, cwd=shop_b))
        wait_for(lambda: "sync requested" in bob.log(), timeout=60)
    times["(d)"] = [timed([*hook, "sync-now"], env, cwd=shop_b) for _ in range(max(3, runs // 5))]
    labels = {key: label for key, (label, _) in cases.items()}
    labels["pass (c)"] = "baseline: `python -c pass`, beside (c)"
    labels["(c)"] = "(c) sync-now, daemon running"
    labels["(d)"] = "(d) sync-now, no daemon"
    print("| what | p50 | p95 | best |\n| --- | --- | --- | --- |")
    for key, measured in times.items():
        row(labels[key], measured)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100,10000", help="entries tracked, comma-separated")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="20 entries, 3 runs: a smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args(argv)
    sizes = [20] if args.quick else [int(size) for size in args.sizes.split(",")]
    runs = 3 if args.quick else args.runs
    print(f"# agent-host hooks: {sys.executable}, {os.cpu_count()} cores")
    verdicts: list[str] = []
    for entries in sizes:
        root = Path(tempfile.mkdtemp(prefix="memsync-hook-bench-"))
        try:
            results = bench_size(root, entries, runs)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        for key, target in (("(a)", SESSION_P95_MS), ("(b)", SESSION_P95_MS), ("(c)", SYNC_NOW_P95_MS)):
            p95 = percentile(results[key], 0.95)
            ratio = statistics.median(results[key]) / statistics.median(
                results["pass (c)" if key == "(c)" else "pass"]
            )
            verdict = "PASS" if p95 < target else "FAIL"
            verdicts.append(
                f"- {entries:,} entries, {key}: p95 {p95:.0f} ms < {target:.0f} ms: {verdict} "
                f"(median {ratio:.1f} x `python -c pass`)"
            )
    print("\n## targets\n")
    print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

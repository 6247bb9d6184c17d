"""Benchmark of `memsync mcp`'s start-up (DESIGN "Agent hosts"): a new server's ``initialize``, and its first
``recall`` sent at once after it, spoken to in raw JSON-RPC lines (``tests.support.mcp_lines``).

Set-up: the machine of ``bench/recall.py`` (N entries, a curated note, a daily log, one `memsync sync`),
its index kept and each query asked once through the CLI (the commits that introduced the hits are then
remembered). Measured per server start, the starts alternated with `python -m memsync --version` (all see
the same load on a shared machine), for each mode (lexical: the semantic extra hidden; hybrid, where the
extra is installed):

1. ``initialize``: spawn to answer, wall time and the server's CPU time (``/proc/<pid>/stat``), against
   `--version` (its wall and CPU, from ``wait4``): target <= 1.5x;
2. the first ``recall`` after ``initialize``'s answer: wall time, and the server's CPU time spent until
   its answer (both threads: the warm-up and the answer), which a loaded machine does not inflate:
   target <= 300 ms at 10,000 entries.

Run: ``.venv/bin/python bench/mcp_start.py [--sizes 10000] [--starts 5] [--quick]``. ``--quick`` (200
entries, 2 starts) proves the script works; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers (through bench.recall) confines git and memsync to a throwaway HOME.
from bench.mcp_bench import figures, prepare  # noqa: E402
from bench.recall import WORDS, _modes, _text  # noqa: E402
from tests.support.mcp_lines import initialize, line  # noqa: E402

_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
_INITIALIZED = line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _cpu(pid: int) -> float:
    """Seconds of CPU (user and system, every thread) process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_S


def _recall(query: str) -> bytes:
    params = {"name": "recall", "arguments": {"query": query}}
    return line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def _start(env: dict[str, str], query: str) -> tuple[float, float, float, float]:
    """One new server: (initialize wall, its CPU, first recall wall, its CPU), in seconds."""
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "memsync", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(initialize("2025-11-25"))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0
        init_wall, init_cpu = time.perf_counter() - start, _cpu(server.pid)
        asked = time.perf_counter()
        server.stdin.write(_INITIALIZED + _recall(query))
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        recall_wall, recall_cpu = time.perf_counter() - asked, _cpu(server.pid) - init_cpu
        assert answer["id"] == 1 and answer["result"]["structuredContent"]["hits"], answer
    finally:
        server.kill()
        server.wait()
    return init_wall, init_cpu, recall_wall, recall_cpu


def _version(env: dict[str, str]) -> tuple[float, float]:
    """`python -m memsync --version`: (wall, CPU) in seconds."""
    start = time.perf_counter()
    done = subprocess.Popen(
        [sys.executable, "-m", "memsync", "--version"], stdout=subprocess.DEVNULL, env=env
    )
    _, status, usage = os.wait4(done.pid, 0)
    done.returncode = os.waitstatus_to_exitcode(status)
    assert done.returncode == 0
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def _verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISSED"


def _bench(root: Path, size: int, starts: int) -> None:
    peer = prepare(root, size, _text)
    queries = [f"{WORDS[n % len(WORDS)]} {WORDS[(n * 5 + 2) % len(WORDS)]}" for n in range(starts)]
    for query in queries:  # the index kept, each hit's commit looked up once
        assert peer.cli("recall", query, timeout=600).returncode == 0
    base = {**os.environ, **peer.env}
    modes = {mode: {**base, **extra} for mode, extra in _modes(root).items()}
    init: dict[str, list[float]] = {"wall": [], "cpu": []}
    version: dict[str, list[float]] = {"wall": [], "cpu": []}
    first: dict[str, dict[str, list[float]]] = {mode: {"wall": [], "cpu": []} for mode in modes}
    for n in range(starts):
        for mode, env in modes.items():
            init_wall, init_cpu, recall_wall, recall_cpu = _start(env, queries[n])
            init["wall"].append(init_wall)
            init["cpu"].append(init_cpu)
            first[mode]["wall"].append(recall_wall)
            first[mode]["cpu"].append(recall_cpu)
            wall, cpu = _version(base)
            version["wall"].append(wall)
            version["cpu"].append(cpu)
    print(f"{size} entries, {starts} starts per mode, load {os.getloadavg()[0]:.1f}:")
    for what in ("wall", "cpu"):
        i50, _ = figures(init[what])
        v50, _ = figures(version[what])
        ratio = i50 / v50
        print(f"  initialize {what:4s} p50 {i50:7.1f} ms   --version p50 {v50:7.1f} ms   ratio {ratio:5.2f}x")
        print(f"    target <= 1.5x: {_verdict(ratio, 1.5)}")
    for mode in modes:
        for what in ("wall", "cpu"):
            f50, f95 = figures(first[mode][what])
            print(
                f"  first recall after initialize, {mode:7s} {what:4s} p50 {f50:7.1f} ms  p95 {f95:7.1f} ms"
            )
            print(f"    target <= 300 ms (p95): {_verdict(f95, 300)}")


def main() -> int:
    """Parse the options, run each size, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="entries in the memory file, comma-separated")
    parser.add_argument("--starts", type=int, default=5, help="server starts per mode")
    parser.add_argument("--quick", action="store_true", help="200 entries, 2 starts: checks the script runs")
    args = parser.parse_args()
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",")]
    starts = 2 if args.quick else args.starts
    with tempfile.TemporaryDirectory(prefix="memsync-mcp-start-") as tmp:
        for size in sizes:
            _bench(Path(tmp), size, starts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

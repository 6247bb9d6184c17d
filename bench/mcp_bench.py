"""Benchmark of `memsync mcp`: `remember` and `recall` latency through a real client session (the SDK's
stdio client, `python -m memsync mcp` as a subprocess), against baselines measured in the same run.

Set-up, per size N: one machine (``tests.support.peers.Peer``: its own HOME, config and store, no daemon)
whose
tracked memory file holds N entries and whose role directory holds a curated entry and a daily log, all
committed by one `memsync sync` (so recall reads hosts from real history). Measured, p50 and p95:

- ``remember`` through MCP (one session, calls one after another), against the same append through the
  library in-process (``MemoryFile.remember``: the floor) and through the CLI (`memsync remember`, a new
  interpreter per call: what an agent without MCP would run);
- ``recall`` (10 hits, host and date read from git for each) through MCP, against the same search through
  the library in-process and through the CLI (`memsync recall`);
- start-up: spawn to initialize result, against `python -m memsync --version`.

Run: ``.venv/bin/python bench/mcp_bench.py [--sizes 1000,10000] [--calls 100] [--quick]``. ``--quick``
(100 entries, few calls) proves the script works; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from memsync.base.fsio import append_once  # noqa: E402
from memsync.memoryfile.file import MemoryFile, NewEntry  # noqa: E402
from memsync.recall.search import recall  # noqa: E402
from memsync.tracks.resolve import load_tracks  # noqa: E402
from tests.support.helpers import bare_remote  # noqa: E402
from tests.support.mcp_client import mcp_session, ok  # noqa: E402
from tests.support.peers import MEMORY_FILE, Peer, entry_line  # noqa: E402

WORDS = [
    "harbor",
    "agent",
    "request",
    "timeout",
    "deploy",
    "friday",
    "staging",
    "database",
    "cache",
    "header",
    "token",
    "retry",
    "proxy",
    "branch",
    "review",
    "lint",
    "format",
    "schema",
    "migration",
    "index",
    "query",
    "python",
    "rust",
    "kernel",
    "socket",
]


def figures(times: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    ms = sorted(t * 1000 for t in times)
    p95 = statistics.quantiles(ms, n=20)[18] if len(ms) >= 2 else ms[0]
    return statistics.median(ms), p95


def _line(label: str, times: list[float], base: list[float] | None = None, base_label: str = "") -> str:
    p50, p95 = figures(times)
    text = f"  {label:<34} p50 {p50:8.1f} ms  p95 {p95:8.1f} ms"
    if base is not None:
        b50, b95 = figures(base)
        text += f"   {p50 / b50:6.2f}x / {p95 / b95:6.2f}x {base_label}"
    return text


def _text(n: int) -> str:
    return " ".join(WORDS[(n * k) % len(WORDS)] for k in (1, 3, 7, 11)) + f" item {n}."


def prepare(root: Path, size: int, text: Callable[[int], str] = _text) -> Peer:
    """A machine whose tracked memory file holds ``size`` entries (``text(n)``), whose role directory holds a
    curated note (two lines; its description shares no word with them) and a daily log, all committed by
    one `memsync sync`."""
    peer = Peer.create(root, f"bench{size}", bare_remote(root / f"remote{size}.git"))
    append_once(peer.memory_file, b"".join(entry_line(text(n)) for n in range(size)))
    peer.write_curated(
        "deploys",
        "Tests run on every branch.\nDeploys happen on Fridays after the staging review.\n",
        description="how we ship",
    )
    peer.append_daily("# Daily log — 2026-11-30\n\n- [09:15] The staging database cache was rebuilt.\n")
    result = peer.cli("sync", timeout=1800)
    assert result.returncode in (0, 75), result.stderr
    return peer


def timed_calls(fn: Callable[[], object], count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


async def _timed(fn: Callable[[int], Awaitable[object]], count: int) -> list[float]:
    times = []
    for n in range(count):
        start = time.perf_counter()
        await fn(n)
        times.append(time.perf_counter() - start)
    return times


def _bench(root: Path, size: int, calls: int, cli_calls: int) -> None:
    peer = prepare(root, size)
    os.environ.update(peer.env)  # the in-process baselines read this peer's config and memory
    config = load_tracks(peer.config)
    memory = MemoryFile(peer.memory_file)
    queries = [f"{WORDS[n % len(WORDS)]} {WORDS[(n * 5 + 2) % len(WORDS)]}" for n in range(calls)]
    results: dict[str, list[float]] = {}

    async def session() -> None:
        with (root / f"server{size}.log").open("w") as err:
            async with mcp_session(peer.env, err) as mcp:

                async def remember(n: int) -> None:
                    await ok(
                        mcp, "remember", {"text": f"MCP {_text(n)}", "kind": "lesson", "file": MEMORY_FILE}
                    )

                async def search(n: int) -> None:
                    hits = (await ok(mcp, "recall", {"query": queries[n]}))["hits"]
                    assert hits, queries[n]

                results["mcp remember"] = await _timed(remember, calls)
                results["mcp recall"] = await _timed(search, calls)

    anyio.run(session)
    counter = iter(range(10**9))
    results["library remember"] = timed_calls(
        lambda: memory.remember(NewEntry(f"Lib {_text(next(counter))}", "lesson")), calls
    )
    query = iter(queries * 2)
    results["library recall"] = timed_calls(lambda: recall(config, next(query)), calls)
    results["cli remember"] = timed_calls(
        lambda: peer.cli("remember", f"CLI {_text(next(counter))}", "--file", str(peer.memory_file)),
        cli_calls,
    )
    results["cli recall"] = timed_calls(lambda: peer.cli("recall", next(query)), cli_calls)

    async def start_once() -> None:
        with (root / "start.log").open("w") as err:
            async with mcp_session(peer.env, err):
                pass

    results["mcp start"] = timed_calls(lambda: anyio.run(start_once), cli_calls)
    results["cli --version"] = timed_calls(lambda: peer.cli("--version"), cli_calls)

    entries = peer.memory_file.read_bytes().count(b"\n") - 1
    print(f"{size} entries ({entries} at the end), {calls} MCP calls, {cli_calls} CLI runs:")
    print(_line("remember via MCP", results["mcp remember"], results["library remember"], "library"))
    print(_line("", results["mcp remember"], results["cli remember"], "CLI"))
    print(_line("remember via library (in-process)", results["library remember"]))
    print(_line("remember via CLI (memsync remember)", results["cli remember"]))
    print(_line("recall via MCP", results["mcp recall"], results["library recall"], "library"))
    print(_line("", results["mcp recall"], results["cli recall"], "CLI"))
    print(_line("recall via library (in-process)", results["library recall"]))
    print(_line("recall via CLI (memsync recall)", results["cli recall"]))
    print(
        _line("MCP start (spawn to initialize)", results["mcp start"], results["cli --version"], "--version")
    )
    print(_line("memsync --version", results["cli --version"]))


def main() -> int:
    """Parse the options, run each size, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="entries in the memory file, comma-separated")
    parser.add_argument("--calls", type=int, default=100, help="MCP and library calls per operation")
    parser.add_argument("--cli-calls", type=int, default=10, help="CLI runs per operation")
    parser.add_argument("--quick", action="store_true", help="100 entries, 5 calls: checks the script runs")
    args = parser.parse_args()
    sizes = [100] if args.quick else [int(s) for s in args.sizes.split(",")]
    calls, cli_calls = (5, 2) if args.quick else (args.calls, args.cli_calls)
    with tempfile.TemporaryDirectory(prefix="memsync-mcp-bench-") as tmp:
        for size in sizes:
            _bench(Path(tmp), size, calls, cli_calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

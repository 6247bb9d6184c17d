"""Benchmark of recall through the kept index, against a raw SQLite FTS5 query over the same texts in the
same run (DESIGN "Agent hosts", MCP ``recall``).

Set-up, per size N: one machine (``tests.support.peers.Peer``: its own HOME, config and store, no daemon)
whose
tracked memory file holds N entries and whose role directory holds a curated note and a daily log, all
committed by one `memsync sync`. Measured, with the ratio to its baseline and a verdict per target:

1. recall through MCP (the SDK's stdio client, `python -m memsync mcp`, 10 hits, each with host and date),
   p50 and p95 once the index is built, every query was asked once (the commits that introduced the
   hits are then remembered) and the server's SDK is loaded (it answered a ``tools/list``), against the
   raw FTS5 query (``MATCH`` the same words, ``ORDER BY rank LIMIT 10`` over an in-memory table of the
   same texts), each recall just after its raw query (a loaded machine slows both alike): target p95
   <= 2.5x. Measured for each mode: lexical (the semantic extra hidden from the server) and, where the
   extra is installed, hybrid;
2. start-up (``initialize`` against `--version`, a new server's first recall): ``bench/mcp_start.py``,
   which reads the server's own CPU time too;
3. keeping the index current in a cycle: a daemon-style cycle (in-process ``cycle.Cycle``, reused session,
   which holds the index open from one cycle to the next as the daemon's does, the changed path given)
   after one entry appended, with the index kept against the same cycle with the index file renamed
   away (the refresh then stops at once; renamed back, the same file is held still): target <= 1.10x;
4. the index's size on disk against the bytes of the memory it covers: target <= 2x.

Run: ``.venv/bin/python bench/recall.py [--sizes 10000,100000] [--calls 100] [--quick]``. ``--quick``
(200 entries, few calls) proves the script works; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from bench import mcp_bench  # noqa: E402
from bench.mcp_bench import figures, prepare, timed_calls  # noqa: E402
from memsync.base.fsio import append_once  # noqa: E402
from memsync.cycle.run import Cycle  # noqa: E402
from memsync.cycle.session import Session  # noqa: E402
from memsync.recall import embedding  # noqa: E402
from memsync.recall.index import RecallIndex, Unusable, fts_query, size_of  # noqa: E402
from memsync.tracks.resolve import load_tracks  # noqa: E402
from memsync.tracks.tracked import tracked_memory  # noqa: E402
from tests.support.mcp_client import mcp_session, ok  # noqa: E402
from tests.support.peers import Peer, entry_line  # noqa: E402

WORDS = [
    *mcp_bench.WORDS,
    "crane",
    "ferry",
    "bakery",
    "tide",
    "anchor",
    "lantern",
    "signal",
    "ledger",
    "vault",
]


def _verdict(ratio: float, target: float) -> str:
    return f"target <= {target:g}x: {'PASS' if ratio <= target else 'MISSED'}"


def _text(n: int) -> str:
    return " ".join(WORDS[(n * k + n // 7) % len(WORDS)] for k in (1, 3, 7, 11)) + f" item {n}."


def _raw_table(texts: list[str]) -> sqlite3.Connection:
    """The baseline's database: ``texts`` in an in-memory FTS5 table (same tokenizer)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO t(body) VALUES (?)", ((text,) for text in texts))
    db.commit()
    return db


def _raw_query(db: sqlite3.Connection, query: str) -> float:
    """Seconds of one raw FTS5 query for ``query`` over ``_raw_table``."""
    match = fts_query(query)
    start = time.perf_counter()
    db.execute("SELECT rowid, body FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10", (match,)).fetchall()
    return time.perf_counter() - start


def _index_file(peer: Peer) -> Path:
    return peer.home / ".local" / "state" / "memsync" / "recall.sqlite"


def _usable(path: Path) -> bool:
    try:
        RecallIndex.open(path).close()
    except Unusable:
        return False
    return True


def _modes(root: Path) -> dict[str, dict[str, str]]:
    """The recall modes measured, each with what a server's environment adds for it: lexical (the
    semantic extra hidden from the server by a ``sitecustomize``) and, where the extra is installed,
    hybrid."""
    hidden = root / "lexical"
    hidden.mkdir(exist_ok=True)
    (hidden / "sitecustomize.py").write_text("import sys\n\nsys.modules['wordllama'] = None\n")
    path = os.pathsep.join(p for p in (str(hidden), os.environ.get("PYTHONPATH", "")) if p)
    modes = {"lexical": {"PYTHONPATH": path}}
    if embedding.available():
        modes["hybrid"] = {}
    return modes


def _bench(root: Path, size: int, calls: int) -> None:
    peer = prepare(root, size, _text)
    os.environ.update(peer.env)
    texts = [_text(n) for n in range(size)]
    queries = [f"{WORDS[n % len(WORDS)]} {WORDS[(n * 5 + 2) % len(WORDS)]}" for n in range(calls)]
    modes = _modes(root)
    results: dict[str, list[float]] = {}
    index = _index_file(peer)

    async def serve(mode: str) -> None:
        with (root / f"server{size}-{mode}.log").open("w") as err:
            async with mcp_session(modes[mode], err) as mcp:
                if not _usable(index):
                    start = time.perf_counter()
                    await ok(mcp, "recall", {"query": queries[0]})  # no index yet: a fresh scan answers
                    results["no index"] = [time.perf_counter() - start]
                while not _usable(index):
                    await anyio.sleep(0.1)
                for query in queries:  # every hit's commit looked up once
                    await ok(mcp, "recall", {"query": query})
                # The server's start over: the SDK answers a tools/list once it is loaded (its import, a
                # second of CPU beside the recalls answered before it, is mcp_start.py's to measure).
                await mcp.list_tools()
                times, raw_times = [], []
                for query in queries:  # each recall beside its raw query: both see the same load
                    raw_times.append(_raw_query(raw, query))
                    start = time.perf_counter()
                    assert (await ok(mcp, "recall", {"query": query}))["hits"], query
                    times.append(time.perf_counter() - start)
                results[f"mcp recall {mode}"] = times
                results[f"raw {mode}"] = raw_times

    raw = _raw_table(texts)
    for mode in modes:
        anyio.run(serve, mode)
    raw.close()

    # A cycle with the index kept, against the same cycle without an index file.
    config = load_tracks(peer.config)
    store_cfg = config.stores["main"]
    session = Session()
    Cycle(config, store_cfg, session).run()
    counter = iter(range(10**9))

    def cycle() -> None:
        append_once(peer.memory_file, entry_line(f"cycle {_text(next(counter))}"))
        Cycle(config, store_cfg, session, full_reconcile=False, changed=[peer.memory_file]).run()

    with_index: list[float] = []
    without: list[float] = []
    aside = index.with_name("aside.sqlite")
    for _ in range(max(10, calls // 3)):  # alternated; a cycle varies by more than the refresh costs
        with_index += timed_calls(cycle, 1)
        index.rename(aside)
        without += timed_calls(cycle, 1)
        aside.rename(index)
    covered = sum(
        path.stat().st_size
        for source in tracked_memory(config)
        for path in ([source.live] if source.live.is_file() else source.live.rglob("*.md"))
    )
    on_disk = size_of(index)

    c50, _ = figures(with_index)
    b50, _ = figures(without)
    print(f"{size} entries, {calls} queries, load {os.getloadavg()[0]:.1f}:")
    for mode in modes:
        m50, m95 = figures(results[f"mcp recall {mode}"])
        r50, r95 = figures(results[f"raw {mode}"])
        print(f"  recall via MCP, {mode:7s} p50 {m50:8.1f} ms  p95 {m95:8.1f} ms")
        print(f"  raw FTS5 query          p50 {r50:8.2f} ms  p95 {r95:8.2f} ms")
        print(f"  ratio (p95), {mode:7s}    {m95 / r95:8.2f}x  {_verdict(m95 / r95, 2.5)}")
    if "no index" in results:
        no_index = results["no index"][0] * 1000
        print(f"  first recall, no index  {no_index:8.1f} ms (a fresh scan; index built aside)")
    print(f"  cycle with index        p50 {c50:8.1f} ms  without p50 {b50:8.1f} ms")
    print(f"  ratio (p50)             {c50 / b50:8.2f}x  {_verdict(c50 / b50, 1.1)}")
    print(f"  index size              {on_disk / 1e6:8.2f} MB  memory {covered / 1e6:8.2f} MB")
    print(f"  ratio                   {on_disk / covered:8.2f}x  {_verdict(on_disk / covered, 2.0)}")


def main() -> int:
    """Parse the options, run each size, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="entries in the memory file, comma-separated")
    parser.add_argument("--calls", type=int, default=100, help="recall queries per measure")
    parser.add_argument("--quick", action="store_true", help="200 entries, few calls: checks the script runs")
    args = parser.parse_args()
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",")]
    calls = 10 if args.quick else args.calls
    with tempfile.TemporaryDirectory(prefix="memsync-recall-bench-") as tmp:
        for size in sizes:
            _bench(Path(tmp), size, calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

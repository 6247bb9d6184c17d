"""Encrypted remotes (design A: sealed git bundles appended to a ciphertext branch) against the plaintext
remote, in the same run, on the store API (one process, real git, real bare remotes):

- cycle: seconds for one one-entry cycle, writer side (commit, fetch, push) and reader side (fetch and
  integrate on a second device), averaged over N cycles, the two designs' cycles alternating;
- bytes: the remote's size on disk after N one-entry cycles, as pushed (loose objects) and after
  ``git gc`` (what a git host that packs would hold);
- converge: seconds until 8 peers that each wrote one entry at once all hold all 8 (threads, each
  exchanging until it has them), the median of ``--races`` races per design, the designs' races
  alternating (one race is a lottery of who pushes first: single races swing by 2x).

Run: ``python bench/crypt.py [--cycles 1000] [--peers 8] [--races 5]``. Targets (issue): cycle <= 1.5x,
converge <= 1.5x, bytes <= 3x the plaintext figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memsync.config.file import Identity, StoreConfig  # after sys.path
from memsync.crypt import keys, trust
from memsync.store.facade import Store

FILE = "memory/memory.jsonl"
P = TypeVar("P")  # a peer of a race


def store(root: Path, name: str, remote: Path, encrypt: bool) -> Store:
    cfg = StoreConfig(name, root / name, remotes={"origin": str(remote)}, encrypt=encrypt)
    if encrypt:
        # Every store here is one device (one key): the members it reads are its own, expected as a
        # `join --member` would, so the first read of each store checks them and says nothing.
        identity = keys.device_key(create=True)
        trust.expect(
            str(remote), keys.verification_code(keys.public_key(identity), keys.signing_public(identity))
        )
    return Store.init_or_clone(cfg, Identity(name, f"{name}@example.invalid"), name)


def write(s: Store, text: str) -> None:
    path = s.worktree / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(f'{{"id":"{text}","kind":"lesson","text":"lesson {text} about the harbor site"}}\n')
    s.commit_all(f"+1 entry {text}", {FILE})


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def cycles(root: Path, n: int) -> dict[bool, tuple[float, float, int, int]]:
    """Per design (encrypted or not): seconds per cycle written and read, the remote's bytes as pushed
    and packed. The two designs' cycles alternate, so a load that comes and goes weighs on both alike."""
    pairs = {}
    for encrypt in (False, True):
        remote = root / f"remote-{encrypt}.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        pairs[encrypt] = (
            remote,
            store(root, f"w{encrypt}", remote, encrypt),
            store(root, f"r{encrypt}", remote, encrypt),
        )
    spent = {False: [0.0, 0.0], True: [0.0, 0.0]}
    for i in range(n):
        for encrypt, (_, writer, reader) in pairs.items():
            started = time.perf_counter()
            write(writer, f"{i:05d}")
            assert writer.exchange()[0].status == "ok"
            if i % 100 == 0:  # the cycle's own periodic `gc --auto` (cycle.run.GC_EVERY_CYCLES)
                writer.git.gc_auto()
            spent[encrypt][0] += time.perf_counter() - started
            started = time.perf_counter()
            assert reader.exchange()[0].status == "ok"
            spent[encrypt][1] += time.perf_counter() - started
    figures = {}
    for encrypt, (remote, _, _) in pairs.items():
        loose = size(remote)
        subprocess.run(["git", "-C", str(remote), "gc", "-q", "--prune=now"], check=True)
        figures[encrypt] = (spent[encrypt][0] / n, spent[encrypt][1] / n, loose, size(remote))
    return figures


def converge(root: Path, encrypt: bool, peers: int) -> float:
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    stores = [store(root, f"p{i}", remote, encrypt) for i in range(peers)]
    for s in stores:
        s.exchange()

    def run(s: Store, i: int) -> None:
        write(s, f"peer{i}")
        while (s.worktree / FILE).read_text().count("peer") < peers:
            s.exchange()

    # Each peer has every line once it stops; the last pusher's commit then reaches all on the next pull.
    return race(stores, run)


def race(peers: Sequence[P], run: Callable[[P, int], None]) -> float:
    """Seconds until ``run(peer, its index)`` has returned for each of ``peers``, all started at once, each
    in a thread of its own."""
    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(p, i)) for i, p in enumerate(peers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def print_row(label: str, row: tuple[float, float, int, int, float], cycles: int, peers: int) -> None:
    """Print one store's figures (seconds per write and read, remote bytes loose and packed after ``cycles``
    cycles, seconds for ``peers`` peers to converge) as a line of the report."""
    w, r, loose, packed, conv = row
    print(
        f"{label:9}  cycle write {w * 1000:6.1f} ms  read {r * 1000:6.1f} ms  "
        f"remote after {cycles} cycles {loose / 1024:8.0f} KiB loose "
        f"{packed / 1024:7.0f} KiB packed  {peers} peers converge {conv:5.2f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--peers", type=int, default=8)
    parser.add_argument("--races", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memsync-crypt-bench-") as tmp:
        os.environ["MEMSYNC_CONFIG"] = str(Path(tmp) / "config" / "config.toml")  # the device key's home
        measured = cycles(Path(tmp) / "cycles", args.cycles)
        designs = (("plaintext", False), ("encrypted", True))
        races: dict[str, list[float]] = {label: [] for label, _ in designs}
        for n in range(args.races):
            for label, encrypt in designs:
                races[label].append(converge(Path(tmp) / f"{label}-{n}", encrypt, args.peers))
        rows = {}
        for label, encrypt in designs:
            w, r, loose, packed = measured[encrypt]
            rows[label] = (w, r, loose, packed, statistics.median(races[label]))
            print_row(label, rows[label], args.cycles, args.peers)
            print(f"{'':9}  converge races: {' '.join(f'{t:.2f}' for t in races[label])} s", flush=True)
        p, e = rows["plaintext"], rows["encrypted"]
        print(
            f"ratio      cycle write {e[0] / p[0]:.2f}x  read {e[1] / p[1]:.2f}x  (target <= 1.5x); "
            f"bytes loose {e[2] / p[2]:.2f}x  packed {e[3] / p[3]:.2f}x  (target <= 3x); "
            f"converge {e[4] / p[4]:.2f}x  (target <= 1.5x)"
        )


if __name__ == "__main__":
    main()

"""Encrypted remotes, the designs side by side in one run: the plaintext store and design A (sealed git
bundles on a ciphertext branch: the product's own store, ``memsync.store.facade.Store``, as
``bench/crypt.py`` drives it) against design B (per-file deterministic AES-SIV through git clean/smudge
filters, sealed names, a merge driver that opens the three versions and runs memsync's: the prototype
``bench/crypt_design_b.py``, mode ``file`` and mode ``line``) and B's plaintext twin (the prototype's
same git steps with memsync's drivers and no filter: what B's encryption itself costs). Real git, real
bare remotes on local disk, real filters and merges through git.

- leaks: 3 devices sync a store with planted tokens (entry text, file, role and project names, host and
  author); every object, ref and file of each remote is searched for each token and for each 16-byte
  window of each file written; then what the remote's structure shows (files in its tree, commits and
  their distinct dates, paths changed, a file put back to an earlier content seen as such);
- cycle: seconds for one one-entry cycle, writer (write, commit, exchange) and reader (exchange),
  averaged over N cycles, the designs' cycles alternating so a passing load weighs on all alike;
- bytes: the remote after N one-entry cycles, as pushed (loose objects) and after ``git gc``;
- converge: seconds until P peers that each wrote one entry at once all hold all P.

Run: ``python bench/crypt_designs.py [--cycles 1000] [--peers 8]`` (``--quick``: 20 cycles, 3 peers).
"""

from __future__ import annotations

import argparse
import crypt as design_a  # bench/crypt.py: this script's folder comes first on sys.path
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import crypt_design_b as design_b

FILE = design_a.FILE
DESIGNS = ("plaintext", "A", "B", "B-line", "B-twin")
MODE = {"B": "file", "B-line": "line", "B-twin": None}


@dataclass(frozen=True)
class Device:
    """One device of a design: ``put(path, text, append)`` writes a store file and commits,
    ``exchange()`` syncs with the remote, ``read(path)`` is a store file's text, ``gc()`` is the
    cycle's periodic ``gc --auto``."""

    put: Callable[[str, str, bool], None]
    exchange: Callable[[], None]
    read: Callable[[str], str]
    gc: Callable[[], None]


def entry(text: str) -> str:
    return f'{{"id":"{text}","kind":"lesson","text":"lesson {text} about the harbor site"}}'


def device(design: str, root: Path, name: str, remote: Path, secret: bytes) -> Device:
    """A new device ``name`` of ``design`` under ``root`` on the bare ``remote`` (``secret``: design B's
    store secret). ``name`` is also the host and author of a memsync store's commits."""
    if design in ("plaintext", "A"):
        s = design_a.store(root, name, remote, design == "A")

        def put(rel: str, text: str, append: bool) -> None:
            path = s.worktree / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a" if append else "w") as out:
                out.write(text + "\n" if append else text)
            s.commit_all(f"{rel.split('/')[-2]}: {'+1 entry' if append else 'edited'} {rel}", {rel})

        def exchange() -> None:
            outcome = s.exchange()[0]
            assert outcome.status == "ok", outcome

        return Device(put, exchange, lambda rel: (s.worktree / rel).read_text(), s.git.gc_auto)
    peer = design_b.Peer.create(root / name, remote, secret, MODE[design])

    def put_b(rel: str, text: str, append: bool) -> None:
        if append:
            peer.append(rel, text)
        else:
            peer.write(rel, text)

    def gc() -> None:
        peer.git("gc", "-q", "--auto")

    return Device(put_b, peer.exchange, lambda rel: peer.path(rel).read_text(), gc)


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def git_out(remote: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=remote, capture_output=True, check=True).stdout


def leaks(root: Path, design: str) -> str:
    """The leak scenario on ``design``: one line saying what its remote gives away."""
    remote = bare(root / "remote.git")
    secret = os.urandom(32)
    tokens = [f"tok{i:03d}zq" for i in range(200)]
    devices = [device(design, root, f"host{tokens[n]}", remote, secret) for n in range(3)]
    written: list[str] = []
    for n, d in enumerate(devices):
        d.exchange()
        base = f"projects/proj{tokens[3 + n]}/role{tokens[6 + n]}"
        note = f"{base}/note{tokens[9 + n]}.md"
        d.put(note, f"curated {tokens[12 + n]}\n", False)
        written.append(note)
        d.put(FILE, "\n".join(entry(token) for token in tokens[15 + n :: 3]), True)
        d.exchange()
    # A note put back to its first content: equal plaintext, equal ciphertext in a deterministic design.
    first = devices[0].read(written[0])
    for text in ("second version\n", first):
        devices[0].put(written[0], text, False)
        devices[0].exchange()
    for _ in range(2):
        for d in devices:
            d.exchange()
    contents = [devices[0].read(rel).encode() for rel in [*written, FILE]]
    assert all(devices[0].read(FILE) == d.read(FILE) for d in devices)
    assert all(token.encode() in contents[-1] for token in tokens[15:])  # the memory did sync
    held = (
        git_out(remote, "cat-file", "--batch-all-objects", "--batch")
        + git_out(remote, "for-each-ref")
        + b"".join(p.read_bytes() for p in sorted(remote.rglob("*")) if p.is_file())
    )
    found = sum(token.encode() in held for token in tokens)
    windows = {text[i : i + 16] for text in contents for i in range(len(text) - 15)}
    seen = sum(w in held for w in windows)
    files = len(git_out(remote, "ls-tree", "-r", "--name-only", "main").split())
    commits = int(git_out(remote, "rev-list", "--count", "main"))
    dates = len(set(git_out(remote, "log", "--format=%ad %cd", "main").splitlines()))
    paths = len(set(git_out(remote, "log", "--format=", "--name-only", "main").split()))
    raw = git_out(remote, "log", "--reverse", "--format=", "--raw", "--no-abbrev", "--no-merges", "main")
    history: dict[bytes, list[bytes]] = {}
    for line in raw.splitlines():
        meta, path = line.split(b"\t", 1)
        history.setdefault(path, []).append(meta.split()[3])
    back = sum(any(b in blobs[:i] for i, b in enumerate(blobs)) for blobs in history.values())
    return (
        f"{design:9}  tokens found {found:3d}/200  16-byte windows found {seen:5d}/{len(windows)}  "
        f"remote tree {files:3d} files  {commits:3d} commits  {dates:3d} distinct dates  "
        f"{paths:3d} paths ever changed  {back} file(s) seen put back to an earlier content"
    )


def cycles(root: Path, n: int) -> dict[str, tuple[float, float, int, int]]:
    """Per design: seconds per one-entry cycle written and read, the remote's bytes as pushed and packed.
    The designs' cycles alternate."""
    secret = os.urandom(32)
    pairs = {}
    for design in DESIGNS:
        remote = bare(root / f"remote-{design}.git")
        pairs[design] = (
            remote,
            device(design, root, f"w-{design}", remote, secret),
            device(design, root, f"r-{design}", remote, secret),
        )
    spent = {design: [0.0, 0.0] for design in DESIGNS}
    for i in range(n):
        for design, (_, writer, reader) in pairs.items():
            started = time.perf_counter()
            writer.put(FILE, entry(f"{i:05d}"), True)
            writer.exchange()
            if i % 100 == 0:  # the cycle's own periodic `gc --auto` (cycle.run.GC_EVERY_CYCLES)
                writer.gc()
            spent[design][0] += time.perf_counter() - started
            started = time.perf_counter()
            reader.exchange()
            spent[design][1] += time.perf_counter() - started
        if (i + 1) % 50 == 0:
            print(f"  ... {i + 1} cycles", file=sys.stderr, flush=True)
    figures = {}
    for design, (remote, writer, reader) in pairs.items():
        assert reader.read(FILE) == writer.read(FILE) and writer.read(FILE).count("harbor") == n
        loose = design_a.size(remote)
        subprocess.run(["git", "-C", str(remote), "gc", "-q", "--prune=now"], check=True)
        figures[design] = (spent[design][0] / n, spent[design][1] / n, loose, design_a.size(remote))
    return figures


def converge(root: Path, design: str, peers: int) -> float:
    """Seconds until ``peers`` devices of ``design`` that each wrote one entry at once hold all of them."""
    remote = bare(root / "remote.git")
    secret = os.urandom(32)
    devices = [device(design, root, f"p{i}", remote, secret) for i in range(peers)]
    for d in devices:
        d.exchange()

    def run(d: Device, i: int) -> None:
        d.put(FILE, entry(f"peer{i}"), True)
        while d.read(FILE).count("peer") < peers:
            d.exchange()

    return design_a.race(devices, run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--peers", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="20 cycles, 3 peers: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.cycles, args.peers = 20, 3
    with tempfile.TemporaryDirectory(prefix="memsync-crypt-designs-") as tmp:
        os.environ["MEMSYNC_CONFIG"] = str(Path(tmp) / "config" / "config.toml")  # design A's device key
        print("## what the remote gives away (3 devices, 200 planted tokens)", flush=True)
        for design in DESIGNS:
            print(leaks(Path(tmp) / f"leaks-{design}", design), flush=True)
        print(f"## {args.cycles} one-entry cycles, {args.peers} peers converging", flush=True)
        measured = cycles(Path(tmp) / "cycles", args.cycles)
        rows = {}
        for design in DESIGNS:
            w, r, loose, packed = measured[design]
            conv = converge(Path(tmp) / f"converge-{design}", design, args.peers)
            rows[design] = (w, r, loose, packed, conv)
            design_a.print_row(design, rows[design], args.cycles, args.peers)
        print("## ratios (targets: cycle <= 1.5x, bytes <= 3x, converge <= 1.5x the plaintext store)")
        for design, baseline in (
            ("A", "plaintext"),
            ("B", "plaintext"),
            ("B-line", "plaintext"),
            ("B", "B-twin"),
            ("B-line", "B-twin"),
        ):
            e, p = rows[design], rows[baseline]
            print(
                f"{design:6} / {baseline:9}  cycle write {e[0] / p[0]:5.2f}x  read {e[1] / p[1]:5.2f}x  "
                f"bytes loose {e[2] / p[2]:6.2f}x  packed {e[3] / p[3]:6.2f}x  converge {e[4] / p[4]:5.2f}x"
            )


if __name__ == "__main__":
    main()

"""A team on one remote: N peers (each its own HOME, config, store and daemon process on this machine) all
append one entry at once, then go quiet, for a few rounds; for each N the figures of every design asked
for, in the same run:

- converge: seconds from the last write of a round until every peer's live memory file has every line;
- rejected/round: pushes the remote refused per round (counted in the daemons' logs);
- commits/round: commits the remote gained per round (``git rev-list --count --all``), quiet included,
  with the merge commits among them and those whose tree equals a parent's (I9: always 0);
- KiB/1k lines: growth of the remote's object store per 1,000 lines written;
- cycles, fetches, pushes, merges per peer per round (from the daemons' debug logs; ``-`` where a design
  does not log them);
- CPU s/round: the CPU time all daemons and their git children spent per round, and the floor it sets on
  convergence on this machine's cores (CPU / cores).

Designs: ``this tree`` (this checkout's interpreter), ``--baseline REV`` (memsync at revision REV of this
repository, exported and run through PYTHONPATH; default: none), and each ``--python PY`` (another
checkout's interpreter, e.g. ``/work/wt/i16s/.venv/bin/python``: that checkout's memsync, its design).

Run: ``.venv/bin/python bench/peers.py [--peers 2,4,8,16,32] [--rounds 2] [--python PY]...``;
``--quick`` runs 2 and 4 peers, one round each (the suite's smoke test).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.peers import MEMORY_FILE, Peer, running  # after sys.path: needs the repository root
from tests.support.servers.process import Unavailable
from tests.support.servers.transport import Remote, open_remote

REPO_ROOT = Path(__file__).resolve().parents[1]

# What the daemons log (at debug) for each step counted, in every design that logs it.
COUNTED = {
    "cycles": re.compile(r"store \S+: cycle \("),
    "fetches": re.compile(r"fetched \S+ at "),
    "pushes": re.compile(r"pushed to \S+ at "),
    "merges": re.compile(r"(merged|replayed) \S+ onto "),
    "rejected": re.compile(r"push to \S+ rejected"),
}
# The remote is quiet once its refs have not moved for this long after the round converged.
QUIET_S = 3.0
CONVERGE_TIMEOUT_S = 900.0
INIT = (
    "from pathlib import Path\n"
    "try:\n"
    "    from memsync.config.file import load_config\n"
    "except ImportError:  # a checkout from before the packages\n"
    "    from memsync.config import load_config\n"
    "try:\n"
    "    from memsync.store.access import ensure_store\n"
    "except ImportError:  # a checkout from before the cycle's split\n"
    "    from memsync.cycle import ensure_store\n"
    "config = load_config(Path({config!r}))\n"
    "for store_cfg in config.stores.values():\n"
    "    ensure_store(config, store_cfg)\n"
)


@dataclass(frozen=True)
class Design:
    """A design measured: its ``label``, the interpreter its peers run, the PYTHONPATH (an export)."""

    label: str
    python: str
    pythonpath: str | None = None


@dataclass(frozen=True)
class Row:
    """The figures of one design at one team size (per round, over the rounds)."""

    design: str
    peers: int
    converge_s: list[float]
    commits: list[int]
    merges: list[int]
    same_tree: int
    kib_per_1k: float
    counts: dict[str, list[int]]
    cpu_s: list[float]
    load: str

    def render(self) -> str:
        """One table row."""
        conv = f"{statistics.median(self.converge_s):.1f} (max {max(self.converge_s):.1f})"
        per_peer = " / ".join(
            f"{statistics.mean(self.counts[key]) / self.peers:.1f}" if any(self.counts[key]) else "-"
            for key in ("cycles", "fetches", "pushes", "merges")
        )
        cpu = statistics.mean(self.cpu_s)
        return (
            f"| {self.design} | {self.peers} | {conv} | {statistics.mean(self.counts['rejected']):.1f} | "
            f"{statistics.mean(self.commits):.1f} (max {max(self.commits)}) | "
            f"{statistics.mean(self.merges):.1f} | {self.same_tree} | {self.kib_per_1k:.0f} | {per_peer} | "
            f"{cpu:.1f} / {cpu / (os.cpu_count() or 1):.1f} | {self.load} |"
        )


HEADER = (
    "| design | peers | converge s, median | rejected/round | commits/round | merges/round | "
    "same-tree merges | KiB/1k lines | cycles / fetches / pushes / merges per peer per round | "
    "CPU s/round / floor s | load |"
)


def export(rev: str, into: Path) -> Path:
    """The ``memsync`` package at revision ``rev`` of this repository, exported under ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "memsync"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SystemExit(f"peers: --baseline {rev!r}: {archive.stderr.decode().strip()}")
    into.mkdir(parents=True)
    tar = into / "memsync.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as opened:
        opened.extractall(into, filter="data")
    tar.unlink()
    return into


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=path, capture_output=True, text=True, check=False
    ).stdout.strip()


def remote_figures(path: Path) -> tuple[int, int, int, str]:
    """(commits on every ref, merge commits, bytes of the object store, the refs listing) of the bare
    repository at ``path``."""
    # count-objects, not a walk of objects/: a push in progress makes and removes directories there.
    counted = _git(path, "count-objects", "-v")
    facts = dict(line.split(": ", 1) for line in counted.splitlines() if ": " in line)
    size = (int(facts.get("size", 0)) + int(facts.get("size-pack", 0))) * 1024
    commits = int(_git(path, "rev-list", "--count", "--all") or 0)
    merges = int(_git(path, "rev-list", "--count", "--merges", "--all") or 0)
    return commits, merges, size, _git(path, "for-each-ref")


def heads(path: Path) -> list[str]:
    """The commits the remote's refs point to."""
    return _git(path, "for-each-ref", "--format=%(objectname)").split()


def same_tree_merges(path: Path, before: list[str]) -> int:
    """Merge commits the remote gained since its refs were at ``before`` whose tree equals one of their
    parents' trees (I9 forbids them; the merge that joins two stores made apart may have one)."""
    found = 0
    listed = _git(path, "rev-list", "--merges", "--all", "--format=%T %P", "--not", *before)
    for line in listed.splitlines():
        if line.startswith("commit "):
            continue
        tree, *parents = line.split()
        found += any(_git(path, "rev-parse", f"{p}^{{tree}}") == tree for p in parents)
    return found


def wait_converged(peers: list[Peer], lines: list[bytes]) -> float:
    """Wait until every peer's live memory file holds every line; returns when (monotonic seconds)."""
    deadline = time.monotonic() + CONVERGE_TIMEOUT_S
    pending = list(peers)
    while pending:
        pending = [p for p in pending if not all(line in p.read_live(MEMORY_FILE) for line in lines)]
        if not pending:
            break
        if time.monotonic() > deadline:
            names = ", ".join(p.name for p in pending[:5])
            raise SystemExit(f"peers: not converged within {CONVERGE_TIMEOUT_S:g} s ({names} ...)")
        time.sleep(0.02)
    return time.monotonic()


def wait_quiet(path: Path) -> None:
    """Wait until the remote's refs have not moved for ``QUIET_S`` seconds (bounded)."""
    deadline = time.monotonic() + CONVERGE_TIMEOUT_S
    last, since = remote_figures(path)[3], time.monotonic()
    while time.monotonic() - since < QUIET_S and time.monotonic() < deadline:
        time.sleep(0.2)
        now = remote_figures(path)[3]
        if now != last:
            last, since = now, time.monotonic()


def cpu_seconds(peers: list[Peer]) -> float:
    """CPU time (user + system) of the peers' daemons and of the children they reaped (git, drivers)."""
    total = 0.0
    for peer in peers:
        assert peer.proc is not None
        try:
            t = psutil.Process(peer.proc.pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def make_peers(remote: Remote, root: Path, n: int, design: Design) -> list[Peer]:
    """``n`` peers of ``remote``, their stores made by the design's own code."""
    peers = []
    for i in range(n):
        peer = remote.peer(root, f"peer{i:02d}", init_store=False)
        peer.python = design.python
        # The interpreter's own checkout, not this one's (which `python -m` would put first from cwd).
        peer.env["PYTHONSAFEPATH"] = "1"
        if design.pythonpath is not None:
            peer.env["PYTHONPATH"] = design.pythonpath
        peer.run_python(INIT.format(config=str(peer.config)))
        peers.append(peer)
    return peers


def measure(design: Design, n: int, rounds: int, transport: str) -> Row:
    """Run ``rounds`` rounds of ``n`` peers writing at once with ``design``."""
    root = Path(tempfile.mkdtemp(prefix=f"memsync-peers-{n}-"))
    counts: dict[str, list[int]] = {key: [] for key in COUNTED}
    converge: list[float] = []
    commits: list[int] = []
    merges: list[int] = []
    cpu: list[float] = []
    lines: list[bytes] = []
    try:
        with open_remote(transport, root) as remote:  # type: ignore[arg-type]
            peers = make_peers(remote, root / "peers", n, design)
            with running(*peers, ready_timeout=60 + 5 * n):
                wait_quiet(remote.path)
                _, _, size_before, _ = remote_figures(remote.path)
                start = heads(remote.path)
                for round_ in range(rounds):
                    before = remote_figures(remote.path)
                    offsets = {p.name: p.log_path.stat().st_size for p in peers}
                    cpu_before = cpu_seconds(peers)
                    lines += [p.append_entry(f"round {round_} from {p.name}") for p in peers]
                    written = time.monotonic()
                    converge.append(wait_converged(peers, lines) - written)
                    wait_quiet(remote.path)
                    cpu.append(cpu_seconds(peers) - cpu_before)
                    after = remote_figures(remote.path)
                    commits.append(after[0] - before[0])
                    merges.append(after[1] - before[1])
                    logs = [p.log(offsets[p.name]) for p in peers]
                    for key, pattern in COUNTED.items():
                        counts[key].append(sum(len(pattern.findall(text)) for text in logs))
                load = os.getloadavg()
                _, _, size_after, _ = remote_figures(remote.path)
                same = same_tree_merges(remote.path, start)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    per_1k = (size_after - size_before) / 1024 / len(lines) * 1000
    return Row(design.label, n, converge, commits, merges, same, per_1k, counts, cpu, f"{load[0]:.1f}")


def designs(args: argparse.Namespace, exports: Path) -> list[Design]:
    """The designs to measure, in the order of the table."""
    found = [Design("this tree", sys.executable)]
    if args.baseline:
        found.insert(
            0, Design(f"baseline {args.baseline}", sys.executable, str(export(args.baseline, exports)))
        )
    for python in args.python:
        if not os.access(python, os.X_OK):
            raise SystemExit(f"peers: --python {python!r}: not an executable interpreter")
        # A venv's interpreter (CHECKOUT/.venv/bin/python) is named by its checkout; a symlink is kept
        # as it is, since resolving it would name the system's interpreter.
        where = Path(python).absolute()
        named = where.parents[2].name if where.parent.name == "bin" and len(where.parents) > 2 else python
        found.append(Design(named, python))
    return found


def main() -> int:
    """Parse the options, measure every design at each team size, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--peers", default="2,4,8,16,32", help="Team sizes, comma-separated.")
    parser.add_argument("--rounds", type=int, default=2, help="Rounds of writing at each team size.")
    parser.add_argument("--transport", choices=("path", "ssh"), default="path", help="How peers reach it.")
    parser.add_argument(
        "--baseline", default=None, help="Also measure memsync at this revision (e.g. main), exported."
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="Also measure the memsync of the checkout this interpreter runs (repeatable).",
    )
    parser.add_argument("--quick", action="store_true", help="2 and 4 peers, one round (smoke test).")
    args = parser.parse_args()
    # Stopped, the run still stops its daemons and removes its directories (the ``finally`` blocks).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    try:
        sizes = [int(part) for part in ("2,4" if args.quick else args.peers).split(",")]
    except ValueError:
        parser.error(f"--peers: a comma-separated list of numbers, not {args.peers!r}")
    if any(size < 2 for size in sizes):
        parser.error("--peers: at least 2 peers per team")
    rounds = 1 if args.quick else args.rounds
    if rounds < 1:
        parser.error("--rounds: at least 1")
    exports = Path(tempfile.mkdtemp(prefix="memsync-peers-designs-"))
    rows = []
    try:
        measured = designs(args, exports / "baseline")
        for n in sizes:
            for design in measured:
                print(f"# {design.label}, {n} peers ...", file=sys.stderr, flush=True)
                rows.append(measure(design, n, rounds, args.transport))
                print(rows[-1].render(), file=sys.stderr, flush=True)
    except Unavailable as exc:
        print(f"peers: cannot run over {args.transport}: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(exports, ignore_errors=True)
    print(
        f"peers: {rounds} round(s) of every peer appending one entry at once, over {args.transport}, "
        f"on {os.cpu_count()} cores"
    )
    print(HEADER)
    print("|" + " --- |" * (HEADER.count("|") - 1))
    for row in rows:
        print(row.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of the sync daemon (issue 4 "Benchmark"): latency of an append, against the simplest
alternative measured in the same run, plus the daemon's idle cost.

For memory files of N entries (~300 B lines), 50 single-entry appends (each its own cycle), measured:

(a) append -> committed: from the ``O_APPEND`` write of one entry to the live file on peer A until the
    HEAD of A's store (or repository) contains the line;
(b) append on A -> line in peer B's live file, over a bare remote that is a local path.

memsync: two real ``python -m memsync daemon`` processes (tests/support/peers.py), memsync's default timings
(debounce 1 s, max delay 10 s, pull interval 10 s). Baseline: a repository holding the file with an
``inotifywait -m`` loop running ``git add -A && git commit -q -m x && git push -q``, and a clone pulling
every pull interval (``git pull --ff-only``). Where inotifywait is missing, an equivalent watchdog
loop shelling out to the same git commands stands in (labelled so). The raw ``git add && git commit``
time of a file of the same size is measured in the same run: the physical limit of (a); so is raw
commit + push + pull in a clone, the floor of (b) once nothing waits.

Then the idle cost of one daemon tracking 50 role directories: CPU seconds (``/proc/<pid>/stat`` utime +
stime; git children's cutime + cstime shown beside) and ``VmRSS`` over 60 s.

Targets (issue 4): (a) median < debounce + 1.5 x raw commit + 50 ms; (b) median < debounce +
pull/2 + 1.5 x raw commit + 500 ms, and for a local-path remote < 2 s whatever the pull interval;
idle CPU < 0.5 % of one core; RSS < 80 MB.

Run: ``.venv/bin/python bench/sync_bench.py [--appends 50] [--sizes 1000,100000] [--quick]``.
``--quick`` (a smoke run: 3 appends, 100 entries, short timings, 0.5 s idle window measured on peer A
with 5 role directories, to save a daemon start) proves the script works; its figures mean nothing.
Temporary files go to a fresh temp dir, removed at the end (``--keep`` keeps it). Other work on the
machine skews every latency: the load average is printed with each section.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from bench.idle import IdleResult, fill_role, idle_cost, load, make_roles  # noqa: E402
from memsync.base.fsio import append_once  # noqa: E402
from memsync.base.refs import read_ref  # noqa: E402
from tests.support.helpers import bare_remote, git, wait_for  # noqa: E402
from tests.support.peers import HEADER, ROLE_STORE, Peer, entry_line  # noqa: E402

BRANCH_REF = "refs/heads/main"
LINE_BYTES = 300
POLL_S = 0.005
# A line not committed/arrived within this many seconds counts as lost (infinite latency).
LINE_TIMEOUT_S = 60.0
START_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Settings:
    """One bench run's parameters; durations in seconds."""

    appends: int
    sizes: tuple[int, ...]
    debounce_s: float
    max_delay_s: float
    pull_interval_s: float
    idle_window_s: float
    idle_dirs: int
    settle_s: float
    raw_commits: int
    watcher: str
    quick: bool
    keep: bool = False
    seed: int = 1


@dataclass(frozen=True)
class Series:
    """Latencies (seconds; ``math.inf`` for a line that never came) of one system at one file size."""

    committed: tuple[float, ...]
    arrived: tuple[float, ...]


@dataclass(frozen=True)
class SizeResult:
    """Everything measured at one file size."""

    entries: int
    file_bytes: int
    raw: RawTimes
    memsync: Series
    baseline: Series


@dataclass
class _Pending:
    """Lines sent and when (monotonic seconds), and when each was seen committed / arrived."""

    sent: dict[bytes, float] = field(default_factory=dict)
    committed: dict[bytes, float] = field(default_factory=dict)
    arrived: dict[bytes, float] = field(default_factory=dict)


# --- what is measured ----------------------------------------------------------------------------


def bench_line(n: int, tag: str) -> bytes:
    """One agent-memory/0.1 entry line of about ``LINE_BYTES`` bytes (newline included)."""
    text = f"bench {tag} entry {n}: keep appends small and the store's history whole. "
    line = entry_line(text)
    return entry_line(text + "x" * max(0, LINE_BYTES - len(line)))


def fill(path: Path, entries: int) -> None:
    """Write a memory file: the header line and ``entries`` entry lines (written in batches)."""
    with path.open("wb") as out:
        out.write(HEADER)
        for start in range(0, entries, 10_000):
            out.write(b"".join(bench_line(n, "old") for n in range(start, min(entries, start + 10_000))))


class HeadProbe:
    """Tells when the branch of the repository at ``git_dir`` first holds a line in ``rel_path``.

    Polls the branch ref file (no process); reads the file's blob only when the ref moves. The time of a
    hit is when the move was seen, not after the blob was read.
    """

    def __init__(self, git_dir: Path, worktree: Path, rel_path: str) -> None:
        self.git_dir = git_dir
        self.worktree = worktree
        self.rel_path = rel_path
        self.last = read_ref(git_dir, BRANCH_REF)

    def poll(self, waiting: Sequence[bytes]) -> dict[bytes, float]:
        """Lines of ``waiting`` that the branch holds now (line -> monotonic time seen)."""
        now = time.monotonic()
        sha = read_ref(self.git_dir, BRANCH_REF)
        if sha == self.last or sha is None or not waiting:
            return {}
        self.last = sha
        blob = subprocess.run(
            ["git", "-C", str(self.worktree), "cat-file", "blob", f"{sha}:{self.rel_path}"],
            capture_output=True,
            check=True,
        ).stdout
        return {line: now for line in waiting if line in blob}


class TailProbe:
    """Tells when lines appear in the live file ``path``, reading only what was added since last time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size
        self.carry = b""

    def poll(self, waiting: Sequence[bytes]) -> dict[bytes, float]:
        """Lines of ``waiting`` that completed in the file since the last poll (line -> monotonic time)."""
        now = time.monotonic()
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return {}
        if size <= self.offset:
            return {}
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = self.carry + handle.read(size - self.offset)
        self.offset = size
        complete, _, self.carry = data.rpartition(b"\n")
        found = {raw + b"\n" for raw in complete.split(b"\n")} if complete else set()
        return {line: now for line in waiting if line in found}


def measure(
    append: Callable[[bytes], None],
    committed: HeadProbe,
    arrived: TailProbe,
    lines: list[bytes],
    spacing: Callable[[], float],
    *,
    quiet_after_arrival: float | None = None,
) -> Series:
    """Append ``lines`` one by one and time (a) and (b) for each.

    The next line is appended ``spacing()`` seconds after the previous one, and not before the previous
    one is committed (each append its own cycle on A). With ``quiet_after_arrival`` (memsync, whose
    arrival does not wait for a pull timer) it also waits for the previous line's arrival on B plus that
    many seconds, so each append is its own cycle on B too. The baseline does not wait for arrivals: its
    appends then fall at random phases of B's pull timer.
    """
    pending = _Pending()
    index = 0
    next_at = time.monotonic()
    while True:
        now = time.monotonic()
        previous = lines[index - 1] if index else None
        if previous is not None and quiet_after_arrival is not None and previous in pending.arrived:
            next_at = max(next_at, pending.arrived[previous] + quiet_after_arrival)
        previous_done = (
            previous is None
            or now - pending.sent[previous] > LINE_TIMEOUT_S
            or (
                previous in pending.committed and (quiet_after_arrival is None or previous in pending.arrived)
            )
        )
        if index < len(lines) and now >= next_at and previous_done:
            line = lines[index]
            pending.sent[line] = time.monotonic()
            append(line)
            next_at = pending.sent[line] + spacing()
            index += 1
        for probe, seen in ((committed, pending.committed), (arrived, pending.arrived)):
            waiting = [line for line in pending.sent if line not in seen]
            seen.update(probe.poll(waiting))
        overdue = all(
            now - at > LINE_TIMEOUT_S
            for line, at in pending.sent.items()
            if line not in pending.committed or line not in pending.arrived
        )
        if index == len(lines) and overdue:
            break
        time.sleep(POLL_S)
    return Series(
        committed=tuple(pending.committed.get(line, math.inf) - at for line, at in pending.sent.items()),
        arrived=tuple(pending.arrived.get(line, math.inf) - at for line, at in pending.sent.items()),
    )


@dataclass(frozen=True)
class RawTimes:
    """Plain git on a file of the bench's size (wall seconds, one per sample): ``commits`` are ``git add
    FILE && git commit`` after a one-entry append (the floor of (a)); ``chains`` add ``git push`` to a
    local bare repository and ``git pull --ff-only`` in a clone of it (the floor of (b), nothing waiting)."""

    commits: tuple[float, ...]
    chains: tuple[float, ...]

    @property
    def commit(self) -> float:
        """Median seconds of a raw commit."""
        return statistics.median(self.commits)

    @property
    def chain(self) -> float:
        """Median seconds of a raw commit + push + pull."""
        return statistics.median(self.chains)

    def __add__(self, other: RawTimes) -> RawTimes:
        return RawTimes(self.commits + other.commits, self.chains + other.chains)


def raw_times(root: Path, entries: int, repeat: int) -> RawTimes:
    """Measure :class:`RawTimes` ``repeat`` times in plain repositories under ``root`` holding a memory
    file of ``entries`` entries."""
    repo, remote, clone = root / "raw", root / "raw.git", root / "clone"
    repo.mkdir(parents=True)
    bare_remote(remote)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", str(remote))
    fill(repo / "memory.jsonl", entries)
    git(repo, "add", "memory.jsonl")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "push", "-q", "origin", "HEAD:main")
    git(root, "clone", "-q", str(remote), str(clone))
    commits: list[float] = []
    chains: list[float] = []
    for n in range(repeat):
        append_once(repo / "memory.jsonl", bench_line(n, "raw"))
        start = time.perf_counter()
        subprocess.run(["sh", "-c", "git add memory.jsonl && git commit -q -m x"], cwd=repo, check=True)
        commits.append(time.perf_counter() - start)
        subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=repo, check=True)
        subprocess.run(["git", "pull", "-q", "--ff-only"], cwd=clone, check=True)
        chains.append(time.perf_counter() - start)
    return RawTimes(tuple(commits), tuple(chains))


def spacing_for(settings: Settings, raw_s: float, rng: random.Random) -> Callable[[], float]:
    """Seconds between appends: room for a debounced cycle and the other peer's follow-up cycle, plus a
    random jitter so appends fall at every phase of the pull timer."""
    base = settings.debounce_s + (0.3 if settings.quick else 1.5) + 4 * raw_s
    return lambda: base + rng.uniform(0.0, 0.2 if settings.quick else 1.0)


# --- memsync -------------------------------------------------------------------------------------


def make_peer(
    root: Path, name: str, remote: Path, settings: Settings, extra_tracks: dict[str, str] | None = None
) -> Peer:
    """A memsync peer under ``root/name`` with the run's timings (tests/support/peers.py lays it out)."""
    return Peer.create(
        root,
        name,
        remote,
        debounce_s=settings.debounce_s,
        max_delay_s=settings.max_delay_s,
        pull_interval_s=settings.pull_interval_s,
        extra_tracks=extra_tracks or {},
    )


@contextmanager
def daemons(*peers: Peer) -> Iterator[None]:
    """Run the peers' daemons inside the block (start-up cycles waited for); SIGTERM them after it."""
    offsets = [peer.start(wait_ready=False) for peer in peers]
    try:
        for peer, offset in zip(peers, offsets, strict=True):
            wait_for(
                _started(peer, offset),
                timeout=START_TIMEOUT_S,
                interval=0.2,
                what=f"{peer.name}: daemon start",
            )
            if peer.proc_dead():
                raise SystemExit(f"{peer.name}: daemon died:\n{peer.log(offset)}")
        yield
    finally:
        live = [peer for peer in peers if not peer.proc_dead()]
        for peer in live:
            assert peer.proc is not None
            peer.proc.send_signal(signal.SIGTERM)
        for peer in live:
            # One SIGTERM only: a second one landing during interpreter shutdown (handlers reset) kills it.
            assert peer.proc is not None
            code = peer.proc.wait(120)
            if code != 0:
                print(f"warning: {peer.name}'s daemon exited {code}; log: {peer.log_path}", file=sys.stderr)


def _started(peer: Peer, offset: int) -> Callable[[], bool]:
    """A predicate: the daemon started at log ``offset`` finished its start-up cycle, or died."""
    return lambda: "start-up cycle done" in peer.log(offset) or peer.proc_dead()


def run_memsync(
    root: Path,
    entries: int,
    lines: list[bytes],
    settings: Settings,
    spacing: Callable[[], float],
    *,
    idle: bool = False,
) -> tuple[Series, IdleResult | None]:
    """(a) and (b) for memsync: peers A and B, each a daemon with its own HOME and store, one bare remote.
    With ``idle`` (``--quick`` only, to save a daemon start), A also tracks the idle role directories and
    its idle cost is measured after the appends."""
    remote = bare_remote(root / "remote.git")
    roles = make_roles(root / "alice", settings.idle_dirs) if idle else None
    a = make_peer(root, "alice", remote, settings, roles)
    if idle:
        fill_role(a.role_dir, 0)
    fill(a.memory_file, entries)
    b = make_peer(root, "bob", remote, settings)
    with daemons(a, b):
        size = a.memory_file.stat().st_size
        wait_for(
            lambda: b.memory_file.stat().st_size >= size,
            timeout=START_TIMEOUT_S,
            interval=0.2,
            what="bob: the prefilled memory file delivered",
        )
        # Let the follow-up cycles of start-up finish: quiet daemons before timing.
        time.sleep(settings.settle_s)
        committed = HeadProbe(a.store / ".git", a.store, "memory/" + a.memory_file.name)
        arrived = TailProbe(b.memory_file)
        # After an arrival B runs one more cycle (its own delivery is a change of its live file): wait
        # for it to pass so the next append meets quiet peers.
        quiet = settings.debounce_s + (0.2 if settings.quick else 1.0)
        series = measure(
            lambda line: append_once(a.memory_file, line),
            committed,
            arrived,
            lines,
            spacing,
            quiet_after_arrival=quiet,
        )
        return series, measure_idle(a, settings) if idle else None


# --- baseline ------------------------------------------------------------------------------------

# Shell loops of the baseline; {file} and {pull} are filled in. -m keeps one watch for the whole run;
# without -q inotifywait says "Watches established." on stderr when it is ready.
_INOTIFY_LOOP = (
    "inotifywait -m -e modify {file} | while read -r _; do "
    "git add -A && git commit -q -m x && git push -q origin HEAD:main; done"
)
_WATCHDOG_LOOP = r"""
import subprocess, sys, threading
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
target = sys.argv[1]
wake = threading.Event()
class Handler(FileSystemEventHandler):
    def on_modified(self, event):
        if event.src_path == target:
            wake.set()
observer = Observer()
observer.schedule(Handler(), sys.argv[2])
observer.start()
print("Watches established.", file=sys.stderr, flush=True)
while True:
    wake.wait()
    wake.clear()
    subprocess.run("git add -A && git commit -q -m x && git push -q origin HEAD:main", shell=True)
"""
_PULL_LOOP = "while sleep {pull}; do git pull -q --ff-only; done"


def baseline_label(watcher: str) -> str:
    """How the baseline's commit loop watches, for the report."""
    if watcher == "inotifywait":
        return "inotifywait -m loop: git add -A && git commit -q -m x && git push"
    loop = "watchdog loop shelling out to git add -A && git commit -q -m x && git push"
    return loop if shutil.which("inotifywait") else f"{loop} (no inotifywait: apt-get install inotify-tools)"


@contextmanager
def process_group(args: list[str], cwd: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``args`` in its own process group (stdout+stderr to ``log``); kill that group afterwards."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            args, cwd=cwd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True
        )
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def run_baseline(
    root: Path, entries: int, lines: list[bytes], settings: Settings, spacing: Callable[[], float]
) -> Series:
    """(a) and (b) for the baseline: repository A with a watch-commit-push loop, clone B pulling."""
    remote = bare_remote(root / "remote.git")
    a_repo, b_repo = root / "a", root / "b"
    a_repo.mkdir()
    git(a_repo, "init", "-q", "-b", "main")
    git(a_repo, "remote", "add", "origin", str(remote))
    live = a_repo / "memory.jsonl"
    fill(live, entries)
    git(a_repo, "add", "-A")
    git(a_repo, "commit", "-q", "-m", "start")
    git(a_repo, "push", "-q", "origin", "HEAD:main")
    git(root, "clone", "-q", str(remote), str(b_repo))
    if settings.watcher == "inotifywait":
        watch_args = ["bash", "-c", _INOTIFY_LOOP.format(file="memory.jsonl")]
    else:
        watch_args = [sys.executable, "-c", _WATCHDOG_LOOP, str(live), str(a_repo)]
    watch_log = root / "watch.log"
    pull = ["bash", "-c", _PULL_LOOP.format(pull=settings.pull_interval_s)]
    with process_group(watch_args, a_repo, watch_log), process_group(pull, b_repo, root / "pull.log"):
        # Both loops say "Watches established." on stderr once their watch is set.
        wait_for(
            lambda: "Watches established." in watch_log.read_text(),
            timeout=30,
            what="baseline: watch loop ready",
        )
        committed = HeadProbe(a_repo / ".git", a_repo, "memory.jsonl")
        arrived = TailProbe(b_repo / "memory.jsonl")
        return measure(lambda line: append_once(live, line), committed, arrived, lines, spacing)


# --- idle ----------------------------------------------------------------------------------------


def measure_idle(peer: Peer, settings: Settings) -> IdleResult:
    """CPU and RSS of ``peer``'s running daemon over ``settings.idle_window_s`` with nothing written,
    after ``settings.settle_s`` for the last cycle's follow-ups. Checks its role directories were synced."""
    assert peer.proc is not None
    time.sleep(settings.settle_s)
    result = idle_cost(peer.proc.pid, settings.idle_window_s, settings.idle_dirs)
    if ROLE_STORE not in git(peer.store, "ls-files", "roles"):
        raise SystemExit(f"{peer.name}: the daemon did not publish its role directories")
    return result


def run_idle(root: Path, settings: Settings) -> IdleResult:
    """Idle CPU and RSS of a daemon of its own tracking ``settings.idle_dirs`` role directories and one
    memory file, with a local bare remote and the pull timer running."""
    remote = bare_remote(root / "remote.git")
    peer = make_peer(root, "idle", remote, settings, make_roles(root / "idle", settings.idle_dirs))
    fill_role(peer.role_dir, 0)
    with daemons(peer):
        return measure_idle(peer, settings)


# --- report --------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    """Median (``math.inf`` if any value is)."""
    return statistics.median(values) if values else math.nan


def p95(values: Sequence[float]) -> float:
    """95th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else math.nan


def fmt_s(value: float) -> str:
    """Seconds as ``1.234 s`` (``lost`` for a line that never came)."""
    return "lost" if math.isinf(value) else f"{value:.3f} s"


def verdict(ok: bool) -> str:
    """PASS / FAIL."""
    return "PASS" if ok else "FAIL"


def report_size(result: SizeResult, settings: Settings) -> list[tuple[str, bool]]:
    """Print the table of one file size; return (target description, passed) pairs."""
    mb = result.file_bytes / 1e6
    raw = result.raw.commit
    print(f"\n## memory file of {result.entries} entries ({mb:.1f} MB); {load()} at the end")
    print(
        f"raw git, median of {len(result.raw.commits)} (before memsync and after the baseline): "
        f"`git add && git commit` {raw * 1000:.0f} ms; "
        f"commit + push + pull in a clone (local bare remote) {result.raw.chain * 1000:.0f} ms"
    )
    print(
        f"{'metric':<28}{'memsync med':>13}{'p95':>11}{'baseline med':>14}{'p95':>11}"
        f"{'ratio m/b':>11}{'lost m/b':>10}"
    )
    rows = (
        ("(a) append -> committed", result.memsync.committed, result.baseline.committed),
        ("(b) append A -> live on B", result.memsync.arrived, result.baseline.arrived),
    )
    for label, mine, theirs in rows:
        ratio = median(mine) / median(theirs)
        lost = f"{sum(map(math.isinf, mine))}/{sum(map(math.isinf, theirs))}"
        print(
            f"{label:<28}{fmt_s(median(mine)):>13}{fmt_s(p95(mine)):>11}{fmt_s(median(theirs)):>14}"
            f"{fmt_s(p95(theirs)):>11}{ratio:>11.2f}{lost:>10}"
        )
    limit_a = settings.debounce_s + 1.5 * raw + 0.050
    limit_b = settings.debounce_s + settings.pull_interval_s / 2 + 1.5 * raw + 0.500
    med_a, med_b = median(result.memsync.committed), median(result.memsync.arrived)
    checks = [
        (f"(a) median {fmt_s(med_a)} < debounce + 1.5 x raw + 50 ms = {limit_a:.3f} s", med_a < limit_a),
        (
            f"(b) median {fmt_s(med_b)} < debounce + pull/2 + 1.5 x raw + 500 ms = {limit_b:.3f} s",
            med_b < limit_b,
        ),
        (f"(b) median {fmt_s(med_b)} < 2 s (remote is a local path)", med_b < 2.0),
    ]
    tagged = [(f"{result.entries} entries: {text}", ok) for text, ok in checks]
    for text, ok in checks:
        print(f"  {verdict(ok)}  {text}")
    return tagged


def report_idle(idle: IdleResult) -> list[tuple[str, bool]]:
    """Print the idle figures; return (target description, passed) pairs."""
    share = 100 * idle.cpu_s / idle.window_s
    children = 100 * idle.children_cpu_s / idle.window_s
    rss_mb, hwm_mb = idle.rss_bytes / 2**20, idle.hwm_bytes / 2**20
    print(f"\n## idle daemon, {idle.dirs} tracked role directories, {idle.window_s:.1f} s window; {load()}")
    print(
        f"daemon CPU (utime+stime): {idle.cpu_s:.2f} s = {share:.3f} % of one core; "
        f"git children (cutime+cstime): {idle.children_cpu_s:.2f} s = {children:.3f} %"
    )
    print(f"daemon RSS (VmRSS): {rss_mb:.1f} MiB; peak (VmHWM): {hwm_mb:.1f} MiB")
    checks = [
        (f"idle CPU {share:.3f} % < 0.5 % of one core (daemon process)", share < 0.5),
        (f"RSS {rss_mb:.1f} MiB < 80 MB", idle.rss_bytes < 80e6),
    ]
    for text, ok in checks:
        print(f"  {verdict(ok)}  {text}")
    return checks


def git_version() -> str:
    """``git --version`` without the ``git version`` prefix."""
    return subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]


def run(settings: Settings, workdir: Path) -> list[tuple[str, bool]]:
    """The whole bench in ``workdir``: every size (memsync, then baseline), then idle; prints as it goes
    and returns every (target, passed)."""
    rng = random.Random(settings.seed)
    print(
        f"# memsync sync bench, {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
        f"{' (--quick: smoke run, figures not meaningful)' if settings.quick else ''}"
    )
    print(
        f"host {platform.node()}, {load()}, Linux {platform.release()}, "
        f"Python {platform.python_version()}, git {git_version()}"
    )
    print(
        f"{settings.appends} appends per system and size, one ~{LINE_BYTES} B entry each; memsync daemons "
        f"with debounce {settings.debounce_s} s, max delay {settings.max_delay_s} s, pull interval "
        f"{settings.pull_interval_s} s; remote: a local bare repository"
    )
    print(
        f"baseline: {baseline_label(settings.watcher)}; peer B: `git pull --ff-only` every "
        f"{settings.pull_interval_s} s"
    )
    print(
        "ratio m/b = memsync median / baseline median (< 1: memsync faster); lost = lines never seen "
        f"within {LINE_TIMEOUT_S:.0f} s"
    )
    checks: list[tuple[str, bool]] = []
    idle: IdleResult | None = None
    for entries in settings.sizes:
        folder = workdir / f"size-{entries}"
        # Raw git is timed before memsync and again after the baseline: other load on the machine
        # drifts over minutes, and the targets are scaled by the median of both.
        raw = raw_times(folder / "raw-before", entries, settings.raw_commits)
        spacing = spacing_for(settings, raw.commit, rng)
        idle_here = settings.quick and entries == settings.sizes[-1]
        mine, idle_result = run_memsync(
            folder / "memsync",
            entries,
            [bench_line(n, "memsync") for n in range(settings.appends)],
            settings,
            spacing,
            idle=idle_here,
        )
        idle = idle_result or idle
        theirs = run_baseline(
            folder / "baseline",
            entries,
            [bench_line(n, "baseline") for n in range(settings.appends)],
            settings,
            spacing,
        )
        raw += raw_times(folder / "raw-after", entries, settings.raw_commits)
        result = SizeResult(
            entries, (folder / "raw-before" / "raw" / "memory.jsonl").stat().st_size, raw, mine, theirs
        )
        checks += report_size(result, settings)
        sys.stdout.flush()
    checks += report_idle(idle or run_idle(workdir / "idle", settings))
    print("\n## targets")
    for text, ok in checks:
        print(f"  {verdict(ok)}  {text}")
    return checks


def parse_args(argv: Sequence[str] | None = None) -> Settings:
    """Settings from the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--appends", type=int, help="appends per system and size (default 50; quick 3)")
    parser.add_argument(
        "--sizes", help="comma-separated memory file sizes in entries (default 1000,100000; quick 100)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: short timings, 0.5 s idle window, 5 idle role directories",
    )
    parser.add_argument(
        "--watcher",
        choices=("auto", "inotifywait", "watchdog"),
        default="auto",
        help="baseline's watch loop (auto: inotifywait if installed)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (printed)")
    args = parser.parse_args(argv)
    watcher = args.watcher
    if watcher == "auto":
        watcher = "inotifywait" if shutil.which("inotifywait") else "watchdog"
    elif watcher == "inotifywait" and not shutil.which("inotifywait"):
        parser.error("inotifywait not found: apt-get install inotify-tools")
    sizes = (
        tuple(int(size) for size in args.sizes.split(","))
        if args.sizes
        else ((100,) if args.quick else (1000, 100_000))
    )
    if args.quick:
        settings = Settings(
            appends=args.appends or 3,
            sizes=sizes,
            debounce_s=0.2,
            max_delay_s=1.0,
            pull_interval_s=1.0,
            idle_window_s=0.5,
            idle_dirs=5,
            settle_s=0.3,
            raw_commits=3,
            watcher=watcher,
            quick=True,
            keep=args.keep,
        )
    else:
        settings = Settings(
            appends=args.appends or 50,
            sizes=sizes,
            debounce_s=1.0,
            max_delay_s=10.0,
            pull_interval_s=10.0,
            idle_window_s=60.0,
            idle_dirs=50,
            settle_s=3.0,
            raw_commits=10,
            watcher=watcher,
            quick=False,
            keep=args.keep,
        )
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench and print its report; returns 0 when it ran, whatever the verdicts (a bench measures,
    it does not gate)."""
    settings = parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="memsync-sync-bench-"))
    try:
        run(settings, workdir)
    finally:
        if settings.keep:
            print(f"\nkept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark of what one sync cycle costs against what it has to do: a cycle's work follows the change,
not the number of files tracked, and an idle daemon costs next to nothing.

(1) One daemon-style cycle (in-process ``cycle.Cycle`` with a reused ``Session``, no full reconcile,
    the changed live path given) after one line appended to one file, among 10 / 100 / 1k / 10k tracked
    files, against a local bare remote; baseline: the 10-file figure of the same run (target: <= 1.5x at
    10k). The same cycle without the changed paths (a full pass: every file visited) is shown beside.
(2) A cycle with nothing changed at the largest size, against one raw ``git fetch`` of the same remote
    from the same store (target: <= 50 ms + one fetch).
(3) The idle cost of a real ``python -m memsync daemon`` tracking 50 role directories with a local-path
    remote: CPU % of one core (``/proc/<pid>/stat``) and ``VmRSS`` over a window (target < 0.05 %,
    < 60 MiB).
(4) The same daemon shape with a network remote pulled every 10 s: a ``git daemon`` on 127.0.0.1
    serving a bare repository over ``git://`` (target < 0.3 %).
Beside (3) and (4), measured over the same window: a shell loop running ``git fetch`` in a plain clone as
often as the daemon fetches (every safety-timer period for the watched local remote, every pull interval
for the network one), and the ratio of the daemon's CPU with its git children to the loop's.

Run: ``.venv/bin/python bench/cycle_bench.py [--quick] [--keep]``. ``--quick`` (10 and 100 files, 5 role
directories, 2 s windows, short pull interval) proves the script works; its figures mean nothing. The
machine may be shared: each row prints the load average beside it.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# Importing tests.support.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from bench.idle import IdleResult, fill_role, idle_cost, load, make_roles  # noqa: E402
from memsync.base.fsio import append_once  # noqa: E402
from memsync.cycle.run import Cycle  # noqa: E402
from memsync.cycle.session import Session  # noqa: E402
from memsync.daemon.loop import SAFETY_PULL_FACTOR  # noqa: E402
from memsync.tracks.resolve import load_tracks  # noqa: E402
from tests.support.helpers import bare_remote, git, wait_for  # noqa: E402
from tests.support.peers import DAY, ROLE_STORE, Peer  # noqa: E402

START_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Settings:
    """One run's parameters: tracked-file counts of row 1, repeats per figure, the idle rows' role
    directories, window and pull intervals (seconds)."""

    sizes: tuple[int, ...]
    repeats: int
    dirs: int
    window_s: float
    local_pull_s: float
    network_pull_s: float
    quick: bool


@dataclass(frozen=True)
class SizeFigures:
    """Row 1 and 2 figures at one size (seconds, medians): the cycle given its changed path, the full
    pass, the cycle with nothing changed, and one raw fetch."""

    files: int
    changed: float
    full: float
    idle: float
    fetch: float


def fill_store_role(role_dir: Path, files: int) -> Path:
    """``files`` tracked files in ``role_dir``: curated notes and one daily log; returns the log."""
    role_dir.mkdir(parents=True, exist_ok=True)
    for n in range(files - 1):
        (role_dir / f"note-{n:05d}.md").write_text(
            f"---\nname: note-{n}\ndescription: note {n}\ntype: project\n---\n\nThe note {n} of the bench.\n"
        )
    daily = role_dir / "daily" / f"{DAY}.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text(f"# {DAY}\n\n- [09:00] started\n")
    return daily


def timed(action: Callable[[], object]) -> float:
    """Seconds ``action`` took."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


class SizeStore:
    """One store of row 1 and 2: ``files`` tracked files in one role directory, a local bare remote, the
    start-up cycle run; ``changed``, ``full``, ``idle`` and ``fetch`` collect the seconds measured."""

    def __init__(self, root: Path, files: int) -> None:
        self.files = files
        self.peer = Peer.create(root, f"n{files}", bare_remote(root / f"remote-{files}.git"))
        self.peer.memory_file.unlink()  # the role directory holds all ``files`` tracked files
        self.daily = fill_store_role(self.peer.role_dir, files)
        self.config = load_tracks(self.peer.config)
        self.session = Session()
        Cycle(self.config, self.config.stores["main"], self.session).run()  # everything published
        if f"{ROLE_STORE}/daily/{DAY}.md" not in git(self.peer.store, "ls-files"):
            raise SystemExit(f"{files} files: the first cycle did not publish the role directory")
        self.changed: list[float] = []
        self.full: list[float] = []
        self.idle: list[float] = []
        self.fetch: list[float] = []

    def _cycle(self, changed: frozenset[Path] | None) -> float:
        store_cfg = self.config.stores["main"]
        return timed(
            lambda: Cycle(self.config, store_cfg, self.session, full_reconcile=False, changed=changed).run()
        )

    def measure(self, *, full: bool) -> None:
        """One of each figure (the full pass when ``full``): an append then its cycle, an idle cycle, a
        raw fetch."""
        append_once(self.daily, f"- [10:00] line {time.perf_counter_ns()}\n".encode())
        self.changed.append(self._cycle(frozenset({self.daily})))
        if full:
            append_once(self.daily, f"- [10:01] line {time.perf_counter_ns()}\n".encode())
            self.full.append(self._cycle(None))
        self.idle.append(self._cycle(frozenset()))
        self.fetch.append(timed(lambda: git(self.peer.store, "fetch", "-q", "origin")))

    def figures(self) -> SizeFigures:
        """The medians, after checking every appended line reached the store."""
        if self.daily.read_bytes() != (self.peer.store / ROLE_STORE / "daily" / f"{DAY}.md").read_bytes():
            raise SystemExit(f"{self.files} files: the appended lines did not all reach the store")
        median = statistics.median
        return SizeFigures(
            self.files, median(self.changed), median(self.full), median(self.idle), median(self.fetch)
        )


def measure_sizes(root: Path, settings: Settings) -> list[SizeFigures]:
    """Rows 1 and 2: every size's store set up first, then the repeats interleaved across sizes, so a
    change in the machine's load falls on every size alike."""
    stores = [SizeStore(root, files) for files in settings.sizes]
    for repeat in range(settings.repeats):
        for store in stores:
            store.measure(full=repeat % 3 == 0)
    return [store.figures() for store in stores]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """``git daemon`` serving the bare repositories under ``base`` on 127.0.0.1 (push enabled); yields
    the URL prefix ``git://127.0.0.1:PORT``."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"git://127.0.0.1:{port}"
        wait_for(
            lambda: (
                subprocess.run(["git", "ls-remote", f"{url}/remote.git"], capture_output=True).returncode == 0
            ),
            timeout=30,
            what="git daemon start",
        )
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def idle_peer(
    root: Path, name: str, remote: Path, settings: Settings, pull_s: float, url: str | None
) -> Peer:
    """A peer tracking ``settings.dirs`` role directories (and its memory file), pulling every ``pull_s``."""
    peer = Peer.create(
        root,
        name,
        remote,
        debounce_s=1.0,
        max_delay_s=10.0,
        pull_interval_s=pull_s,
        extra_tracks=make_roles(root / name, settings.dirs),
        init_store=False,
        url=url,
    )
    fill_role(peer.role_dir, 0)
    peer.init_store()
    return peer


@contextmanager
def fetch_loop(root: Path, name: str, url: str, interval_s: float) -> Iterator[int]:
    """The baseline of an idle daemon: a plain clone of ``url`` and a shell loop running ``git fetch``
    in it every ``interval_s`` seconds; yields the shell's PID (its reaped children are the fetches)."""
    clone = root / f"{name}-loop"
    git(root, "clone", "-q", url, str(clone))
    loop = f"while :; do git -C '{clone}' fetch -q origin; sleep {interval_s:g}; done"
    proc = subprocess.Popen(["sh", "-c", loop], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def measure_idle(root: Path, settings: Settings) -> dict[str, IdleResult]:
    """Rows 3 and 4: two daemons at once, one with a local-path remote, one with a ``git://`` remote, and
    beside each its baseline (``fetch_loop``: every safety-timer period for the local remote, whose refs
    the daemon watches, every pull interval for the network one); each process's CPU over the same
    window, after the daemons' start-up cycles. Keys: local, network, local-loop, network-loop."""
    base = root / "served"
    base.mkdir()
    bare_remote(base / "remote.git")
    local_remote = bare_remote(root / "local.git")
    with git_daemon(base) as url:
        network_url = f"{url}/remote.git"
        local = idle_peer(root, "local", local_remote, settings, settings.local_pull_s, None)
        network = idle_peer(
            root, "network", base / "remote.git", settings, settings.network_pull_s, network_url
        )
        for peer in (local, network):
            peer.start(wait_ready=False)
        try:
            for peer in (local, network):
                peer.wait_ready(timeout=START_TIMEOUT_S)
            # Let the start-up cycles' follow-ups (a second exchange) pass.
            time.sleep(1.0 if settings.quick else 5.0)
            assert local.proc is not None and network.proc is not None
            safety_s = SAFETY_PULL_FACTOR * settings.local_pull_s
            with (
                fetch_loop(root, "local", str(local_remote), safety_s) as local_loop,
                fetch_loop(root, "network", network_url, settings.network_pull_s) as network_loop,
            ):
                pids = {
                    "local": local.proc.pid,
                    "network": network.proc.pid,
                    "local-loop": local_loop,
                    "network-loop": network_loop,
                }
                results: dict[str, IdleResult] = {}

                def one(key: str) -> None:
                    results[key] = idle_cost(pids[key], settings.window_s, settings.dirs)

                threads = [threading.Thread(target=one, args=(key,)) for key in pids]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            for peer in (local, network):
                if ROLE_STORE not in git(peer.store, "ls-files", "roles"):
                    raise SystemExit(f"{peer.name}: the daemon did not publish its role directories")
            return results
        finally:
            for peer in (local, network):
                if not peer.proc_dead():
                    peer.stop(timeout=60)


def verdict(ok: bool) -> str:
    """PASS / FAIL."""
    return "PASS" if ok else "FAIL"


def report_sizes(figures: list[SizeFigures]) -> list[tuple[str, bool]]:
    """Print rows 1 and 2; return (target, passed) pairs."""
    base = figures[0]
    print(f"\n## (1) one cycle, 1 changed file among N tracked; {load()}")
    print("| tracked files | cycle, changed path given | ratio to 10 files | full pass (every file) |")
    print("| --- | --- | --- | --- |")
    for f in figures:
        ratio = f.changed / base.changed
        print(f"| {f.files} | {f.changed * 1000:.0f} ms | {ratio:.2f}x | {f.full * 1000:.0f} ms |")
    top = figures[-1]
    print(f"\n## (2) one cycle, nothing changed, {top.files} files, vs one raw `git fetch`; {load()}")
    print(
        f"cycle {top.idle * 1000:.0f} ms; raw fetch {top.fetch * 1000:.0f} ms; "
        f"cycle - fetch {(top.idle - top.fetch) * 1000:.0f} ms; ratio {top.idle / top.fetch:.2f}x"
    )
    ratio = top.changed / base.changed
    return [
        (f"(1) {top.files} files: {ratio:.2f}x the {base.files}-file cycle <= 1.5x", ratio <= 1.5),
        (
            f"(2) idle cycle {top.idle * 1000:.0f} ms <= 50 ms + fetch {top.fetch * 1000:.0f} ms",
            top.idle <= 0.050 + top.fetch,
        ),
    ]


def report_idle(results: dict[str, IdleResult], settings: Settings) -> list[tuple[str, bool]]:
    """Print rows 3 and 4, each beside its baseline loop; return (target, passed) pairs."""
    checks: list[tuple[str, bool]] = []
    for key, row, pull, cpu_target in (
        ("local", "(3) local-path remote", settings.local_pull_s, 0.05),
        ("network", "(4) git:// remote on 127.0.0.1", settings.network_pull_s, 0.3),
    ):
        result, loop = results[key], results[f"{key}-loop"]
        share = 100 * result.cpu_s / result.window_s
        total = 100 * (result.cpu_s + result.children_cpu_s) / result.window_s
        baseline = 100 * (loop.cpu_s + loop.children_cpu_s) / loop.window_s
        every = SAFETY_PULL_FACTOR * pull if key == "local" else pull
        rss = result.rss_bytes / 2**20
        print(
            f"\n## {row}, pull interval {pull:g} s, {result.dirs} role directories, "
            f"{result.window_s:.0f} s window; {load()}"
        )
        print(
            f"daemon CPU {result.cpu_s:.2f} s = {share:.3f} % of one core; with its git children "
            f"{total:.3f} %; RSS {rss:.1f} MiB (peak {result.hwm_bytes / 2**20:.1f} MiB)"
        )
        ratio = f"{total / baseline:.2f}x" if baseline else "n/a (the loop used no measurable CPU)"
        print(f"baseline: `git fetch` every {every:g} s in a shell loop: {baseline:.3f} %; ratio {ratio}")
        checks.append((f"{row}: idle CPU {share:.3f} % < {cpu_target} %", share < cpu_target))
        if key == "local":
            checks.append((f"{row}: RSS {rss:.1f} MiB < 60 MiB", rss < 60))
    return checks


def main() -> int:
    """Parse the options, run every row, print the report; exit 0 (the verdicts are in the report)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, short windows")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        settings = Settings((10, 100), 3, 5, 2.0, 0.5, 0.5, quick=True)
    else:
        settings = Settings((10, 100, 1000, 10000), 9, 50, 120.0, 10.0, 10.0, quick=False)
    root = Path(tempfile.mkdtemp(prefix="memsync-cycle-bench-"))
    try:
        print(f"# memsync cycle bench{' (--quick: smoke run, figures not meaningful)' if args.quick else ''}")
        print(f"{load()}; temp dir {root}")
        figures = measure_sizes(root, settings)
        checks = report_sizes(figures)
        checks += report_idle(measure_idle(root, settings), settings)
        print("\n## targets")
        for text, ok in checks:
            print(f"  {verdict(ok)}  {text}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

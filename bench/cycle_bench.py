"""Benchmark of what one sync cycle costs against what it has to do: a cycle's work follows the change,
not the number of files tracked, and an idle daemon costs next to nothing.

(1) One daemon-style cycle (in-process ``cycle.run_cycle`` with a reused ``Session``, no full reconcile,
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

# Importing tests.peers also confines git and memsync to a throwaway HOME (tests/conftest.py).
from bench.idle import IdleResult, fill_role, idle_cost, load, make_roles  # noqa: E402
from memsync.config import load_config  # noqa: E402
from memsync.cycle import run_cycle  # noqa: E402
from memsync.fsio import append_once  # noqa: E402
from memsync.session import Session  # noqa: E402
from tests.helpers import bare_remote, git, wait_for  # noqa: E402
from tests.peers import DAY, ROLE_STORE, Peer  # noqa: E402

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


def measure_size(root: Path, files: int, repeats: int) -> SizeFigures:
    """Rows 1 and 2 at ``files`` tracked files (a store of its own, a local bare remote)."""
    remote = bare_remote(root / f"remote-{files}.git")
    peer = Peer.create(root, f"n{files}", remote)
    peer.memory_file.unlink()  # the role directory holds all ``files`` tracked files
    daily = fill_store_role(peer.role_dir, files)
    config = load_config(peer.config)
    store_cfg = config.stores["main"]
    session = Session()
    run_cycle(config, store_cfg, session=session)  # the start-up cycle: everything published
    if f"{ROLE_STORE}/daily/{DAY}.md" not in git(peer.store, "ls-files"):
        raise SystemExit(f"{files} files: the first cycle did not publish the role directory")

    def cycle(changed: frozenset[Path] | None) -> None:
        run_cycle(config, store_cfg, session=session, full_reconcile=False, changed=changed)

    def appended_cycle(changed: frozenset[Path] | None) -> float:
        append_once(daily, f"- [10:00] line {time.perf_counter_ns()}\n".encode())
        return timed(lambda: cycle(changed))

    with_paths = [appended_cycle(frozenset({daily})) for _ in range(repeats)]
    full = [appended_cycle(None) for _ in range(max(1, repeats // 3))]
    idle = [timed(lambda: cycle(frozenset())) for _ in range(repeats)]
    fetch = [timed(lambda: git(peer.store, "fetch", "-q", "origin")) for _ in range(repeats)]
    if daily.read_bytes() != (peer.store / ROLE_STORE / "daily" / f"{DAY}.md").read_bytes():
        raise SystemExit(f"{files} files: the appended lines did not all reach the store")
    return SizeFigures(
        files,
        statistics.median(with_paths),
        statistics.median(full),
        statistics.median(idle),
        statistics.median(fetch),
    )


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


def measure_idle(root: Path, settings: Settings) -> tuple[IdleResult, IdleResult]:
    """Rows 3 and 4: two daemons at once, one with a local-path remote, one with a ``git://`` remote;
    each one's own CPU over the same window, after its start-up cycle."""
    base = root / "served"
    base.mkdir()
    bare_remote(base / "remote.git")
    with git_daemon(base) as url:
        local = idle_peer(
            root, "local", bare_remote(root / "local.git"), settings, settings.local_pull_s, None
        )
        network = idle_peer(
            root, "network", base / "remote.git", settings, settings.network_pull_s, f"{url}/remote.git"
        )
        for peer in (local, network):
            peer.start(wait_ready=False)
        try:
            for peer in (local, network):
                peer.wait_ready(timeout=START_TIMEOUT_S)
            # Let the start-up cycles' follow-ups (a second exchange) pass.
            time.sleep(1.0 if settings.quick else 5.0)
            assert local.proc is not None and network.proc is not None
            pids = (local.proc.pid, network.proc.pid)
            results: dict[int, IdleResult] = {}

            def one(pid: int) -> None:
                results[pid] = idle_cost(pid, settings.window_s, settings.dirs)

            threads = [threading.Thread(target=one, args=(pid,)) for pid in pids]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            for peer in (local, network):
                if ROLE_STORE not in git(peer.store, "ls-files", "roles"):
                    raise SystemExit(f"{peer.name}: the daemon did not publish its role directories")
            return results[pids[0]], results[pids[1]]
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


def report_idle(local: IdleResult, network: IdleResult, settings: Settings) -> list[tuple[str, bool]]:
    """Print rows 3 and 4; return (target, passed) pairs."""
    checks: list[tuple[str, bool]] = []
    for row, result, pull, cpu_target in (
        ("(3) local-path remote", local, settings.local_pull_s, 0.05),
        ("(4) git:// remote on 127.0.0.1", network, settings.network_pull_s, 0.3),
    ):
        share = 100 * result.cpu_s / result.window_s
        children = 100 * result.children_cpu_s / result.window_s
        rss = result.rss_bytes / 2**20
        print(
            f"\n## {row}, pull interval {pull:g} s, {result.dirs} role directories, "
            f"{result.window_s:.0f} s window; {load()}"
        )
        print(
            f"daemon CPU {result.cpu_s:.2f} s = {share:.3f} % of one core; git children {children:.3f} %; "
            f"RSS {rss:.1f} MiB (peak {result.hwm_bytes / 2**20:.1f} MiB)"
        )
        checks.append((f"{row}: idle CPU {share:.3f} % < {cpu_target} %", share < cpu_target))
        if row.startswith("(3)"):
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
        figures = [measure_size(root, files, settings.repeats) for files in settings.sizes]
        checks = report_sizes(figures)
        checks += report_idle(*measure_idle(root, settings), settings)
        print("\n## targets")
        for text, ok in checks:
            print(f"  {verdict(ok)}  {text}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

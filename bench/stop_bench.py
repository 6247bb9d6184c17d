"""How long SIGTERM takes to stop the daemon (issue 12 #6: within 5 s whatever its store is doing), and how
long a remote that never answers holds `memsync sync` (issue 11: bounded by network_timeout_s).

Three stops of a real daemon, each timed from SIGTERM to exit: idle (the baseline), while its fetch hangs
on a remote that accepts and never answers (network_timeout_s = 300 s: before, the daemon waited for
the fetch), and after its store was deleted and made again under it. Then `memsync sync` with such a
remote and network_timeout_s = 5 s.

Run: ``.venv/bin/python bench/stop_bench.py [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hanging import HangingServer, hanging_server  # after sys.path: needs the repository root
from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import Peer


def _stop(peer: Peer) -> float:
    assert peer.proc is not None
    started = time.monotonic()
    peer.proc.send_signal(signal.SIGTERM)
    code = peer.proc.wait(60)
    assert code == 0, peer.log()
    return time.monotonic() - started


def _idle(root: Path, remote: Path, _server: HangingServer) -> float:
    peer = Peer.create(root, "idle", remote)
    peer.start()
    return _stop(peer)


def _hanging_fetch(root: Path, remote: Path, server: HangingServer) -> float:
    peer = Peer.create(root, "hanging", remote)
    peer.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=300.0)
    before = server.connections
    peer.start(wait_ready=False)
    wait_for(lambda: server.connections > before, timeout=60, what="the hanging fetch")
    return _stop(peer)


def _store_made_again(root: Path, remote: Path, _server: HangingServer) -> float:
    peer = Peer.create(root, "remade", remote)
    peer.log_path = root / "remade-daemon.log"
    peer.start()
    while peer.home.exists():  # the daemon may be writing there meanwhile
        shutil.rmtree(peer.home, ignore_errors=True)
    wait_for(lambda: "vanished" in peer.log(), timeout=60, what="the vanished store reported")
    Peer.create(root, "remade", remote)
    return _stop(peer)


def _sync_with_a_dead_remote(root: Path, remote: Path, server: HangingServer) -> float:
    peer = Peer.create(root, "syncing", remote)
    peer.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=5.0)
    started = time.monotonic()
    result = peer.cli("sync", timeout=120)
    assert result.returncode == 75, result.stderr
    return time.monotonic() - started


def main() -> int:
    """Time each case ``--rounds`` times; print the medians and the ratios to the idle stop."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of each case.")
    args = parser.parse_args()
    cases: dict[str, Callable[[Path, Path, HangingServer], float]] = {
        "SIGTERM, idle daemon (baseline)": _idle,
        "SIGTERM, fetch hanging on a dead remote": _hanging_fetch,
        "SIGTERM, store deleted and made again": _store_made_again,
        "memsync sync, a dead remote, network_timeout_s 5": _sync_with_a_dead_remote,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    with hanging_server() as server:
        for round_ in range(args.rounds):
            for name, case in cases.items():
                root = Path(tempfile.mkdtemp(prefix="memsync-stop-"))
                try:
                    times[name].append(case(root / f"r{round_}", bare_remote(root / "remote.git"), server))
                finally:
                    shutil.rmtree(root, ignore_errors=True)
    baseline = statistics.median(times["SIGTERM, idle daemon (baseline)"])
    for name, measured in times.items():
        median = statistics.median(measured)
        print(
            f"{name}: median {median:.2f} s, max {max(measured):.2f} s "
            f"over {len(measured)} rounds ({median / baseline:.1f}x the idle stop)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One daemon per store, whatever config names it; a `sync` that finds the store busy waits with a line
naming the holder; SIGTERM stops the daemon promptly whatever its store is doing; a store deleted (or
deleted and made again) under a daemon is reported (issue 12 #6, DESIGN I7). Real daemons, real CLI, a
real TCP server that never answers for a network that hangs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.support.hanging import HangingServer, hanging_server
from tests.support.helpers import git, wait_for
from tests.support.peers import MEMORY_STORE, Peer, running


def _daemon(peer: Peer, *args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon", "-v", *args],
            env={**os.environ, **peer.env},
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
        )


def _hanging(server: HangingServer, peer: Peer) -> None:
    wait_for(
        lambda: server.connections > 0, timeout=60, what=f"{peer.name}'s git to connect to the dead remote"
    )


def _gits_in(store: Path) -> list[psutil.Process]:
    """The git processes working in ``store`` (by their working directory)."""
    found = []
    for process in psutil.process_iter(["name", "cwd"]):
        if process.info["name"] == "git" and process.info["cwd"] == str(store.resolve()):
            found.append(process)
    return found


def _deleted(path: Path) -> bool:
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def _pushed(remote: Path) -> bytes:
    try:
        return git(remote, "show", f"main:{MEMORY_STORE}").encode()
    except subprocess.CalledProcessError:
        return b""


def test_a_second_daemon_on_the_same_store_through_another_config_says_who_holds_it(
    tmp_path: Path, remote: Path
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    other = alice.config.with_name("other.toml")
    shutil.copy(alice.config, other)
    with alice.running():
        assert alice.proc is not None
        second = alice.cli("daemon", "--config", str(other))
        assert second.returncode == 1, second.stderr
        assert f"PID {alice.proc.pid}, config {alice.config}" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr and len(second.stderr.strip().splitlines()) == 1
        line = alice.append_entry("the first daemon still syncs")
        wait_for(lambda: line in _pushed(remote), timeout=30, what="the line pushed by the first daemon")


@pytest.mark.slow
def test_sync_waits_for_the_daemons_cycle_with_a_line_naming_it(tmp_path: Path, remote: Path) -> None:
    """The daemon's cycle holds the store (its fetch hangs on a dead network): `memsync sync`, through
    another config naming the same store, says it waits for that daemon, then runs its own cycle once
    the daemon's ends."""
    alice = Peer.create(tmp_path, "alice", remote)
    other = alice.config.with_name("other.toml")
    shutil.copy(alice.config, other)
    with hanging_server() as server:
        alice.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=10.0)
        with running(alice, ready=False):
            _hanging(server, alice)
            assert alice.proc is not None
            line = alice.append_entry("synced by the one-off sync")
            said = alice.cli("sync", "--config", str(other), timeout=120)
        assert said.returncode == 0, said.stderr
        assert f"waiting for the memsync daemon (PID {alice.proc.pid}, config {alice.config})" in said.stderr
        assert line in _pushed(remote)


def test_sigterm_stops_a_daemon_whose_fetch_hangs_on_a_dead_network(tmp_path: Path, remote: Path) -> None:
    """The fetch would wait 300 s for its timeout: SIGTERM kills it and the daemon exits 0 at once; the
    next start recovers and syncs (what the kill cut is recovered as after kill -9)."""
    alice = Peer.create(tmp_path, "alice", remote)
    kept = alice.append_entry("written before the stop")
    with hanging_server() as server:
        alice.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=300.0)
        alice.start(wait_ready=False)
        _hanging(server, alice)
        assert _gits_in(alice.store)
        assert alice.proc is not None
        alice.proc.send_signal(signal.SIGTERM)
        assert alice.proc.wait(timeout=30) == 0, alice.log()
        assert "memsync daemon stopped" in alice.log()
        assert not _gits_in(alice.store)
    alice.configure({"origin": str(remote)})
    with alice.running():
        wait_for(lambda: kept in _pushed(remote), timeout=30, what="the line pushed after the restart")
    assert alice.store_git("status", "--porcelain") == ""


def test_a_store_deleted_and_made_again_under_the_daemon_is_reported_and_served_again(
    tmp_path: Path, remote: Path
) -> None:
    """The store (and the whole HOME holding config and state) is deleted and made again while the daemon
    runs: it says the store vanished, takes the new one once it is there, syncs it, and stops at once on
    SIGTERM."""
    alice = Peer.create(tmp_path, "alice", remote)
    log = tmp_path / "alice-daemon.log"
    daemon = _daemon(alice, log=log)
    wait_for(lambda: "start-up cycle done" in log.read_text(), timeout=60, what="the daemon's start")
    # The daemon may be writing in the store meanwhile (a cycle's status): delete until all is gone.
    wait_for(lambda: _deleted(alice.home), timeout=30, what="the HOME deleted")
    wait_for(lambda: "vanished while this daemon served it" in log.read_text(), timeout=60, what="the report")
    again = Peer.create(tmp_path, "alice", remote)
    wait_for(lambda: "a store is at" in log.read_text(), timeout=60, what="the store taken again")
    line = again.append_entry("written into the store made again")
    wait_for(lambda: line in _pushed(remote), timeout=60, what="the line pushed from the new store")
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0, log.read_text()

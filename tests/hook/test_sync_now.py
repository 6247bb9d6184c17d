"""`hook sync-now` (Stop, SessionEnd, PreCompact): a running daemon is asked to sync at once (SIGUSR1);
without one, a child the hook leaves running publishes and commits once. Real daemon, real git, the
installed command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memsync.hosts.hooks import hook_command
from memsync.store.access import cycle_lock
from tests.support.helpers import git, wait_for
from tests.support.peers import MEMORY_STORE, Peer


def sync_now(peer: Peer) -> subprocess.CompletedProcess[str]:
    """The installed Stop hook, run the way the host runs it (a shell, the hook input on stdin)."""
    done = subprocess.run(
        hook_command("sync-now", "claude-code"),
        shell=True,
        cwd=peer.home,
        input='{"hook_event_name": "Stop", "stop_hook_active": false}',
        capture_output=True,
        text=True,
        env={**os.environ, **peer.env},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # Codex reads a Stop hook's stdout as JSON: nothing is printed
    return done


def test_a_running_daemon_is_asked_to_sync_now(tmp_path: Path, remote: Path) -> None:
    # A long quiet period: without the request, the daemon would wait 60 s before committing.
    peer = Peer.create(tmp_path, "alice", remote, debounce_s=60.0, max_delay_s=120.0, pull_interval_s=60.0)
    with peer.running():
        offset = peer.log_path.stat().st_size
        line = peer.append_entry("Sync me when the turn ends.")
        sync_now(peer)
        wait_for(lambda: "cycle (sync requested" in peer.log(offset), timeout=60, what="the requested cycle")
        wait_for(lambda: line in git(remote, "show", f"main:{MEMORY_STORE}").encode(), timeout=60)


def test_without_a_daemon_the_hook_publishes_and_commits_once(tmp_path: Path, remote: Path) -> None:
    peer = Peer.create(tmp_path, "alice", remote)
    assert peer.cli("sync").returncode == 0
    before = peer.commits()
    pushed = git(remote, "rev-parse", "main").strip()
    line = peer.append_entry("Committed by the Stop hook.")
    config = peer.load_config()
    # Another cycle holds the store: the hook still returns at once (the host's turn goes on), and the
    # child it left commits once that cycle ends.
    with cycle_lock(next(iter(config.stores.values())), config=config.path):
        done = sync_now(peer)
        assert peer.commits() == before
    wait_for(lambda: peer.commits() == before + 1, timeout=60, what="the hook's commit")
    assert line in peer.read_store(MEMORY_STORE)
    assert git(remote, "rev-parse", "main").strip() == pushed  # no exchange: the daemon pushes later
    assert "Traceback" not in done.stderr


def test_without_a_config_the_hook_lets_the_host_go_on(home: Path) -> None:
    done = subprocess.run(
        hook_command("sync-now", "codex"), shell=True, input="", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "memsync init" in done.stderr

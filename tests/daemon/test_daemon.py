"""The daemon's process behaviour (signals, reload, systemd readiness, single instance) and the CLI
commands `sync`, `status`, `log`, `resync` against real stores and a real bare remote."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsync.store.storeid import STORE_ID_FILE
from tests.support.helpers import git, wait_for
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer, running


@pytest.fixture
def alice(tmp_path: Path, remote: Path) -> Iterator[Peer]:
    peer = Peer.create(tmp_path, "alice", remote)
    yield peer
    if not peer.proc_dead():
        peer.kill()


def remote_file(remote: Path, rel: str) -> bytes:
    result = subprocess.run(["git", "show", f"main:{rel}"], cwd=remote, capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else b""


def peer_push(tmp_path: Path, remote: Path, files: dict[str, bytes], message: str = "peer") -> Path:
    """Push ``files`` (store paths) to ``remote`` from a plain clone, as another peer would."""
    work = tmp_path / "other-peer"
    if not work.exists():
        git(tmp_path, "clone", "-q", str(remote), str(work))
    git(work, "pull", "-q", "--no-rebase")
    for rel, data in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(data)
    git(work, "add", "-A")
    git(work, "commit", "-qm", message)
    git(work, "push", "-q", "origin", "main")
    return work


@pytest.mark.slow
def test_sigterm_and_sigint_finish_and_exit_0(alice: Peer) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        offset = alice.start()
        assert alice.proc is not None
        line = alice.append_entry("written just before the signal")
        alice.proc.send_signal(signum)
        assert alice.proc.wait(30) == 0, alice.log(offset)
        assert "memsync daemon stopped" in alice.log(offset)
    alice.start()
    wait_for(lambda: line in alice.read_store(MEMORY_STORE), timeout=15)
    assert alice.stop() == 0


@pytest.mark.slow
def test_sighup_reloads_config_and_watches_new_tracks(tmp_path: Path, alice: Peer, remote: Path) -> None:
    extra = tmp_path / "alice" / "project" / ".agents" / "memory" / "dev"
    with running(alice):
        text = alice.config.read_text()
        text += f'\n[[stores.main.track]]\npath = "{extra}"\nas = "projects/p/dev"\n'
        alice.config.write_text(text)
        assert alice.proc is not None
        alice.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "config reloaded" in alice.log(), timeout=10)
        extra.mkdir(parents=True)
        (extra / "MEMORY.md").write_text("# dev\n")
        wait_for(lambda: remote_file(remote, "projects/p/dev/MEMORY.md") == b"# dev\n", timeout=15)
        alice.config.write_text("not = [valid toml")
        alice.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "config not reloaded" in alice.log(), timeout=10)
        alice.config.write_text(text)
        line = alice.append_entry("still running on the previous config")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)


@pytest.mark.slow
def test_notify_socket_gets_ready(tmp_path: Path, alice: Peer) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(30)
        alice.start(wait_ready=False, env={"NOTIFY_SOCKET": str(path)})
        assert sock.recv(100) == b"READY=1"
        alice.wait_ready()
        assert alice.stop() == 0
        assert sock.recv(100) == b"STOPPING=1"


def test_sync_exit_codes(tmp_path: Path, alice: Peer, remote: Path) -> None:
    alice.append_entry("to push")
    result = alice.main("sync")
    assert result.returncode == 0, result.stderr
    assert "committed memory: +1 entry" in result.stdout
    moved = remote.with_name("moved.git")
    remote.rename(moved)
    line = alice.append_entry("cannot be pushed now")
    result = alice.main("sync")
    assert result.returncode == 75, result.stderr
    assert line in alice.read_store(MEMORY_STORE)
    moved.rename(remote)
    assert alice.main("sync").returncode == 0
    assert line in remote_file(remote, MEMORY_STORE)
    alice.config.write_text(alice.config.read_text().replace(str(alice.store), str(tmp_path / "nowhere")))
    result = alice.main("sync")
    assert result.returncode == 1
    assert "memsync init" in result.stderr and "Traceback" not in result.stderr


def test_status_reports_everything(tmp_path: Path, alice: Peer, remote: Path) -> None:
    from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX

    assert alice.status()["stores"]["main"]["last_cycle"] is None
    alice.append_entry("a fine entry")
    secret = alice.append_entry(
        "deploy key AKIAIOSFODNN7EXAMPLE with aws_secret_access_key = "
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    )
    both = f"---\nname: x\n---\n{BOTH_KEPT_NOTE_PREFIX} at once; both versions are kept below.\n"
    peer_push(
        tmp_path,
        remote,
        {
            "roles/other-role/x.md": b"from a role not tracked here\n",
            f"{ROLE_STORE}/conflicted.md": both.encode(),
        },
    )
    alice.append_entry("unpushed").rstrip()
    assert alice.main("sync").returncode == 0
    status = alice.status()
    store = status["stores"]["main"]
    assert status["daemon"] == {"running": False, "pid": None}
    assert store["path"] == str(alice.store) and store["branch"] == "main"
    assert store["last_cycle"] and store["last_cycle_error"] is None
    origin = store["remotes"]["origin"]
    assert origin["url"] == str(remote) and origin["last_success"] and origin["last_error"] is None
    assert store["unpushed"] == 0
    assert store["held_back_secrets"] and all(
        h["file"] == str(alice.memory_file) for h in store["held_back_secrets"]
    )
    assert {h["line"] for h in store["held_back_secrets"]} == {3}
    assert secret not in remote_file(remote, MEMORY_STORE)
    assert store["both_kept"] == [str(alice.role_dir / "conflicted.md")]
    assert store["untracked"] == ["roles/other-role/"]
    assert store["size_bytes"] > 1000
    text = alice.main("status").stdout
    for needle in (
        "daemon: not running",
        "store main",
        "remote origin",
        "commits waiting to be pushed: 0",
        "held back (secret)",
        "both versions kept",
        "not tracked here: roles/other-role/",
    ):
        assert needle in text, text
    remote.rename(remote.with_name("gone.git"))
    alice.append_entry("stuck locally")
    assert alice.main("sync").returncode == 75
    store = alice.status()["stores"]["main"]
    assert store["unpushed"] == 1
    assert store["remotes"]["origin"]["last_error"] and store["remotes"]["origin"]["last_success"]


def test_log_shows_host_and_changes(tmp_path: Path, alice: Peer, remote: Path) -> None:
    line = alice.append_entry("remember the harbor")
    entry_id = json.loads(line)["id"]
    (alice.role_dir / "topic.md").write_text("a topic\n")
    assert alice.main("sync").returncode == 0
    out = alice.main("log").stdout
    assert "alice" in out and "memory: +1 entry" in out and f"{ROLE_STORE}/topic.md" in out
    by_path = alice.main("log", str(alice.role_dir / "topic.md")).stdout
    assert "topic.md" in by_path and MEMORY_STORE not in by_path
    by_id = alice.main("log", entry_id).stdout
    assert "+1 entry" in by_id and f"    {MEMORY_STORE}" in by_id
    assert f"    {ROLE_STORE}/topic.md" not in by_id
    assert "added: remember the harbor" in by_id
    newer = alice.append_entry("remember the harbor and its user agent", supersedes=entry_id)
    alice.append_entry("", deleted=True, id=entry_id)
    assert alice.main("sync").returncode == 0
    by_id = alice.main("log", entry_id).stdout
    assert f"superseded by {json.loads(newer)['id']}: remember the harbor and its user agent" in by_id
    assert "deleted (tombstone)" in by_id


def test_resync_adopts_a_rewritten_remote_history(tmp_path: Path, alice: Peer, remote: Path) -> None:
    kept = alice.append_entry("alice's memory survives the rewrite")
    assert alice.main("sync").returncode == 0
    # Someone rewrites the remote's history: a fresh root commit of the same store (its id kept),
    # force-pushed.
    work = tmp_path / "rewriter"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / ".memsync").mkdir()
    (work / ".memsync" / "format").write_text("1\n")
    (work / STORE_ID_FILE).write_bytes(alice.read_store(STORE_ID_FILE))
    (work / "roles" / "qa").mkdir(parents=True)
    (work / "roles" / "qa" / "from-rewrite.md").write_text("new history\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "rewritten")
    git(work, "push", "-q", "--force", str(remote), "main")
    assert alice.main("sync").returncode == 75
    status = alice.status()["stores"]["main"]["remotes"]["origin"]
    assert status["status"] == "diverged" and "resync" in status["last_error"]
    result = alice.main("resync", "origin")
    assert result.returncode == 0, result.stderr
    assert "adopted origin" in result.stdout
    assert kept in remote_file(remote, MEMORY_STORE)
    assert remote_file(remote, "roles/qa/from-rewrite.md") == b"new history\n"
    assert (alice.role_dir / "from-rewrite.md").read_bytes() == b"new history\n"
    assert alice.read_live(MEMORY_FILE).count(kept) == 1
    assert alice.main("resync", "nosuch").returncode == 1


def test_daemon_once_runs_one_cycle(alice: Peer, remote: Path) -> None:
    line = alice.append_entry("once")
    result = alice.cli("daemon", "--once")
    assert result.returncode == 0, result.stderr
    assert line in remote_file(remote, MEMORY_STORE)


def test_missing_config_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "MEMSYNC_CONFIG": str(tmp_path / "none.toml")}
    for args in (["sync"], ["daemon"]):
        result = subprocess.run(
            [sys.executable, "-m", "memsync", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 1 and "memsync init" in result.stderr, result.stderr


@pytest.mark.slow
def test_a_failing_cycle_is_retried_with_backoff_and_never_kills_the_daemon(
    alice: Peer, remote: Path
) -> None:
    with running(alice):
        moved = alice.store.with_name("store-away")
        alice.store.rename(moved)
        alice.append_entry("while the store is gone")
        wait_for(lambda: "sync cycle failed" in alice.log(), timeout=15)
        wait_for(lambda: len(re.findall(r"cycle \(retry", alice.log())) >= 2, timeout=15)
        assert not alice.proc_dead()
        assert alice.status()["stores"]["main"]["last_cycle_error"] is None  # the status file went too
        moved.rename(alice.store)
        line = alice.append_entry("store is back")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=20)
        wait_for(lambda: "sync works again" in alice.log(), timeout=10)
    log = alice.log()
    assert log.count("sync cycle failed:") == 1
    delays = [float(x) for x in re.findall(r"next retry in ([0-9.]+) s", log)]
    assert delays == [2.0**i for i in range(len(delays))], delays
    assert "local only" not in log


# The daemon's own handler of SIGUSR1 (a hook's "sync now") run while the main thread is inside the
# code of the loop's event queue, at each line of it (where the handler of a signal that arrives then
# runs), as the loop reads it: 100 signals, each one's wake-up read back.
_SIGNALS_DURING_GETS = """
import os, queue, signal, sys, threading
from pathlib import Path
from memsync.daemon.loop import Daemon

daemon = Daemon(Path(sys.argv[1]))
signal.signal(signal.SIGUSR1, daemon._on_signal)
QUEUE_CODE = {queue.__file__, threading.__file__}

def signal_inside_the_queue(frame, event, arg):
    if event == "line" and frame.f_code.co_filename in QUEUE_CODE:
        os.kill(os.getpid(), signal.SIGUSR1)
    return signal_inside_the_queue

taken = 0
sys.settrace(signal_inside_the_queue)
for _ in range(100):
    os.kill(os.getpid(), signal.SIGUSR1)
    daemon.events.get(timeout=5)
    taken += 1
sys.settrace(None)
print(taken)
"""


def test_a_signal_that_interrupts_the_loop_reading_its_events_cannot_deadlock_it(home: Path) -> None:
    """A handler that put its wake-up on a queue whose lock the interrupted get held hung the main
    thread for ever; a SIGTERM then only ended at the stop deadline (the daemon's last resort)."""
    config = home / "config.toml"
    config.write_text('host = "alice"\n')
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SIGNALS_DURING_GETS, str(config)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the signal handler deadlocked the thread reading the daemon's event queue")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == 100  # every handler's wake-up reached the reader

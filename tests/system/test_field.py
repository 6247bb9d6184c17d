"""Field cases 1-12 of issue 4: problems reported against other git auto-sync tools, each replayed against
a real `memsync daemon` subprocess with a real bare remote (field case 12 at daemon level; the watcher
level is in test_watch.py)."""

from __future__ import annotations

import http.server
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support.helpers import git, wait_for
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer, running

pytestmark = pytest.mark.slow


def make_peer(tmp_path: Path, remote: Path, peers: list[Peer], name: str = "alice", **kw: float) -> Peer:
    peer = Peer.create(tmp_path, name, remote, **kw)  # type: ignore[arg-type]
    peers.append(peer)
    return peer


def remote_file(remote: Path, rel: str) -> bytes:
    """``rel`` on the remote's main branch (b"" when absent)."""
    result = subprocess.run(["git", "show", f"main:{rel}"], cwd=remote, capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else b""


def commits_touching(peer: Peer, rel: str) -> list[str]:
    return peer.store_git("log", "--format=%H", "--", rel).split()


def cycles(peer: Peer, offset: int = 0) -> list[str]:
    """The reasons of the cycles the daemon ran since log ``offset``."""
    return re.findall(r"cycle \(([^)]*)\)", peer.log(offset))


def every_store_path(peer: Peer) -> set[str]:
    return {p for p in peer.store_git("log", "--all", "--format=", "--name-only").split("\n") if p}


# 1 ---------------------------------------------------------------------------------------------------
def test_1_vim_save_is_one_change_and_no_editor_file_enters_the_store(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    if shutil.which("vim") is None:
        pytest.skip("vim is not installed")
    alice = make_peer(tmp_path, remote, peers)
    target = alice.role_dir / "x.md"
    rel = f"{ROLE_STORE}/x.md"
    with running(alice):
        target.write_text("---\nname: x\n---\nv1\n")
        wait_for(lambda: b"v1" in remote_file(remote, rel), timeout=15)
        before = len(commits_touching(alice, rel))
        # Real vim (swap file .x.md.swp, then a write of x.md).
        subprocess.run(
            [
                "vim",
                "-u",
                "NONE",
                "-i",
                "NONE",
                "-N",
                "-X",
                "--not-a-term",
                "-c",
                "set backup writebackup backupcopy=auto",
                "-c",
                "%s/v1/v2/",
                "-c",
                "wq",
                str(target),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            timeout=30,
        )
        wait_for(lambda: b"v2" in remote_file(remote, rel), timeout=15)
        # vim's classic save with 'backupcopy=no': probe file 4913, rename to the backup x.md~, write anew.
        role = alice.role_dir
        (role / ".x.md.swp").write_bytes(b"swap")
        (role / "4913").write_bytes(b"")
        (role / "4913").unlink()
        os.rename(target, role / "x.md~")
        target.write_text("---\nname: x\n---\nv3\n")
        (role / "x.md~").unlink()
        (role / ".x.md.swp").unlink()
        wait_for(lambda: b"v3" in remote_file(remote, rel), timeout=15)
        line = alice.append_entry("a later, unrelated change")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
    assert len(commits_touching(alice, rel)) == before + 2
    names = {Path(p).name for p in every_store_path(alice)}
    assert not names & {".x.md.swp", "x.md~", "4913", ".x.md.swx"}


# 2 ---------------------------------------------------------------------------------------------------
def test_2_two_atomic_replaces_are_two_changes(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    alice = make_peer(tmp_path, remote, peers)
    target = alice.role_dir / "notes.md"
    rel = f"{ROLE_STORE}/notes.md"
    with running(alice):
        for version in ("first", "second"):
            temp = alice.role_dir / f".notes.{version}.partial"
            temp.write_text(f"{version} version\n")
            os.replace(temp, target)
            wait_for(
                lambda version=version: remote_file(remote, rel) == f"{version} version\n".encode(),
                timeout=15,
            )
        # the tracked memory file too: replaced wholesale twice, then appended to (watch survived)
        for i in range(2):
            data = alice.memory_file.read_bytes() + alice.append_entry(f"via replace {i}")
            temp = alice.memory_file.with_name("memory.jsonl.new")
            temp.write_bytes(data)
            os.replace(temp, alice.memory_file)
        line = alice.append_entry("plain append after the replaces")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
    assert len(commits_touching(alice, rel)) == 2


# 3 ---------------------------------------------------------------------------------------------------
def test_3_git_writes_in_the_store_never_reset_the_timer(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    alice = make_peer(tmp_path, remote, peers, debounce_s=1.0, max_delay_s=10.0, pull_interval_s=600.0)
    with running(alice):
        offset = alice.log_path.stat().st_size

        def git_writes() -> None:
            # git writes in the store's .git long past the quiet period, as the daemon's own would
            for i in range(30):
                git(alice.store, "update-ref", f"refs/test/{i}", "HEAD")
                (alice.store / ".git" / "memsync" / f"scratch-{i}").write_text("x")
                time.sleep(0.2)  # pacing the writes over 6 s, not waiting for a result

        line = alice.append_entry("one change")
        writer = threading.Thread(target=git_writes)
        writer.start()
        # A timer reset by each write would start the cycle only once the writes stop: it must start while
        # they go on (the order of two events, not a bound on how long the cycle took to start).
        wait_for(lambda: "cycle (" in alice.log(offset), timeout=60, interval=0.01)
        started_while_writing = writer.is_alive()
        writer.join()
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
        line2 = alice.append_entry("second change")
        wait_for(lambda: line2 in remote_file(remote, MEMORY_STORE), timeout=15)
    assert started_while_writing, "the cycle waited for the git writes to stop: they reset the timer"
    assert cycles(alice, offset) == ["local changes", "local changes"]


# 4 ---------------------------------------------------------------------------------------------------
def test_4_appends_during_a_slow_push_are_published_promptly(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    hook = remote / "hooks" / "pre-receive"
    alice = make_peer(tmp_path, remote, peers, pull_interval_s=600.0)
    hook.write_text("#!/bin/sh\nsleep 1.5\n")
    hook.chmod(0o755)
    with running(alice):
        offset = alice.log_path.stat().st_size
        (alice.role_dir / "scratch.tmp").write_text("ignored")
        line1 = alice.append_entry("same instant as an ignored file")
        wait_for(lambda: "cycle (local changes" in alice.log(offset), timeout=10, interval=0.01)
        line2 = alice.append_entry("while the slow push runs")
        # Without a cycle of its own the second line would wait for the pull timer (600 s): a wait far
        # shorter than that, however loaded the machine, tells the two apart.
        wait_for(lambda: line1 in remote_file(remote, MEMORY_STORE), timeout=90)
        wait_for(lambda: line2 in remote_file(remote, MEMORY_STORE), timeout=90)
    assert "scratch.tmp" not in {Path(p).name for p in every_store_path(alice)}


# 5 ---------------------------------------------------------------------------------------------------
def test_5_a_steady_stream_still_commits_every_max_delay(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    """Scaled down from 30 s / max_delay 5 s to 10 s / max_delay 3 s to keep the suite short."""
    max_delay = 3.0
    alice = make_peer(tmp_path, remote, peers, debounce_s=1.0, max_delay_s=max_delay, pull_interval_s=600.0)
    with running(alice):
        start = int(time.time())
        written: list[bytes] = []
        next_at = time.monotonic()
        while time.monotonic() - next_at < 10.0 and len(written) < 50:
            written.append(alice.append_entry(f"stream {len(written)}"))
            time.sleep(0.2)  # the stream's own pace: one append every 200 ms
        end = int(time.time())
        wait_for(lambda: all(line in remote_file(remote, MEMORY_STORE) for line in written), timeout=15)
    times = sorted(int(t) for t in alice.store_git("log", "--format=%ct", f"--since={start}").split())
    during = [t for t in times if t <= end]
    # A debounce that each append restarted would commit nothing until the stream ends; max_delay_s makes
    # it commit during the stream, more than once (counted, not timed: gaps vary with the machine's load).
    assert len(during) >= 2, f"commits during the stream: {during}"


# 6 ---------------------------------------------------------------------------------------------------
def test_6_stale_index_lock_at_start_and_mid_run(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    alice = make_peer(tmp_path, remote, peers, pull_interval_s=600.0)
    lock = alice.store / ".git" / "index.lock"
    lock.write_text("")
    with running(alice):
        line = alice.append_entry("after a stale lock at start")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
        lock.write_text("")
        line = alice.append_entry("after a stale lock mid-run")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
    log = alice.log()
    assert log.count("removed stale .git/index.lock") == 2
    assert len(cycles(alice)) <= 4, cycles(alice)
    assert "failed" not in log


# 7 ---------------------------------------------------------------------------------------------------
def test_7_timer_events_and_cli_sync_at_once_are_serialised(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    alice = make_peer(tmp_path, remote, peers, debounce_s=0.1, max_delay_s=0.3, pull_interval_s=0.3)
    with running(alice):
        written = []
        results: list[subprocess.CompletedProcess[str]] = []

        def cli_sync() -> None:
            results.append(alice.cli("sync"))

        threads = [threading.Thread(target=cli_sync) for _ in range(2)]
        for thread in threads:
            thread.start()
        for i in range(20):
            written.append(alice.append_entry(f"concurrent {i}"))
        for thread in threads:
            thread.join()
        wait_for(lambda: all(line in remote_file(remote, MEMORY_STORE) for line in written), timeout=20)
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    for text in [alice.log(), *(r.stderr for r in results)]:
        assert "index.lock" not in text and "Traceback" not in text


# 8 ---------------------------------------------------------------------------------------------------
def test_8_local_work_is_committed_before_the_merge(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    alice = make_peer(tmp_path, remote, peers)
    bob = make_peer(tmp_path, remote, peers, name="bob")
    before = alice.store_git("rev-parse", "HEAD").strip()
    with running(bob):
        theirs = bob.append_entry("bob's line while alice's daemon is stopped")
        wait_for(lambda: theirs in remote_file(remote, MEMORY_STORE), timeout=15)
    ours = alice.append_entry("alice's line while her daemon is stopped")
    with running(alice):
        wait_for(lambda: theirs in alice.read_live(MEMORY_FILE), timeout=15)
    with running(bob):
        wait_for(lambda: ours in bob.read_live(MEMORY_FILE), timeout=15)
    for peer in (alice, bob):
        assert ours in peer.read_live(MEMORY_FILE) and theirs in peer.read_live(MEMORY_FILE)
    # Her commit was then replayed onto bob's (the branch stays a line): HEAD's reflog keeps the first.
    first = [
        sha
        for sha, *parents in (
            line.split() for line in alice.store_git("log", "-g", "--format=%H %P", "HEAD").splitlines()
        )
        if parents == [before]
    ]
    assert any(ours.decode() in alice.store_git("show", f"{sha}:{MEMORY_STORE}") for sha in first), (
        "alice's line was not committed on top of her own history first"
    )


# 9 ---------------------------------------------------------------------------------------------------
def test_9_offline_remote_backs_off_quietly_and_pushes_once_when_back(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    link = tmp_path / "remote-link.git"
    link.symlink_to(remote)
    git(remote, "config", "core.logAllRefUpdates", "always")
    alice = make_peer(tmp_path, link, peers, pull_interval_s=1.0)
    with running(alice):
        pushes_before = len(git(remote, "reflog", "show", "main").splitlines())
        link.unlink()
        commits = alice.commits()
        written = []
        for i in range(100):
            written.append(alice.append_entry(f"offline line {i}"))
            if i % 25 == 24:
                wait_for(lambda: all(line in alice.read_store(MEMORY_STORE) for line in written), timeout=15)
        wait_for(lambda: alice.commits() >= commits + 2, timeout=15)
        wait_for(
            lambda: len(re.findall(r"remote origin still unreachable", alice.log())) >= 3,
            timeout=20,
            what="several backoff periods (the remote asked whether it answers)",
        )
        link.symlink_to(remote)
        wait_for(lambda: all(line in remote_file(remote, MEMORY_STORE) for line in written), timeout=20)
        wait_for(lambda: "reachable again" in alice.log(), timeout=10)
    log = alice.log()
    assert log.count("remote origin failed") == 1, "the outage was logged more than once"
    assert log.count("origin offline") == 1, "the store's offline warning repeated on every retry"
    assert len(git(remote, "reflog", "show", "main").splitlines()) == pushes_before + 1
    retries = [float(x) for x in re.findall(r"next retry in ([0-9.]+) s", log)]
    assert retries[:3] == sorted(retries[:3]) and retries[2] > retries[0], retries


# 10 --------------------------------------------------------------------------------------------------
class _AuthRequired(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def test_10_remote_wanting_credentials_fails_fast_without_a_terminal(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        alice = make_peer(tmp_path, remote, peers)
        url = f"http://127.0.0.1:{server.server_address[1]}/team/memory.git"
        text = alice.config.read_text().replace(f'origin = "{remote}"', f'origin = "{remote}"\nweb = "{url}"')
        alice.config.write_text(text)
        alice.env.pop("GIT_TERMINAL_PROMPT", None)
        alice.append_entry("needs pushing")
        started = time.monotonic()
        result = subprocess.run(
            [*_python_memsync(), "sync"],
            env={k: v for k, v in {**os.environ, **alice.env}.items() if k != "GIT_TERMINAL_PROMPT"},
            capture_output=True,
            text=True,
            timeout=60,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        took = time.monotonic() - started
        assert result.returncode == 75, result.stderr
        assert took < 15, f"took {took:.1f} s"
        web = alice.status()["stores"]["main"]["remotes"]["web"]
        assert web["last_error"] and "web" in web["last_error"]
        assert alice.status()["stores"]["main"]["remotes"]["origin"]["last_success"]
        with running(alice):
            line = alice.append_entry("daemon stays up")
            wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
            assert not alice.proc_dead()
        text = subprocess.run(
            [*_python_memsync(), "status"],
            env={**os.environ, **alice.env},
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        assert "remote web" in text and "last error" in text
    finally:
        server.shutdown()


def _python_memsync() -> list[str]:
    import sys

    return [sys.executable, "-m", "memsync"]


# 11 --------------------------------------------------------------------------------------------------
def test_11_gpgsign_in_user_config_without_gpg(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    alice = make_peer(tmp_path, remote, peers)
    gitconfig = alice.home / ".gitconfig"
    gitconfig.write_text(
        gitconfig.read_text() + "[commit]\n\tgpgsign = true\n[tag]\n\tgpgsign = true\n"
        "[gpg]\n\tprogram = /nonexistent/gpg\n"
    )
    with running(alice):
        line = alice.append_entry("signed? no: memsync sets its own commit config")
        wait_for(lambda: line in remote_file(remote, MEMORY_STORE), timeout=15)
        assert not alice.proc_dead()


# 12 --------------------------------------------------------------------------------------------------
def test_12_daemon_with_too_few_inotify_watches_polls_and_warns(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to lower the inotify limit in a private user namespace")
    probe = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", "echo 2 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot lower the inotify watch limit in a user namespace: {probe.stderr.decode()}")
    alice = make_peer(tmp_path, remote, peers, pull_interval_s=600.0)
    (alice.role_dir / "daily").mkdir()
    import sys

    log = alice.log_path.open("ab")
    alice.proc = subprocess.Popen(
        [
            "unshare",
            "-Ur",
            "sh",
            "-c",
            'echo 2 > /proc/sys/user/max_inotify_watches && exec "$@"',
            "sh",
            sys.executable,
            "-m",
            "memsync",
            "daemon",
            "-v",
        ],
        env={**os.environ, **alice.env},
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    alice.wait_ready()
    try:
        line = alice.append_daily("- [10:00] seen by polling\n")
        wait_for(lambda: line in remote_file(remote, f"{ROLE_STORE}/daily/2026-11-30.md"), timeout=15)
    finally:
        assert alice.stop() == 0
    assert alice.log().count("inotify refused a watch") == 1
    assert "max_user_watches" in alice.log()

"""memsync.daemon.watch with a real watchdog observer and real inotify: what counts as a change, what is
ignored,
missing paths, remote refs, the watch-limit fallback, and the debouncer's arithmetic."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsync.daemon.debounce import Debouncer, PushDebouncer
from memsync.daemon.watch import Watcher, WatchEvent, remote_git_dir
from tests.support.helpers import REPO_ROOT, git

QUIET_S = 0.3  # how long "no event" is observed for; inotify delivers within milliseconds here


class Events:
    """Collects a Watcher's events and answers questions about them."""

    def __init__(self) -> None:
        self.queue: queue.Queue[WatchEvent] = queue.Queue()

    def take(self, wait: float = QUIET_S) -> list[WatchEvent]:
        """Everything that arrives within ``wait`` seconds of the last event."""
        found: list[WatchEvent] = []
        try:
            while True:
                found.append(self.queue.get(timeout=wait))
        except queue.Empty:
            return found

    def wait_path(self, path: Path, timeout: float = 5.0) -> list[WatchEvent]:
        """Events until one names ``path``; AssertionError if none does within ``timeout`` seconds."""
        seen: list[WatchEvent] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                event = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            seen.append(event)
            if Path(event.path) == path:
                return seen
        raise AssertionError(f"no event for {path}; saw {seen}")


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def watcher(events: Events) -> Iterator[Watcher]:
    with Watcher(events.queue.put) as w:
        yield w


def test_role_dir_files_are_seen_recursively(tmp_path: Path, watcher: Watcher, events: Events) -> None:
    role = tmp_path / "role"
    (role / "daily").mkdir(parents=True)
    watcher.set_targets([role], [])
    log = role / "daily" / "2026-11-30.md"
    log.write_text("- [10:00] hello\n")
    assert {e.source for e in events.wait_path(log)} == {"local"}


def test_editor_files_snapshot_and_git_are_ignored(tmp_path: Path, watcher: Watcher, events: Events) -> None:
    role = tmp_path / "role"
    role.mkdir()
    watcher.set_targets([role], [])
    for name in (".x.md.swp", "x.md~", "4913", "snapshot.md", ".#x.md", "x.md.tmp", ".memsync-tmp-abc"):
        (role / name).write_text("noise")
    (role / ".git").mkdir()
    watcher.refresh()
    (role / ".git" / "index").write_text("noise")
    assert events.take() == []
    (role / "x.md").write_text("real")
    assert Path(events.take()[-1].path) == role / "x.md"


def test_vim_style_save_is_one_change_of_the_target(tmp_path: Path, watcher: Watcher, events: Events) -> None:
    role = tmp_path / "role"
    role.mkdir()
    target = role / "x.md"
    target.write_text("v1\n")
    watcher.set_targets([role], [])
    # vim with 'backupcopy=no': probe file, swap file, rename the original to the backup, write anew.
    (role / "4913").write_text("")
    (role / "4913").unlink()
    (role / ".x.md.swp").write_text("swap")
    os.rename(target, role / "x.md~")
    target.write_text("v2\n")
    (role / "x.md~").unlink()
    (role / ".x.md.swp").unlink()
    seen = events.take()
    assert seen, "the save was not noticed"
    assert {Path(e.path) for e in seen} == {target}


@pytest.mark.parametrize("tracked", ["role", "file"])
def test_atomic_replace_twice_counts_twice_and_the_watch_survives(
    tmp_path: Path, watcher: Watcher, events: Events, tracked: str
) -> None:
    role = tmp_path / "role"
    role.mkdir()
    target = role / "memory.jsonl"
    target.write_text("{}\n")
    watcher.set_targets([role if tracked == "role" else target], [])
    for version in (1, 2):
        temp = role / f"save-{version}.partial"
        temp.write_text(f'{{"v": {version}}}\n')
        os.replace(temp, target)
        assert Path(events.wait_path(target)[-1].path) == target
        events.take()
    with target.open("a") as out:
        out.write('{"v": 3}\n')
    events.wait_path(target)


def test_missing_tracked_paths_are_picked_up_when_created(
    tmp_path: Path, watcher: Watcher, events: Events
) -> None:
    role = tmp_path / "projects" / "p" / ".agents" / "memory" / "dev"
    memory = tmp_path / "later" / "memory.jsonl"
    watcher.set_targets([role, memory], [])
    (tmp_path / "unrelated.txt").write_text("x")
    assert events.take() == []
    role.mkdir(parents=True)
    events.wait_path(tmp_path / "projects")
    watcher.refresh()
    (role / "daily").mkdir()
    watcher.refresh()
    (role / "daily" / "2026-11-30.md").write_text("- first\n")
    events.wait_path(role / "daily" / "2026-11-30.md")
    memory.parent.mkdir()
    watcher.refresh()
    memory.write_text("{}\n")
    events.wait_path(memory)
    assert role in watcher.watched_dirs and role / "daily" in watcher.watched_dirs


def test_a_recreated_directory_is_watched_again(tmp_path: Path, watcher: Watcher, events: Events) -> None:
    role = tmp_path / "role"
    (role / "daily").mkdir(parents=True)
    watcher.set_targets([role], [])
    shutil.rmtree(role / "daily")
    events.take()
    (role / "daily").mkdir()
    events.take()
    watcher.refresh()
    (role / "daily" / "d.md").write_text("x\n")
    events.wait_path(role / "daily" / "d.md")


def test_a_push_to_a_local_path_remote_is_a_remote_event(
    tmp_path: Path, watcher: Watcher, events: Events
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(remote))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    (work / "f").write_text("x")
    git(work, "add", "f")
    git(work, "commit", "-qm", "one")
    watcher.set_targets([], [remote])
    git(work, "push", "-q", "origin", "main")
    seen = events.take()
    assert seen and {e.source for e in seen} == {"remote"}
    git(remote, "pack-refs", "--all")
    assert {e.source for e in events.take()} == {"remote"}


def test_a_remote_that_appears_later_is_watched(tmp_path: Path, watcher: Watcher, events: Events) -> None:
    remote = tmp_path / "away" / "remote.git"
    git_dir = remote_git_dir(f"file://{remote}", tmp_path / "store")
    assert git_dir == remote
    watcher.set_targets([], [git_dir])
    git(tmp_path, "init", "--bare", "-q", "-b", "main", str(remote))
    assert any(e.source == "remote" for e in events.take())
    watcher.refresh()
    (remote / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    assert any(e.source == "remote" for e in events.take())


def test_remote_git_dir_of_urls(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert remote_git_dir("https://example.invalid/x.git", store) is None
    assert remote_git_dir("git@example.invalid:x.git", store) is None
    assert remote_git_dir("../peer.git", store) == tmp_path / "peer.git"
    (tmp_path / "work" / ".git").mkdir(parents=True)
    assert remote_git_dir(str(tmp_path / "work"), store) == tmp_path / "work" / ".git"


def test_watch_limit_falls_back_to_polling_with_a_warning(tmp_path: Path) -> None:
    """Field case 12: inside a user namespace whose inotify watch limit is 3, six role directories."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to lower the inotify limit in a private user namespace")
    probe = subprocess.run(
        ["unshare", "-Ur", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot lower the inotify watch limit in a user namespace: {probe.stderr.decode()}")
    script = """
import logging, queue, sys, time
from pathlib import Path
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
from memsync.daemon.watch import Watcher
roles = [Path(p) for p in sys.argv[1:]]
q = queue.Queue()
with Watcher(q.put) as w:
    w.set_targets(roles, [])
    print("polled", len(w.polled_dirs), "of", len(w.watched_dirs), flush=True)
    (roles[-1] / "daily" / "d.md").write_text("x\\n")
    event = q.get(timeout=10)
    print("event", event.path, flush=True)
"""
    roles = []
    for i in range(6):
        (tmp_path / f"r{i}" / "daily").mkdir(parents=True)
        roles.append(str(tmp_path / f"r{i}"))
    result = subprocess.run(
        [
            "unshare",
            "-Ur",
            "sh",
            "-c",
            'echo 3 > /proc/sys/user/max_inotify_watches && exec "$0" -c "$@"',
            sys.executable,
            script,
            *roles,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    polled, total = (int(x) for x in result.stdout.split()[1:4:2])
    assert polled >= total - 3 and polled > 0
    assert f"event {roles[-1]}/daily/d.md" in result.stdout
    assert "inotify refused a watch" in result.stderr and "max_user_watches" in result.stderr
    assert result.stderr.count("inotify refused") == 1


def test_debouncer_waits_for_quiet_but_not_longer_than_max_delay() -> None:
    d = Debouncer(debounce_s=1.0, max_delay_s=5.0)
    assert not d.pending and d.deadline() is None and not d.due(100.0)
    d.poke(10.0)
    assert d.deadline() == 11.0 and not d.due(10.9) and d.due(11.0)
    for t in (10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5):
        d.poke(t)
        assert not d.due(t)
    assert d.deadline() == 15.0
    d.take()
    assert not d.pending
    d.poke(16.0)
    assert d.deadline() == 17.0


def test_debouncer_out_of_order_times_and_max_below_debounce() -> None:
    d = Debouncer(debounce_s=2.0, max_delay_s=1.0)
    d.poke(5.0)
    d.poke(4.0)
    assert d.deadline() == 7.0


def test_push_debouncer_fetches_a_lone_push_soon_and_a_burst_once_it_pauses() -> None:
    d = PushDebouncer(quiet_s=0.5, longest_quiet_s=1.5, burst_s=3.0, max_delay_s=5.0)
    d.poke(10.0)
    d.poke(10.01)  # the events of one push
    assert d.deadline() == pytest.approx(10.51)
    d.take()
    # Pushes 0.7 s apart (a team under load): the quiet period grows past their gap.
    for t in (11.0, 11.7, 12.4, 13.1):
        d.poke(t)
        assert not d.due(t + 0.6)
    assert 13.1 + 1.4 <= (d.deadline() or 0.0) <= 13.1 + 1.5
    d.take()
    # The burst goes on: the wait is bounded, counted from the end of the cycle that just ran.
    for t in (13.8, 14.5, 15.2, 15.9):
        d.poke(t)
    d.restart(15.0)
    assert 15.9 + 1.4 <= (d.deadline() or 0.0) <= 15.9 + 1.5
    d.take()
    for n in range(20):
        d.poke(20.0 + 0.7 * n)
    assert d.deadline() == pytest.approx(20.0 + 5.0)
    d.take()
    # Slow pushes: never a quiet period longer than longest_quiet_s; after a long pause, a lone push.
    d.poke(40.0)
    d.poke(42.5)
    assert d.deadline() == pytest.approx(42.5 + 1.5)
    d.take()
    d.poke(50.0)
    assert d.deadline() == 50.5


def test_debouncer_restart_counts_the_max_delay_from_the_end_of_a_cycle() -> None:
    d = Debouncer(debounce_s=1.0, max_delay_s=2.0)
    d.restart(5.0)
    assert not d.pending
    for t in (1.0, 1.5, 2.0, 2.5):
        d.poke(t)
    d.restart(4.0)
    assert d.deadline() == 3.5  # quiet already: due at once
    d.poke(4.5)
    assert d.deadline() == 5.5

"""track / untrack / store add / remote add|remove: config edits that keep the user's settings (issue 5)."""

from __future__ import annotations

import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memsync.base.paths import config_path
from memsync.commands import doctor, setup, setup_remote, setup_track
from memsync.commands.sync import run_all_from
from memsync.errors import MemsyncError
from memsync.projects.identity import local_key
from memsync.tracks.resolve import load_tracks
from tests.conftest import isolated_env
from tests.support.helpers import cli_main, git, run_cli, wait_for

USER_CONFIG = """\
# my memsync settings
host = "work-laptop"
debounce_s = 2.5  # slower, please

[author]
name = "Ada"
email = "ada@example.org"

[stores.personal]
branch = "main"

[[stores.personal.track]]
path = "~/.agents/memory/scout"
"""


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def _write_user_config(home: Path) -> Path:
    path = _config(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_CONFIG)
    return path


def test_track_and_untrack_keep_unrelated_keys_and_comments(home: Path) -> None:
    path = _write_user_config(home)

    tracked = cli_main("track", str(home / ".agent-memory" / "lessons.jsonl"))

    assert tracked.returncode == 0, tracked.stderr
    assert "as memory/lessons.jsonl" in tracked.stdout
    assert "does not exist yet" in tracked.stdout
    assert path.read_text().startswith(USER_CONFIG)  # comments and layout kept: no backup needed
    assert not path.with_name("config.toml.bak").exists()
    raw = tomllib.loads(path.read_text())
    assert raw["host"] == "work-laptop" and raw["debounce_s"] == 2.5
    assert raw["author"] == {"name": "Ada", "email": "ada@example.org"}
    assert [t["path"] for t in raw["stores"]["personal"]["track"]] == [
        "~/.agents/memory/scout",
        "~/.agent-memory/lessons.jsonl",
    ]

    untracked = setup_track.untrack(home / ".agents" / "memory" / "scout")

    assert untracked.changed and "stays in store personal" in untracked.lines[-2]
    raw_after = tomllib.loads(path.read_text())
    assert [t["path"] for t in raw_after["stores"]["personal"]["track"]] == ["~/.agent-memory/lessons.jsonl"]
    unrelated = {k: v for k, v in raw.items() if k != "stores"}
    assert {k: v for k, v in raw_after.items() if k != "stores"} == unrelated
    assert path.read_text().startswith(USER_CONFIG.split("\n[[")[0])


def test_track_twice_is_a_no_op_and_untracking_an_untracked_path_fails(home: Path) -> None:
    path = _write_user_config(home)
    again = setup_track.track(home / ".agents" / "memory" / "scout")
    assert not again.changed and "already tracked" in again.lines[0]
    assert path.read_text() == USER_CONFIG

    with pytest.raises(MemsyncError, match="is not tracked"):
        setup_track.untrack(home / "nothing")


def test_track_into_unknown_store_fails_without_changing_the_config(home: Path) -> None:
    path = _write_user_config(home)
    result = cli_main("track", str(home / "x.jsonl"), "--store", "team")
    assert result.returncode == 1 and "store 'team' is not configured" in result.stderr
    assert "Traceback" not in result.stderr
    assert tomllib.loads(path.read_text()) == tomllib.loads(USER_CONFIG)


def test_store_add_and_remotes(home: Path, tmp_path: Path) -> None:
    _write_user_config(home)
    remote = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))

    added = setup.store_add("team", remote=str(remote))
    assert "nothing is tracked into team yet" in "\n".join(added.lines)
    assert git(remote, "rev-parse", "refs/heads/main").strip()  # the new store was pushed

    assert cli_main("remote", "add", "backup", "/srv/backup.git", "--store", "team").returncode == 0
    with pytest.raises(MemsyncError, match="store team already has one of that name"):
        setup_remote.remote_add("backup", "/elsewhere.git", store="team")
    raw = tomllib.loads(_config(home).read_text())
    assert raw["stores"]["team"]["remotes"] == {"origin": str(remote), "backup": "/srv/backup.git"}

    assert setup_remote.remote_remove("backup", store="team").changed
    with pytest.raises(MemsyncError, match="store team has none of that name"):
        setup_remote.remote_remove("backup", store="team")
    assert tomllib.loads(_config(home).read_text())["stores"]["team"]["remotes"] == {"origin": str(remote)}


@pytest.mark.slow
def test_tracking_a_path_the_store_already_holds_merges_both(home: Path, tmp_path: Path) -> None:
    """Peer content at the store path, local content at the live path: after a sync both hold both."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    alice = isolated_env(tmp_path / "alice")
    alice_role = tmp_path / "alice" / ".agents" / "memory" / "scout"
    (alice_role / "daily").mkdir(parents=True)
    (alice_role / "from_alice.md").write_text("---\nname: from alice\ndescription: a\ntype: user\n---\n\nA\n")
    (alice_role / "daily" / "2026-11-30.md").write_text("# Daily log — 2026-11-30\n\n- [09:00] alice\n")
    assert run_cli("init", "--remote", str(remote), env=alice).returncode == 0
    assert run_cli("sync", env=alice).returncode == 0

    # Bob's copy of the role lives in a project, so init does not find it; he maps it to roles/scout,
    # which the default folder track (~/.agents/memory as roles) would overlap: he untracks that first.
    setup.init(remote=str(remote))
    setup_track.untrack(home / ".agents" / "memory")
    bob_role = home / "work" / "shop" / ".agents" / "memory" / "scout"
    (bob_role / "daily").mkdir(parents=True)
    (bob_role / "from_bob.md").write_text("---\nname: from bob\ndescription: b\ntype: user\n---\n\nB\n")
    (bob_role / "daily" / "2026-11-30.md").write_text("# Daily log — 2026-11-30\n\n- [09:01] bob\n")

    tracked = "\n".join(setup_track.track(bob_role, as_path="roles/scout").lines)

    assert "already holds roles/scout (from peers)" in tracked and "nothing on either side is lost" in tracked
    assert run_all_from(config_path()) == 0
    assert (bob_role / "from_alice.md").exists() and (bob_role / "from_bob.md").exists()
    daily = (bob_role / "daily" / "2026-11-30.md").read_text()
    assert "- [09:00] alice\n" in daily and "- [09:01] bob\n" in daily
    assert run_cli("sync", env=alice).returncode == 0
    assert (alice_role / "from_bob.md").read_text() == (bob_role / "from_bob.md").read_text()
    assert "- [09:01] bob\n" in (alice_role / "daily" / "2026-11-30.md").read_text()


@pytest.mark.slow
def test_track_makes_a_running_daemon_reload_and_sync_the_new_path(home: Path, tmp_path: Path) -> None:
    (home / ".agents/memory/scout").mkdir(parents=True)
    config = _config(home)
    config.parent.mkdir(parents=True)
    config.write_text("debounce_s = 0.2\npull_interval_s = 2.0\n")
    setup.init()
    log_path = tmp_path / "daemon.log"
    with log_path.open("wb") as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon"], stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(lambda: "start-up cycle done" in log_path.read_text(), timeout=30, what="daemon start")
        assert doctor.check_daemon(config).level == "OK"
        log_file = home / "work" / "shop" / ".agents" / "memory" / "qa" / "daily" / "2026-11-30.md"
        log_file.parent.mkdir(parents=True)
        log_file.write_text("# Daily log — 2026-11-30\n\n- [09:00] first\n")

        tracked = setup_track.track(log_file.parents[1])

        assert f"the running daemon (PID {daemon.pid}) reloads its config now" in tracked.lines
        store = home / ".local/share/memsync/stores/personal"
        store_copy = store / "projects" / local_key(home / "work" / "shop") / "qa/daily/2026-11-30.md"
        wait_for(
            lambda: store_copy.exists() and store_copy.read_text() == log_file.read_text(),
            timeout=30,
            what="the newly tracked role in the store",
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, log_path.read_text()


def test_track_inside_a_tracked_directory_is_already_synced_or_refused(home: Path) -> None:
    _write_user_config(home)
    before = _config(home).read_bytes()
    inside = home / ".agents" / "memory" / "scout" / "daily"

    same = setup_track.track(inside, store="personal")

    assert not same.changed and _config(home).read_bytes() == before
    assert same.lines == (
        f"{inside} is synced as roles/scout/daily, as part of the tracked folder "
        f"{home / '.agents' / 'memory' / 'scout'}",
    )
    with pytest.raises(MemsyncError, match="overlaps the tracked"):
        setup_track.track(inside, store="personal", as_path="elsewhere/daily")


def test_track_in_another_store_takes_the_path_out_of_the_enclosing_track(home: Path) -> None:
    setup.init()
    setup.store_add("team")
    role = home / ".agents" / "memory" / "qa"

    report = setup_track.track(role, store="team")

    assert (
        f"{role} is taken out of the tracked {home / '.agents' / 'memory'} (store personal): it syncs "
        "with store team only"
    ) in report.lines
    stores = load_tracks(_config(home)).stores
    assert [t.excludes for t in stores["personal"].tracks] == [(role,), ()]
    assert [(t.live, t.store_path, t.excludes) for t in stores["team"].tracks] == [(role, "roles/qa", ())]

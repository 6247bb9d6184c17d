"""`memsync store list|remove`, `remote list`, `config list`: leaving a team store without editing
config.toml, and without its memory moving to another store (real stores, bare remotes, the CLI)."""

from __future__ import annotations

import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memsync.commands import setup, setup_track
from tests.support.helpers import bare_remote, git, reachable_paths, run_cli, wait_for


def _ok(*args: str) -> list[str]:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_lists_and_leaving_a_team_store_keeps_its_memory_out_of_the_personal_one(
    home: Path, tmp_path: Path
) -> None:
    personal = bare_remote(tmp_path / "personal.git")
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    (home / ".agents" / "memory" / "dev" / "notes.md").write_text("# mine\n")
    team_role = home / ".agents" / "memory" / "team1"
    team_role.mkdir()
    (team_role / "plan.md").write_text("# the team's plan\n")
    setup.init(remote=str(personal))
    setup.store_add("team")
    setup_track.track(team_role, store="team")
    _ok("sync")
    stores = home / ".local" / "share" / "memsync" / "stores"

    assert _ok("store", "list") == [
        f"personal: {stores / 'personal'}, branch main, origin {personal}, 2 tracked paths",
        f"team: {stores / 'team'}, branch main, no remote, 1 tracked path",
    ]
    assert _ok("remote", "list") == [
        f"personal origin {personal}",
        "team: no remote (`memsync remote add NAME URL --store team`)",
    ]
    assert _ok("remote", "list", "--store", "personal") == [f"personal origin {personal}"]
    config_file = home / ".config" / "memsync" / "config.toml"
    with config_file.open("a") as config_text:  # a project alias (`[projects]`): a table of its own
        config_text.write(f'\n[projects]\n"{tmp_path / "shop"}" = "shop"\n')
    settings = _ok("config", "list")
    assert f'projects."{tmp_path / "shop"}" = shop' in settings
    assert settings[0].startswith("host = ")
    assert "debounce_s = 1.0" in settings and "author.name = Test User" in settings
    assert f"stores.team.path = {stores / 'team'}" in settings
    assert f"stores.personal.remotes.origin = {personal}" in settings

    removed = _ok("store", "remove", "team")
    assert removed[0].startswith("store team removed from ")
    assert f"{team_role} stays out of the tracked {team_role.parent} (its exclude list)" in removed[1]
    assert f"kept on disk: its working tree and history {stores / 'team'}" in removed[2]
    config = tomllib.loads(config_file.read_text())
    assert list(config["stores"]) == ["personal"]
    assert (stores / "team" / "roles" / "team1" / "plan.md").read_text() == "# the team's plan\n"
    assert _ok("store", "list") == [
        f"personal: {stores / 'personal'}, branch main, origin {personal}, 2 tracked paths"
    ]

    # The team's role was inside the personal store's tracked folder: it must not move there now.
    (team_role / "later.md").write_text("# written after leaving\n")
    (home / ".agents" / "memory" / "dev" / "more.md").write_text("# still synced\n")
    _ok("sync")
    pushed = reachable_paths(personal)
    assert "roles/dev/more.md" in pushed
    assert not any("team1" in path for path in pushed)
    assert not (stores / "personal" / "roles" / "team1").exists()

    unknown = run_cli("store", "remove", "team")
    assert unknown.returncode == 1 and "cannot remove store 'team'" in unknown.stderr


def test_a_running_daemon_drops_a_removed_store(home: Path, tmp_path: Path) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("debounce_s = 0.2\npull_interval_s = 2.0\n")
    mine = home / ".agents" / "memory" / "dev"
    mine.mkdir(parents=True)
    team_role = home / "work" / "team1"
    team_role.mkdir(parents=True)
    setup.init()
    setup.store_add("team")
    setup_track.track(team_role, store="team", as_path="team1")
    team_store = home / ".local" / "share" / "memsync" / "stores" / "team"
    log_path = tmp_path / "daemon.log"
    with log_path.open("wb") as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon"], stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(lambda: "start-up cycle done" in log_path.read_text(), timeout=60, what="daemon start")
        (team_role / "before.md").write_text("# synced while a member\n")
        wait_for(lambda: (team_store / "team1" / "before.md").exists(), timeout=60, what="the team sync")

        removed = _ok("store", "remove", "team")
        assert f"the running daemon (PID {daemon.pid}) reloads its config now" in removed
        wait_for(lambda: "config reloaded: 1 store" in log_path.read_text(), timeout=60, what="the reload")
        head = git(team_store, "rev-parse", "HEAD")
        (team_role / "after.md").write_text("# written after leaving\n")
        (mine / "notes.md").write_text("# mine\n")
        personal = home / ".local" / "share" / "memsync" / "stores" / "personal"
        wait_for(lambda: (personal / "roles" / "dev" / "notes.md").exists(), timeout=60, what="a later cycle")
        assert not (team_store / "team1" / "after.md").exists()
        assert git(team_store, "rev-parse", "HEAD") == head
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, log_path.read_text()

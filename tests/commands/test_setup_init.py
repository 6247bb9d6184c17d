"""`memsync init`: config, default store, detection, idempotence, remotes empty or with history (issue 5)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memsync.commands import setup
from memsync.errors import MemsyncError
from memsync.tracks.resolve import load_tracks
from tests.conftest import isolated_env
from tests.support.helpers import cli_main, git


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def _store(home: Path) -> Path:
    return home / ".local" / "share" / "memsync" / "stores" / "personal"


def _refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def _bare(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    return path


def test_init_without_remote_tracks_detected_memory_in_a_local_store(home: Path) -> None:
    (home / ".agents/memory/scout").mkdir(parents=True)
    (home / ".agents/memory/scout/MEMORY.md").write_text("# Memory index — scout\n")
    (home / ".agent-memory").mkdir()
    (home / ".agent-memory/lessons.jsonl").write_text('{"format":"agent-memory/0.1"}\n')
    (home / ".claude/memory").mkdir(parents=True)
    (home / ".claude/memory/scout.md").write_text("legacy briefing\n")

    result = cli_main("init")

    assert result.returncode == 0, result.stderr
    # The folders are tracked whole (a role created later syncs too); what is in them is listed.
    assert f"tracking {home}/.agents/memory as roles" in result.stdout
    assert f"tracking {home}/.agent-memory as memory" in result.stdout
    assert f"{home}/.agents/memory/scout: synced as roles/scout" in result.stdout
    assert f"{home}/.agent-memory/lessons.jsonl: synced as memory/lessons.jsonl" in result.stdout
    assert "memsync migrate" in result.stdout  # the flat legacy file is offered, not tracked
    assert "created (local history" in result.stdout
    raw = tomllib.loads(_config(home).read_text())
    # ~/.claude exists (Claude Code is installed): its projects folder is tracked, one track per project.
    assert [t["path"] for t in raw["stores"]["personal"]["track"]] == [
        "~/.agents/memory",
        "~/.agent-memory",
        "~/.claude/projects",
        "~/.claude/agent-memory",
    ]
    assert git(_store(home), "rev-parse", "--verify", "HEAD").strip()


def test_init_names_a_claude_code_project_folder_once(home: Path) -> None:
    projects = home / ".claude" / "projects"
    (projects / "-home-ada-shop" / "memory").mkdir(parents=True)
    (projects / "-home-ada-shop" / "memory" / "MEMORY.md").write_text("# Memory\n")

    result = cli_main("init")

    assert result.returncode == 0, result.stderr
    folder = f"{projects}/-home-ada-shop/memory"
    assert result.stdout.count(folder) == 1, result.stdout
    [line] = [line for line in result.stdout.splitlines() if folder in line]
    assert line.startswith(f"tracking {folder} as claude/projects/-home-ada-shop@"), line
    assert result.stdout.count(f"{projects}:") == 1  # the projects folder's own tracking line


def test_init_twice_changes_nothing(home: Path) -> None:
    (home / ".agents/memory/scout").mkdir(parents=True)
    assert setup.init().changed
    config_before = _config(home).read_bytes()
    refs_before = _refs(_store(home))

    again = setup.init()

    assert not again.changed
    assert any("(unchanged)" in line for line in again.lines)
    assert any("(exists)" in line for line in again.lines)
    assert _config(home).read_bytes() == config_before
    assert _refs(_store(home)) == refs_before


def test_init_on_an_empty_home_tracks_the_default_folders_so_later_roles_sync(home: Path) -> None:
    first = setup.init()
    config_bytes = _config(home).read_bytes()
    (home / ".agents/memory/qa").mkdir(parents=True)

    again = setup.init()

    assert f"tracking {home}/.agents/memory as roles" in first.lines
    assert f"tracking {home}/.agent-memory as memory" in first.lines
    assert not again.changed and _config(home).read_bytes() == config_bytes
    assert [t.store_path for t in load_tracks(_config(home)).stores["personal"].tracks] == ["roles", "memory"]


def test_init_with_empty_bare_remote_pushes_the_new_store(home: Path, tmp_path: Path) -> None:
    remote = _bare(tmp_path / "remote.git")

    result = "\n".join(setup.init(remote=str(remote)).lines)

    assert "created and pushed to origin" in result
    head = git(_store(home), "rev-parse", "HEAD").strip()
    assert git(remote, "rev-parse", "refs/heads/main").strip() == head


def test_init_with_remote_history_clones_it(home: Path, tmp_path: Path) -> None:
    remote = _bare(tmp_path / "remote.git")
    other = tmp_path / "other"
    env = isolated_env(other)
    assert cli_main("init", "--remote", str(remote), env=env).returncode == 0
    remote_head = git(remote, "rev-parse", "refs/heads/main").strip()

    result = "\n".join(setup.init(remote=str(remote), branch="main").lines)

    assert "cloned from origin" in result
    assert git(_store(home), "rev-parse", "HEAD").strip() == remote_head


def test_init_refuses_a_different_remote_for_the_existing_store(home: Path, tmp_path: Path) -> None:
    setup.init(remote=str(_bare(tmp_path / "a.git")))
    before = _config(home).read_bytes()

    with pytest.raises(MemsyncError, match="already has origin"):
        setup.init(remote=str(_bare(tmp_path / "b.git")))

    assert _config(home).read_bytes() == before


def test_init_leaves_memory_alone_that_a_tracked_directory_already_covers(home: Path) -> None:
    (home / ".agents/memory/scout").mkdir(parents=True)
    config = _config(home)
    config.parent.mkdir(parents=True)
    config.write_text('[stores.personal]\n[[stores.personal.track]]\npath = "~/.agents/memory"\n')

    report = setup.init(tracks=[home / ".agents/memory/scout"])

    assert f"tracking {home}/.agents/memory as roles" in report.lines
    assert (
        f"{home}/.agents/memory/scout is synced as roles/scout, as part of the tracked folder "
        in "\n".join(report.lines)
    )
    assert [t.store_path for t in load_tracks(config).stores["personal"].tracks] == ["roles", "memory"]


def test_init_with_a_remote_that_does_not_exist_leaves_no_config(home: Path, tmp_path: Path) -> None:
    """A failed `memsync init --remote` says why in one line and writes no config naming that remote, so
    running it again with the right remote works (found in a newcomer's trial)."""
    missing = tmp_path / "nowhere.git"
    result = cli_main("init", "--remote", str(missing))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert not _config(home).exists()
    remote = _bare(tmp_path / "remote.git")
    again = cli_main("init", "--remote", str(remote))
    assert again.returncode == 0, again.stderr
    assert load_tracks(_config(home)).stores["personal"].remotes == {"origin": str(remote)}


def test_store_add_with_a_remote_that_fails_keeps_the_config_as_it_was(home: Path, tmp_path: Path) -> None:
    setup.init()
    before = _config(home).read_bytes()
    with pytest.raises(MemsyncError):
        setup.store_add("team", remote=str(tmp_path / "nowhere.git"))
    assert _config(home).read_bytes() == before

"""`memsync status` lists what is tracked; `untrack` of a role inside a tracked folder says so and
`untrack --exclude` leaves it out of the folder (and `track` takes it back), through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.projects.identity import local_key
from tests.support.helpers import cli_main, git


def _status(home: Path) -> dict[str, object]:
    result = cli_main("status", "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _role(home: Path, name: str, files: int) -> Path:
    role = home / ".agents" / "memory" / name
    (role / "daily").mkdir(parents=True)
    (role / "MEMORY.md").write_text(f"# Memory index — {name}\n")
    for i in range(files - 1):
        (role / "daily" / f"2026-01-{i + 1:02d}.md").write_text(f"# Daily log — 2026-01-{i + 1:02d}\n")
    (role / "snapshot.md").write_text("generated, never synced\n")
    return role


def test_status_lists_each_track_with_its_store_path_and_file_count(home: Path) -> None:
    _role(home, "scout", 3)
    _role(home, "writer", 2)
    assert cli_main("init").returncode == 0
    text = cli_main("status").stdout
    assert f"  tracking {home}/.agents/memory as roles (5 files)" in text.splitlines()
    assert f"  tracking {home}/.agent-memory as memory (does not exist yet)" in text.splitlines()
    store = _status(home)["stores"]["personal"]  # type: ignore[index]
    roles = {"path": f"{home}/.agents/memory", "store_path": "roles", "files": 5, "exists": True}
    memory = {"path": f"{home}/.agent-memory", "store_path": "memory", "files": 0, "exists": False}
    assert store["tracks"] == [{**roles, "excludes": []}, {**memory, "excludes": []}]


@pytest.mark.slow
def test_untrack_of_a_role_in_a_tracked_folder_says_so_and_exclude_leaves_it_out(home: Path) -> None:
    scout = _role(home, "scout", 2)
    _role(home, "writer", 1)
    assert cli_main("init").returncode == 0
    assert cli_main("sync").returncode == 0

    refused = cli_main("untrack", str(scout))
    assert refused.returncode == 1
    assert refused.stderr == (
        f"memsync: cannot untrack {scout}: it is not tracked on its own but as part of the tracked folder "
        f"{scout.parent} (store personal). Leave it out of that folder with `memsync untrack --exclude "
        f"{scout}`, or stop syncing the folder with `memsync untrack {scout.parent}`\n"
    )

    excluded = cli_main("untrack", "--exclude", str(scout))
    assert excluded.returncode == 0, excluded.stderr
    assert f"{scout} is left out of the tracked folder {scout.parent}" in excluded.stdout
    (scout / "daily" / "2026-01-01.md").write_text("# Daily log — 2026-01-01\n\n- [09:00] stays here\n")
    assert cli_main("sync").returncode == 0
    store_dir = home / ".local" / "share" / "memsync" / "stores" / "personal"
    assert "stays here" not in git(store_dir, "show", "HEAD:roles/scout/daily/2026-01-01.md")
    store = _status(home)["stores"]["personal"]  # type: ignore[index]
    assert store["tracks"][0]["excludes"] == [str(scout)]
    assert store["tracks"][0]["files"] == 1
    assert store["untracked"] == ["roles/scout/"]
    assert f"    left out: {scout}" in cli_main("status").stdout.splitlines()

    back = cli_main("track", str(scout))
    assert back.returncode == 0, back.stderr
    assert f"{scout} syncs again as roles/scout" in back.stdout
    assert cli_main("sync").returncode == 0
    assert "stays here" in git(store_dir, "show", "HEAD:roles/scout/daily/2026-01-01.md")
    assert _status(home)["stores"]["personal"]["untracked"] == []  # type: ignore[index]


def test_status_names_only_the_untracked_role_of_a_project(home: Path, tmp_path: Path) -> None:
    """One untracked role of a project was listed as the whole project (`projects/shop/`)."""
    project = tmp_path / "shop"
    for role in ("qa", "dev"):
        (project / ".agents" / "memory" / role).mkdir(parents=True)
        (project / ".agents" / "memory" / role / "MEMORY.md").write_text(f"# Memory index — {role}\n")
    assert cli_main("init").returncode == 0
    for role in ("qa", "dev"):
        assert cli_main("track", str(project / ".agents" / "memory" / role)).returncode == 0
    assert cli_main("sync").returncode == 0
    assert cli_main("untrack", str(project / ".agents" / "memory" / "dev")).returncode == 0
    dev = f"projects/{local_key(project)}/dev/"
    assert _status(home)["stores"]["personal"]["untracked"] == [dev]  # type: ignore[index]
    assert f"  in the store, not tracked here: {dev}" in cli_main("status").stdout.splitlines()

"""Claude Code's project memory folders: which project each is, where it goes in the store, what loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.config.file import load_config
from memsync.errors import MemsyncError
from memsync.hosts import claude_code
from memsync.hosts.claude_code import auto_memory_directory, over_loaded_limit, sanitize
from memsync.projects import claude_folders
from memsync.projects.claude_folders import expand_projects_root, project_memory, project_path
from memsync.projects.identity import local_key
from memsync.projects.store_paths import legacy_store_paths_for
from tests.support.claude_fixtures import checkout, claude_folder


def test_sanitize_replaces_everything_but_letters_and_digits() -> None:
    assert sanitize("/home/ada/src/my.shop_2") == "-home-ada-src-my-shop-2"


def test_the_project_path_comes_from_the_transcripts(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "src" / "my.shop"  # gone from this machine: only the transcript knows it
    folder = claude_folder(home, project)
    assert project_path(folder) == project


def test_without_transcripts_an_existing_directory_is_found(home: Path, tmp_path: Path) -> None:
    project = checkout(tmp_path / "code" / "my.shop")
    folder = claude_folder(home, project, transcript=False)
    assert project_path(folder) == project
    (tmp_path / "code" / "my-shop").mkdir()  # now two paths sanitize alike: no guess
    assert project_path(folder) is None


def test_a_transcript_of_another_path_is_not_trusted(home: Path, tmp_path: Path) -> None:
    folder = claude_folder(home, tmp_path / "a", memory=True)
    (folder / "0b1c.jsonl").write_text(json.dumps({"cwd": str(tmp_path / "elsewhere")}) + "\n")
    assert project_path(folder) is None


def test_a_folder_is_keyed_by_its_projects_remote_else_its_name(home: Path, tmp_path: Path) -> None:
    shop = checkout(tmp_path / "src" / "shop", "git@github.com:org/shop.git")
    memory = claude_folder(home, shop) / "memory"
    found = project_memory(memory)
    assert found.store_path == "claude/projects/github.com~org~shop"
    name = sanitize(str(shop))
    assert found.legacy == (f"claude/projects/{name}/memory", f"claude/projects/{name.lower()}")
    assert legacy_store_paths_for(memory) == found.legacy
    assert project_memory(memory / "notes.md").store_path == "claude/projects/github.com~org~shop/notes.md"

    lost = claude_folder(home, Path("/nowhere/at/all"), transcript=False) / "memory"
    assert project_memory(lost).store_path == f"claude/projects/{local_key(lost.parent)}"
    gone = claude_folder(home, tmp_path / "deleted-checkout") / "memory"
    assert project_memory(gone).store_path == f"claude/projects/{local_key(tmp_path / 'deleted-checkout')}"


def test_the_projects_folder_becomes_one_track_per_memory_folder(home: Path, tmp_path: Path) -> None:
    shop = checkout(tmp_path / "src" / "shop", "git@github.com:org/shop.git")
    clone = checkout(tmp_path / "other" / "shop", "https://github.com/org/shop")
    blog = checkout(tmp_path / "src" / "blog")
    for project in (shop, clone, blog):
        claude_folder(home, project)
    claude_folder(home, tmp_path / "no-memory-yet", memory=False)
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[stores.personal]\npath = "{tmp_path / "store"}"\n'
        '[[stores.personal.track]]\npath = "~/.claude/projects"\n'
        '[[stores.personal.track]]\npath = "~/.claude/memory"\n'
    )
    store = load_config(config_file).stores["personal"]
    by_path = {track.store_path: track.live for track in store.tracks}
    root = home / ".claude" / "projects"
    assert store.host_roots[0].live == root and store.host_roots[0].prefix == "claude/projects"
    # Sorted by folder name: "-...-other-shop" before "-...-src-shop" takes the identity first.
    assert by_path == {
        f"claude/projects/{local_key(blog)}": root / sanitize(str(blog)) / "memory",
        "claude/projects/github.com~org~shop": root / sanitize(str(clone)) / "memory",
        f"claude/projects/github.com~org~shop@{sanitize(str(shop)).lower()}": root
        / sanitize(str(shop))
        / "memory",
        "claude/memory": home / ".claude" / "memory",
    }
    assert [m.store_path for m in expand_projects_root(root)] == list(by_path)[:3]
    bare = load_config(config_file, discover=False).stores["personal"]
    assert [t.store_path for t in bare.tracks] == ["claude/memory"] and bare.host_roots == store.host_roots


def test_a_project_memory_folder_tracked_alone_overlaps_the_projects_folder(
    home: Path, tmp_path: Path
) -> None:
    memory = claude_folder(home, tmp_path / "p") / "memory"
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[stores.personal]\npath = "{tmp_path / "store"}"\n'
        f'[[stores.personal.track]]\npath = "{memory}"\n'
        '[[stores.personal.track]]\npath = "~/.claude/projects"\n'
    )
    with pytest.raises(MemsyncError, match=r"track\[1\].*overlapping track\[0\]"):
        load_config(config_file)


def test_auto_memory_directory_comes_from_user_or_local_settings(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    assert auto_memory_directory() is None
    settings.write_text(json.dumps({"autoMemoryDirectory": "relative/dir"}))
    assert auto_memory_directory() is None  # Claude Code ignores a relative value
    settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/claude"}))
    assert auto_memory_directory() == home / "notes" / "claude"
    (home / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/mem"}))
    assert auto_memory_directory() == Path("/srv/mem")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "elsewhere"))
    assert auto_memory_directory() is None
    assert claude_code.projects_root() == home / "elsewhere" / "projects"


def test_what_claude_code_loads_of_an_index(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("- line\n" * 200)
    assert over_loaded_limit(index) is None
    index.write_text("- line\n" * 201)
    assert over_loaded_limit(index) == (201, 201 * 7)
    index.write_text("x" * (25 * 1024 + 1))
    assert over_loaded_limit(index) == (1, 25 * 1024 + 1)
    assert over_loaded_limit(tmp_path / "missing.md") is None


def test_track_and_untrack_the_projects_folder_from_the_cli(home: Path, tmp_path: Path) -> None:
    from tests.support.helpers import cli_main

    project = checkout(tmp_path / "src" / "shop", "git@github.com:org/shop.git")
    claude_folder(home, project)
    assert cli_main("init").returncode == 0  # ~/.claude exists: init tracks the projects folder
    assert cli_main("untrack", str(home / ".claude" / "projects")).returncode == 0
    done = cli_main("track", str(home / ".claude" / "projects"))
    assert done.returncode == 0, done.stderr
    assert f"tracking {home}/.claude/projects in store personal as claude/projects" in done.stdout
    assert (
        "claude/projects/github.com~org~shop" in cli_main("sync").stderr + cli_main("status").stdout
        or (
            home / ".local/share/memsync/stores/personal/claude/projects/github.com~org~shop/MEMORY.md"
        ).is_file()
    )
    again = cli_main("untrack", str(home / ".claude" / "projects"))
    assert again.returncode == 0 and "claude/projects stays in store personal" in again.stdout


def test_a_folder_without_memory_is_tracked_when_the_store_holds_its_project(
    home: Path, tmp_path: Path
) -> None:
    shop = checkout(tmp_path / "work" / "shop-main", "https://github.com/Org/shop")
    blog = checkout(tmp_path / "src" / "blog", "git@github.com:org/blog.git")
    unknown = tmp_path / "gone"  # no transcript, no checkout: its project cannot be told
    for project in (shop, blog):
        claude_folder(home, project, memory=False)
    (home / ".claude" / "projects" / sanitize(str(unknown))).mkdir()
    root = home / ".claude" / "projects"
    store_dir = tmp_path / "store"
    for key in ("github.com~org~shop", claude_folders.folder_key(root / sanitize(str(unknown)))):
        (store_dir / "claude" / "projects" / key).mkdir(parents=True)
        (store_dir / "claude" / "projects" / key / "MEMORY.md").write_text("- [Cart](cart.md) — cents\n")
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[stores.personal]\npath = "{store_dir}"\n[[stores.personal.track]]\npath = "~/.claude/projects"\n'
    )

    store = load_config(config_file).stores["personal"]

    assert store.host_roots[0].held == {"github.com~org~shop", local_key(root / sanitize(str(unknown)))}
    # The shop's folder, by its checkout's remote; not the blog (not in the store), not the folder whose
    # project is unknown (a name matching a store folder is no identity).
    assert [(t.store_path, t.live) for t in store.tracks] == [
        ("claude/projects/github.com~org~shop", root / sanitize(str(shop)) / "memory")
    ]
    assert not (root / sanitize(str(shop)) / "memory").exists()  # deliver creates it, not the config
    assert not claude_folders.memory_folders_differ(root, (), [t.live for t in store.tracks])
    assert expand_projects_root(root) == []

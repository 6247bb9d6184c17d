"""Claude Code's project folders (``projects.claude_folders``): each folder's project found (transcripts,
an existing checkout), keyed by its identity, the projects folder expanded into one track per memory
folder (and per project the store holds); and on two machines whose checkout paths differ, synced by
real daemons.

Each machine has a real git checkout of one project at another path, its origin spelled differently
(scp-like on one, https on the other), and Claude Code's folder for it named after that path. Both
folders converge to one store path, the project's identity; a project folder created while the daemon
runs is picked up without a restart.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.hosts.claude_code import sanitize
from memsync.projects import claude_folders
from memsync.projects.claude_folders import expand_projects_root, project_memory, project_path
from memsync.projects.identity import local_key
from memsync.projects.store_paths import legacy_store_paths_for
from memsync.tracks.resolve import load_tracks
from tests.support.claude_fixtures import checkout, claude_folder
from tests.support.helpers import git, wait_for
from tests.support.peers import Peer, running, sync

KEY = "claude/projects/example.com~org~shop"


def remote_tree(remote: Path) -> list[str]:
    return git(remote, "ls-tree", "-r", "--name-only", "main").split()


def test_two_checkout_paths_converge_to_one_store_path(tmp_path: Path, remote: Path) -> None:
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    shop_a = checkout(a.home / "src" / "shop", "git@example.com:org/shop.git")
    shop_b = checkout(b.home / "work" / "shop-main", "https://example.com/org/shop")
    memory_a = claude_folder(a.home, shop_a) / "memory"
    memory_b = claude_folder(b.home, shop_b, index="- [Deploy](deploy.md) — Tuesdays only\n") / "memory"
    (memory_a / "cart.md").write_text(
        "---\nname: Cart\ndescription: rounding\ntype: project\n---\n\nCents.\n"
    )
    (memory_b / "deploy.md").write_text("---\nname: Deploy\ndescription: when\ntype: project\n---\n\nTue.\n")
    root_a, root_b = (peer.home / ".claude" / "projects" for peer in (a, b))
    a.add_track(root_a)
    b.add_track(root_b)

    with running(a, b):
        wait_for(lambda: (memory_b / "cart.md").is_file() and (memory_a / "deploy.md").is_file(), timeout=60)
        for name in ("MEMORY.md", "cart.md", "deploy.md"):
            wait_for(lambda name=name: (memory_a / name).read_bytes() == (memory_b / name).read_bytes(), 60)
        index = (memory_a / "MEMORY.md").read_text()
        assert "cart.md" in index and "deploy.md" in index

        # A project folder Claude Code creates while the daemons run: no restart needed.
        blog = checkout(b.home / "work" / "blog")
        new_memory = claude_folder(b.home, blog, memory=False) / "memory"
        new_memory.mkdir()
        (new_memory / "MEMORY.md").write_text("- [Drafts](drafts.md) — keep drafts short\n")
        # No remote: bob's own key (folder name, host, a hash of its path).
        blog_index = re.compile(r"claude/projects/blog@bob-[0-9a-f]{6}/MEMORY\.md")
        wait_for(lambda: any(blog_index.fullmatch(path) for path in remote_tree(remote)), timeout=60)

        # A later write on one machine reaches the other's folder of the same project.
        with (memory_b / "MEMORY.md").open("a") as handle:
            handle.write("- [Review](review.md) — two approvals\n")
        wait_for(lambda: "review.md" in (memory_a / "MEMORY.md").read_text(), timeout=60)

    tree = remote_tree(remote)
    assert {path for path in tree if path.startswith("claude/projects/")} == {
        f"{KEY}/MEMORY.md",
        f"{KEY}/cart.md",
        f"{KEY}/deploy.md",
        next(path for path in tree if blog_index.fullmatch(path)),
    }
    # Transcripts and the folders' own names never enter the store; each folder is still named by its path.
    assert not any(path.endswith(".jsonl") and path.startswith("claude/") for path in tree)
    assert memory_a.parent.name == sanitize(str(shop_a)) and memory_a.parent.parent == root_a
    assert memory_b.parent.parent == root_b
    assert not (root_a / sanitize(str(blog))).exists()  # alice has no such project: nothing is made up


def test_a_project_folder_without_memory_gets_the_peers_memory(tmp_path: Path, remote: Path) -> None:
    """Bob's Claude Code has run in his checkout of the shop (its folder holds a transcript) but made no
    memory folder yet: alice's memory of the shop, which reaches bob's store by a merge after his daemon
    started, is delivered into a ``memory`` folder memsync creates there. A folder Claude Code creates
    while the daemon runs, for a project the store holds, gets it too; the folder of a project the store
    does not hold stays as it was."""
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    shop_a = checkout(a.home / "src" / "shop", "git@example.com:org/shop.git")
    shop_b = checkout(b.home / "work" / "shop-main", "https://example.com/org/shop")
    blog_a = checkout(a.home / "src" / "blog", "git@example.com:org/blog.git")
    blog_b = checkout(b.home / "code" / "blog", "https://example.com/org/blog.git")
    other_b = checkout(b.home / "work" / "other", "https://example.com/org/other")
    index = "- [Cart](cart.md) — the cart rounds totals\n- [Tax](tax.md) — VAT on shipping too\n"
    memory_a = claude_folder(a.home, shop_a, index=index) / "memory"
    (memory_a / "cart.md").write_text(
        "---\nname: Cart\ndescription: rounding\ntype: project\n---\n\nCents.\n"
    )
    folder_b = claude_folder(b.home, shop_b, memory=False)
    other_folder = claude_folder(b.home, other_b, memory=False)
    a.add_track(a.home / ".claude" / "projects")
    b.add_track(b.home / ".claude" / "projects")

    with running(b):
        with running(a):
            wait_for(
                lambda: f"{KEY}/MEMORY.md" in remote_tree(remote), timeout=60, what="alice's shop memory"
            )
            wait_for(lambda: (folder_b / "memory" / "MEMORY.md").is_file(), timeout=60, what="bob's memory/")
            wait_for(lambda: (folder_b / "memory" / "cart.md").is_file(), timeout=60, what="bob's cart.md")
            assert (folder_b / "memory" / "MEMORY.md").read_text() == index
            assert (folder_b / "memory" / "cart.md").read_bytes() == (memory_a / "cart.md").read_bytes()

            blog_memory = claude_folder(a.home, blog_a, index="- [Drafts](drafts.md) — keep drafts short\n")
            wait_for(
                lambda: "claude/projects/example.com~org~blog/MEMORY.md" in remote_tree(remote),
                timeout=60,
                what="alice's blog memory",
            )
        wait_for(
            lambda: (b.store / "claude/projects/example.com~org~blog/MEMORY.md").is_file(),
            timeout=60,
            what="the blog's memory in bob's store",
        )
        # Claude Code's first session in bob's blog checkout creates its folder while the daemon runs.
        blog_folder = claude_folder(b.home, blog_b, memory=False)
        wait_for(
            lambda: (blog_folder / "memory" / "MEMORY.md").is_file(), timeout=60, what="bob's blog memory"
        )
        assert (blog_folder / "memory" / "MEMORY.md").read_bytes() == (
            blog_memory / "memory" / "MEMORY.md"
        ).read_bytes()

        # Bob's own line in the index he received reaches alice as for any tracked folder.
        with (folder_b / "memory" / "MEMORY.md").open("a") as handle:
            handle.write("- [Deploy](deploy.md) — Tuesdays only\n")
    assert sorted(p.name for p in other_folder.iterdir()) == ["0b1c.jsonl"]  # not in the store: untouched
    sync(b, a)
    assert (memory_a / "MEMORY.md").read_text() == index + "- [Deploy](deploy.md) — Tuesdays only\n"


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
    store = load_tracks(config_file).stores["personal"]
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
    bare = load_tracks(config_file, discover=False).stores["personal"]
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
        load_tracks(config_file)


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

    store = load_tracks(config_file).stores["personal"]

    assert store.host_roots[0].held == {"github.com~org~shop", local_key(root / sanitize(str(unknown)))}
    # The shop's folder, by its checkout's remote; not the blog (not in the store), not the folder whose
    # project is unknown (a name matching a store folder is no identity).
    assert [(t.store_path, t.live) for t in store.tracks] == [
        ("claude/projects/github.com~org~shop", root / sanitize(str(shop)) / "memory")
    ]
    assert not (root / sanitize(str(shop)) / "memory").exists()  # deliver creates it, not the config
    assert not claude_folders.memory_folders_differ(root, (), [t.live for t in store.tracks])
    assert expand_projects_root(root) == []

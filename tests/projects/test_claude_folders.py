"""Claude Code's project memory on two machines whose checkout paths differ, synced by real daemons.

Each machine has a real git checkout of one project at another path, its origin spelled differently
(scp-like on one, https on the other), and Claude Code's folder for it named after that path. Both
folders converge to one store path, the project's identity; a project folder created while the daemon
runs is picked up without a restart.
"""

from __future__ import annotations

import re
from pathlib import Path

from memsync.hosts.claude_code import sanitize
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

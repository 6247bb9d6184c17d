"""`hook session-start`: what peers added since this agent's last session, checked for content, order,
size and the host's JSON contract; run the way Claude Code runs it (the installed command, hook JSON on
stdin) against stores synced by `memsync sync` (``tests.support.peers.sync``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memsync.base.fsio import append_once
from memsync.commands.session_context import MAX_CHARS
from memsync.hosts.hooks import hook_command
from tests.support.claude_fixtures import checkout, claude_folder
from tests.support.helpers import git, run_hook
from tests.support.peers import Peer, entry_line, sync


def session_start(peer: Peer, cwd: Path, source: str = "startup", agent: str = "claude-code") -> str:
    """Run the command `memsync hooks install` writes, as the host does: through a shell, in the
    session's directory, the hook input on stdin. Returns the additionalContext ("" for no output)."""
    payload = {"session_id": "s1", "transcript_path": "", "cwd": str(cwd), "hook_event_name": "SessionStart"}
    payload["source"] = source
    return run_hook(hook_command("session-start", agent), payload, peer.env, cwd)  # type: ignore[arg-type]


def two_machines(tmp_path: Path, remote: Path) -> tuple[Peer, Peer, Path, Path, Path]:
    """alice and bob, each with a checkout of one project at another path and Claude Code's folder for
    it; returns them, bob's checkout, and both memory folders."""
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    shop_a = checkout(a.home / "src" / "shop", "git@example.com:org/shop.git")
    shop_b = checkout(b.home / "code" / "shop", "https://example.com/org/shop.git")
    memory_a = claude_folder(a.home, shop_a, index="") / "memory"
    memory_b = claude_folder(b.home, shop_b, index="") / "memory"
    for peer in (a, b):
        peer.add_track(peer.home / ".claude" / "projects")
    sync(a, b)
    return a, b, shop_b, memory_a, memory_b


@pytest.mark.slow
def test_peers_additions_with_host_date_and_order(tmp_path: Path, remote: Path) -> None:
    a, b, shop_b, memory_a, memory_b = two_machines(tmp_path, remote)
    assert session_start(b, shop_b) == ""  # the first session: nothing from anyone yet

    head = "---\nname: Cart rounding\ndescription: the cart rounds totals to cents\ntype: project\n---\n"
    (memory_a / "cart.md").write_text(head + "\nHalf up.\n")
    (memory_a / "MEMORY.md").write_text("- [Cart rounding](cart.md) — the cart rounds totals to cents\n")
    a.append_entry("Prefer rg over grep for searching.", kind="preference")
    a.append_daily("- [14:02] the harbor API needs a user agent\n")
    sync(a, b)
    assert (memory_b / "cart.md").is_file()  # delivered: the hook reads the store, not the remote

    subdir = shop_b / "src" / "checkout"
    subdir.mkdir(parents=True)
    context = session_start(b, subdir, source="startup")
    assert 0 < len(context) < MAX_CHARS
    lines = context.splitlines()
    project = lines.index("## This project (example.com~org~shop)")
    user = lines.index("## Your memory (every project)")
    assert project < user
    this_project, yours = lines[project + 1 : user], lines[user + 1 :]
    assert (
        "alice" in this_project[0]
        and 'cart.md (entry): "Cart rounding: the cart rounds totals to cents — Half up."' in this_project[0]
    )
    assert 'MEMORY.md (index): "- [Cart rounding](cart.md)' in this_project[1]
    assert any('(entry): "preference: Prefer rg over grep' in line for line in yours)
    assert any('(daily log): "- [14:02] the harbor API needs a user agent"' in line for line in yours)
    assert all(line.startswith(("- 20", "Full memory:", "History")) for line in this_project + yours)
    assert f"Full memory: {memory_b}" in context and "`memsync log`" in context

    assert session_start(b, shop_b) == ""  # a new session: nothing new since the last one
    a.append_entry("Deploys go out on Tuesdays.")
    sync(a, b)
    fresh = session_start(b, shop_b)
    assert "Deploys go out on Tuesdays." in fresh and "Prefer rg" not in fresh
    assert session_start(b, shop_b, source="compact") == fresh  # the context was dropped: the same again
    assert session_start(b, shop_b) == ""
    assert "Deploys go out on Tuesdays." in session_start(b, shop_b, agent="codex")  # each agent its own


def test_the_agents_own_writes_from_this_machine_are_left_out(tmp_path: Path, remote: Path) -> None:
    a, b, shop_b, _, memory_b = two_machines(tmp_path, remote)
    assert session_start(b, shop_b) == ""
    with (memory_b / "MEMORY.md").open("a") as index:
        index.write("- [Bob's note](note.md) — written by bob's own agent\n")
    b.append_entry("Bob's other agent learned this.")
    sync(b, a)
    mine = session_start(b, shop_b)
    assert "Bob's other agent learned this." in mine and "written by bob's own agent" not in mine
    shop_a = a.home / "src" / "shop"
    theirs = session_start(a, shop_a)
    assert "bob" in theirs and "written by bob's own agent" in theirs


def test_many_additions_are_cut_at_whole_items_under_the_limit(tmp_path: Path, remote: Path) -> None:
    a, b, shop_b, _, _ = two_machines(tmp_path, remote)
    assert session_start(b, shop_b) == ""
    lines = b"".join(entry_line(f"Lesson {i}: " + "the bridge closes at dusk " * 4) for i in range(3000))
    append_once(a.memory_file, lines)
    sync(a, b)
    context = session_start(b, shop_b)
    assert len(context) < MAX_CHARS
    assert "more not shown" in context and context.rstrip().endswith("`memsync log`.")
    shown = [line for line in context.splitlines() if line.startswith("- ")]
    assert len(shown) > 10 and all(line.endswith('dusk"') for line in shown)  # whole items only
    assert "Lesson 2999:" in shown[0]  # newest first


def test_without_a_config_the_hook_says_why_and_lets_the_session_start(home: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        hook_command("session-start", "claude-code"),
        shell=True,
        cwd=tmp_path,
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert "memsync hook session-start" in done.stderr and "memsync init" in done.stderr


def test_a_home_directory_kept_in_git_is_no_project_of_its_own(tmp_path: Path, remote: Path) -> None:
    a, b, _, _, _ = two_machines(tmp_path, remote)
    git(b.home, "init", "-q")  # dotfiles: the whole home is a checkout
    assert session_start(b, b.home) == ""
    a.append_entry("Rotate the keys every quarter.")
    sync(a, b)
    context = session_start(b, b.home)
    assert "## Your memory (every project)" in context and "Rotate the keys" in context
    assert "memory.jsonl" not in context.split("## Your memory", 1)[0]


def test_only_what_the_file_still_says_is_shown_never_a_conflicts_versions(
    tmp_path: Path, remote: Path
) -> None:
    a, b, shop_b, memory_a, memory_b = two_machines(tmp_path, remote)
    assert session_start(b, shop_b) == ""
    head = "---\nname: Testing\ndescription: how we run the tests\ntype: project\n---\n"
    (memory_a / "testing.md").write_text(head + "\nAlways run pytest with -x.\n")
    sync(a, b)
    (memory_a / "testing.md").write_text(head + "\nAlways run pytest with -q.\n")
    (memory_b / "testing.md").write_text(head + "\nAlways run pytest with -v.\n")
    sync(a, b, a)  # both edited: the file keeps both versions under memsync's note
    assert "[memsync] version 1 of 2" in (memory_a / "testing.md").read_text()
    (memory_a / "testing.md").write_text(head + "\nAlways run pytest with -x and -q.\n")
    sync(a, b)

    context = session_start(b, shop_b)
    assert "Always run pytest with -x and -q." in context
    for outdated in ("pytest with -x.", "pytest with -q.", "pytest with -v.", "[memsync]"):
        assert outdated not in context

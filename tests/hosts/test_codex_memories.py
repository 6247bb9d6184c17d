"""Codex's memories folder syncs like a role directory, and its own git repository is left alone: never
watched, never written, never in the store (real daemons, real git repositories on both machines)."""

from __future__ import annotations

from pathlib import Path

from memsync.daemon.watch import Watcher
from tests.support.helpers import git, wait_for
from tests.support.peers import Peer, running


def codex_memories(peer: Peer, files: dict[str, str]) -> Path:
    """``~/.codex/memories`` as Codex keeps it: markdown files in a git repository of its own."""
    memories = peer.home / ".codex" / "memories"
    for name, text in files.items():
        (memories / name).parent.mkdir(parents=True, exist_ok=True)
        (memories / name).write_text(text)
    memories.mkdir(parents=True, exist_ok=True)
    git(memories, "init", "-q")
    git(memories, "add", "-A")
    git(memories, "commit", "-q", "--allow-empty", "-m", "Initialize Codex git baseline")
    peer.add_track(memories)
    return memories


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def test_codex_memories_sync_and_their_git_repository_is_untouched(tmp_path: Path, remote: Path) -> None:
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    mine = codex_memories(
        a,
        {
            "MEMORY.md": "# Codex memory\n\n- The monorepo builds with `just build`.\n",
            "memory_summary.md": "v1\nBuilds with just.\n",
            "rollout_summaries/2026-11-30-build.md": "Found the build command.\n",
        },
    )
    theirs = codex_memories(b, {"raw_memories.md": "- bob prefers small commits\n"})
    git_dirs = {mine: snapshot(mine / ".git"), theirs: snapshot(theirs / ".git")}

    with running(a, b):
        wait_for(lambda: (theirs / "rollout_summaries" / "2026-11-30-build.md").is_file(), timeout=60)
        wait_for(lambda: (mine / "raw_memories.md").is_file(), timeout=60)
        assert (theirs / "MEMORY.md").read_text() == (mine / "MEMORY.md").read_text()

    tree = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    codex_paths = sorted(path for path in tree if path.startswith("codex/"))
    assert codex_paths == [
        "codex/memories/MEMORY.md",
        "codex/memories/memory_summary.md",
        "codex/memories/raw_memories.md",
        "codex/memories/rollout_summaries/2026-11-30-build.md",
    ]
    for memories, before in git_dirs.items():
        assert snapshot(memories / ".git") == before  # not one byte of Codex's repository changed
    # Codex's repository still works and sees what memsync delivered as its own worktree's changes.
    assert "raw_memories.md" in git(mine, "status", "--porcelain")
    assert git(theirs, "log", "--format=%s").strip() == "Initialize Codex git baseline"


def test_the_watcher_never_watches_a_tracked_folders_git_directory(tmp_path: Path) -> None:
    memories = tmp_path / "memories"
    (memories / "rollout_summaries").mkdir(parents=True)
    git(memories, "init", "-q")
    with Watcher(lambda event: None) as watcher:
        watcher.set_targets([memories], [])
        watched = watcher.watched_dirs
    assert memories in watched and memories / "rollout_summaries" in watched
    assert not any(".git" in path.parts for path in watched)

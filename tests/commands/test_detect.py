"""Detection of existing memory locations in fake home directories (issue 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.commands.detect import Found, detect


def _touch(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_empty_home_tracks_the_default_folders_themselves(home: Path) -> None:
    found = [(loc.live.relative_to(home).as_posix(), loc.found, loc.track) for loc in detect(home)]

    assert found == [
        (".agents/memory", Found.ROLE_ROOT, True),
        (".agent-memory", Found.MEMORY_ROOT, True),
    ]


def test_role_dirs_jsonl_and_claude_folder(home: Path) -> None:
    _touch(home / ".agents/memory/scout/MEMORY.md")
    _touch(home / ".agents/memory/python-dev/daily/2026-11-30.md")
    _touch(home / ".agent-memory/team.jsonl")
    _touch(home / ".agent-memory/notes.txt")
    _touch(home / ".claude/memory/MEMORY.md")
    _touch(home / ".claude/memory/some-topic.md")

    found = [(loc.live.relative_to(home).as_posix(), loc.found, loc.track) for loc in detect(home)]

    assert found == [
        (".agents/memory", Found.ROLE_ROOT, True),
        (".agents/memory/python-dev", Found.ROLE, False),
        (".agents/memory/scout", Found.ROLE, False),
        (".agent-memory", Found.MEMORY_ROOT, True),
        (".agent-memory/team.jsonl", Found.JSONL, False),
        (".claude/memory", Found.CLAUDE, True),
        (".claude/projects", Found.CLAUDE_PROJECTS, True),
        (".claude/agent-memory", Found.CLAUDE_AGENTS, True),
    ]


def test_claude_folder_without_index_holds_legacy_flat_files_and_role_dirs(home: Path) -> None:
    _touch(home / ".claude/memory/scout.md", "old briefing\n")
    _touch(home / ".claude/memory/python-dev/MEMORY.md")
    _touch(home / ".agents-legacy/memory/python-dev/MEMORY.md")
    _touch(home / ".agents-legacy/memory/qa/MEMORY.md")

    by_path = {loc.live.relative_to(home).as_posix(): loc for loc in detect(home)}

    flat = by_path[".claude/memory/scout.md"]
    assert (flat.found, flat.role, flat.track) == (Found.LEGACY_FLAT, "scout", False)
    # Legacy copies are offered to `memsync migrate`, never tracked (a moved tracked dir syncs as a delete).
    # Tracked as folders: a migrated role is picked up there (and ~/.claude exists: Claude Code's projects).
    roots = {".agents/memory", ".agent-memory", ".claude/projects", ".claude/agent-memory"}
    assert {path for path, loc in by_path.items() if loc.track} == roots
    for legacy in (".claude/memory/scout.md", ".claude/memory/python-dev", ".agents-legacy/memory/qa"):
        assert "memsync migrate" in by_path[legacy].note
    assert "superseded" in by_path[".agents-legacy/memory/python-dev"].note
    assert by_path[".agents-legacy/memory/qa"].found is Found.LEGACY_ROLE


def test_legacy_dir_is_superseded_when_the_current_role_dir_exists(home: Path) -> None:
    _touch(home / ".agents/memory/scout/MEMORY.md")
    _touch(home / ".agents-legacy/memory/scout/MEMORY.md")

    legacy = [loc for loc in detect(home) if loc.found is Found.LEGACY_ROLE]

    assert len(legacy) == 1 and not legacy[0].track
    assert "superseded" in legacy[0].note


def test_claude_code_projects_auto_memory_and_codex_memories(home: Path, tmp_path: Path) -> None:
    from memsync.commands import setup
    from memsync.hosts.claude_code import sanitize
    from memsync.tracks.resolve import load_tracks
    from tests.support.helpers import git

    project = tmp_path / "src" / "shop"
    project.mkdir(parents=True)
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "git@github.com:org/shop.git")
    folder = home / ".claude/projects" / sanitize(str(project))
    _touch(folder / "memory/MEMORY.md", "- [Cart](cart.md) — rounding\n")
    _touch(folder / "4f1e.jsonl", '{"type":"user","cwd":"' + str(project) + '"}\n')
    _touch(home / ".claude/settings.json", '{"autoMemoryDirectory": "~/notes/claude", "theme": "dark"}')
    _touch(home / ".codex/memories/MEMORY.md", "# Codex memory\n")
    git(home / ".codex/memories", "init", "-q")

    by_path = {loc.live.relative_to(home).as_posix(): loc for loc in detect(home)}

    assert by_path[".claude/projects"].found is Found.CLAUDE_PROJECTS and by_path[".claude/projects"].track
    inside = by_path[f".claude/projects/{folder.name}/memory"]
    assert (inside.found, inside.track) == (Found.CLAUDE_PROJECT, False)
    assert "synced as claude/projects/github.com~org~shop" in inside.note
    auto = by_path["notes/claude"]
    assert (auto.found, auto.track, auto.store_path) == (Found.CLAUDE_AUTO, True, "claude/auto-memory")
    codex = by_path[".codex/memories"]
    assert (codex.found, codex.track, codex.store_path) == (Found.CODEX, True, None)

    setup.init()
    store = load_tracks().stores["personal"]
    assert {t.store_path: t.live for t in store.tracks} == {
        "roles": home / ".agents/memory",
        "memory": home / ".agent-memory",
        "claude/projects/github.com~org~shop": folder / "memory",
        "claude/auto-memory": home / "notes/claude",
        "codex/memories": home / ".codex/memories",
        "claude/agent-memory": home / ".claude/agent-memory",
    }


def test_codex_home_elsewhere_keeps_the_codex_store_path(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    _touch(tmp_path / "codex-home/memories/MEMORY.md")
    found = [loc for loc in detect() if loc.found is Found.CODEX]
    assert [(loc.live, loc.store_path) for loc in found] == [
        (tmp_path / "codex-home/memories", "codex/memories")
    ]
    assert not any(loc.found is Found.CLAUDE_PROJECTS for loc in detect())  # no ~/.claude: no Claude Code

"""Detection of existing memory locations in fake home directories (issue 5)."""

from __future__ import annotations

from pathlib import Path

from memsync.detect import Found, detect


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
    roots = {".agents/memory", ".agent-memory"}  # tracked as folders: a migrated role is picked up there
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

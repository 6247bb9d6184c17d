"""Legacy role memory migration (seeds/002 "Legacy paths"): dry run, --apply, never overwriting."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.formats.markdown.migrate import migrate
from memsync.formats.markdown.reading import read_entry
from memsync.formats.markdown.roledir import check_role_dir


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def legacy_project(root: Path) -> None:
    scout = root / ".claude" / "memory" / "scout"
    (scout / "daily").mkdir(parents=True)
    (scout / "MEMORY.md").write_text("# Memory index — scout\n")
    (scout / "daily" / "2026-07-22.md").write_text("# Daily log — 2026-07-22\n")
    (root / ".claude" / "memory" / "python-dev.md").write_text("# Stack: Python 3.12, uv\n\nUse pytest.\n")
    (root / ".agents-legacy" / "memory" / "qa-engineer").mkdir(parents=True)
    (root / ".agents-legacy" / "memory" / "qa-engineer" / "x.md").write_text("x\n")


def test_dry_run_plans_every_legacy_location_and_changes_nothing(tmp_path: Path) -> None:
    legacy_project(tmp_path)
    before = tree(tmp_path)
    steps = migrate(tmp_path)
    assert [(s.action, s.source.relative_to(tmp_path).as_posix()) for s in steps] == [
        ("move", ".claude/memory/scout"),
        ("convert", ".claude/memory/python-dev.md"),
        ("move", ".agents-legacy/memory/qa-engineer"),
    ]
    assert [s.describe(tmp_path, applied=False) for s in steps] == [
        "would move .claude/memory/scout -> .agents/memory/scout",
        "would convert .claude/memory/python-dev.md -> .agents/memory/python-dev/project_briefing.md"
        " (type: project entry and one index line)",
        "would move .agents-legacy/memory/qa-engineer -> .agents/memory/qa-engineer",
    ]
    assert tree(tmp_path) == before


def test_apply_moves_directories_and_converts_the_flat_file(tmp_path: Path) -> None:
    legacy_project(tmp_path)
    migrate(tmp_path, apply=True)
    assert tree(tmp_path) == {
        ".agents/memory/python-dev/MEMORY.md": b"# Memory index \xe2\x80\x94 python-dev\n\n"
        b"- [Project briefing](project_briefing.md) \xe2\x80\x94 Stack: Python 3.12, uv\n",
        ".agents/memory/python-dev/project_briefing.md": b"---\nname: Project briefing\n"
        b'description: "Stack: Python 3.12, uv"\ntype: project\n---\n\n'
        b"# Stack: Python 3.12, uv\n\nUse pytest.\n",
        ".agents/memory/qa-engineer/x.md": b"x\n",
        ".agents/memory/scout/MEMORY.md": "# Memory index — scout\n".encode(),
        ".agents/memory/scout/daily/2026-07-22.md": "# Daily log — 2026-07-22\n".encode(),
    }
    briefing = read_entry(tmp_path / ".agents/memory/python-dev/project_briefing.md")
    assert (briefing.name, briefing.description, briefing.type) == (
        "Project briefing",
        "Stack: Python 3.12, uv",
        "project",
    )
    assert check_role_dir(tmp_path / ".agents/memory/python-dev") == []
    assert migrate(tmp_path) == []


def test_existing_destinations_are_never_overwritten(tmp_path: Path) -> None:
    legacy_project(tmp_path)
    (tmp_path / ".agents" / "memory" / "scout").mkdir(parents=True)
    (tmp_path / ".agents" / "memory" / "scout" / "keep.md").write_text("mine\n")
    (tmp_path / ".agents" / "memory" / "python-dev").mkdir(parents=True)
    (tmp_path / ".agents" / "memory" / "python-dev" / "project_briefing.md").write_text("mine too\n")
    (tmp_path / ".claude" / "memory" / "qa-engineer").mkdir()
    steps = migrate(tmp_path, apply=True)
    assert [s.describe(tmp_path, applied=True) for s in steps] == [
        "moved .claude/memory/qa-engineer -> .agents/memory/qa-engineer",
        "skip .claude/memory/scout: .agents/memory/scout already exists",
        "skip .claude/memory/python-dev.md: .agents/memory/python-dev/project_briefing.md already exists",
        "skip .agents-legacy/memory/qa-engineer: .agents/memory/qa-engineer already exists",
    ]
    assert (tmp_path / ".agents/memory/scout/keep.md").read_text() == "mine\n"
    assert (tmp_path / ".agents/memory/python-dev/project_briefing.md").read_text() == "mine too\n"
    assert (tmp_path / ".claude/memory/python-dev.md").exists()
    assert (tmp_path / ".agents-legacy/memory/qa-engineer/x.md").exists()


def test_flat_file_is_skipped_when_the_moved_directory_brings_a_briefing(tmp_path: Path) -> None:
    legacy_project(tmp_path)
    (tmp_path / ".claude/memory/python-dev").mkdir()
    (tmp_path / ".claude/memory/python-dev/project_briefing.md").write_text("from the dir\n")
    steps = migrate(tmp_path, apply=True)
    assert ("skip", ".claude/memory/python-dev.md") in [
        (s.action, s.source.relative_to(tmp_path).as_posix()) for s in steps
    ]
    assert (tmp_path / ".agents/memory/python-dev/project_briefing.md").read_text() == "from the dir\n"


def test_claude_code_memory_folder_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory Index\n")
    (folder / "user-prefers-simple-english.md").write_text("---\nname: u\n---\n")
    (folder / "sub").mkdir()
    before = tree(tmp_path)
    steps = migrate(tmp_path, apply=True)
    assert [s.describe(tmp_path, applied=True) for s in steps] == [
        "skip .claude/memory: a Claude Code memory folder (it has MEMORY.md), not legacy role files;"
        " left alone"
    ]
    assert tree(tmp_path) == before


def test_flat_file_with_frontmatter_keeps_its_description_and_non_utf8_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "memory"
    folder.mkdir(parents=True)
    (folder / "dev.md").write_text("---\ndescription: seeded by scout\n---\nBody\n")
    (folder / "zz.md").write_bytes(b"\xff\n")
    with pytest.raises(MemsyncError, match="not UTF-8"):
        migrate(tmp_path, apply=True)
    briefing = read_entry(tmp_path / ".agents/memory/dev/project_briefing.md")
    assert (briefing.description, briefing.body) == ("seeded by scout", "\nBody\n")
    assert (folder / "zz.md").exists()
    assert not (tmp_path / ".agents/memory/zz/project_briefing.md").exists()


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(MemsyncError, match="not a directory"):
        migrate(tmp_path / "missing")

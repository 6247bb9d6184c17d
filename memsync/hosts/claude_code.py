"""Claude Code's own memory folders: where they are and what Claude loads of them.

Claude Code keeps auto memory in ``~/.claude/projects/<sanitized project path>/memory/`` (``MEMORY.md``
plus topic files), one folder per git repository (its worktrees share it), unless ``autoMemoryDirectory``
in the user's settings moves it; ``$CLAUDE_CONFIG_DIR`` moves ``~/.claude`` as a whole. The sanitized name
is the project path with every character but ASCII letters and digits replaced by ``-``. Which project a
folder belongs to, and the tracks a projects folder gives, are ``memsync.projects.claude_folders``'.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

STORE_PREFIX = "claude/projects"
AUTO_MEMORY_STORE_PATH = "claude/auto-memory"
MEMORY_DIR = "memory"
# What Claude Code loads of MEMORY.md at the start of a session: whichever limit comes first.
LOADED_LINES = 200
LOADED_BYTES = 25 * 1024
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def claude_dir() -> Path:
    """Claude Code's config directory: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else Path.home() / ".claude"


def projects_root() -> Path:
    """The folder holding one folder per project: ``<claude dir>/projects``."""
    return claude_dir() / "projects"


def is_projects_root(path: Path) -> bool:
    """True when ``path`` is Claude Code's projects folder (``projects_root()`` or ``~/.claude/projects``),
    which memsync tracks as one folder per project memory rather than as one directory."""
    return path in (
        Path(os.path.abspath(projects_root())),
        Path(os.path.abspath(Path.home())) / ".claude/projects",
    )


def sanitize(path: str) -> str:
    """``path`` as Claude Code names its project folder: every character but ASCII letters and digits
    becomes ``-`` (not cut at 200 characters; see ``_matches``). Pure."""
    return _NOT_ALNUM.sub("-", path)


def all_folders(root: Path) -> list[Path]:
    """Every project folder under ``root`` (not hidden), sorted by name; [] when it cannot be listed."""
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return []
    return [Path(entry.path) for entry in entries if not entry.name.startswith(".") and entry.is_dir()]


def project_folders(root: Path) -> list[Path]:
    """The project folders under ``root`` that hold a ``memory`` directory, sorted by name; [] when
    ``root`` does not exist. Reads one directory listing; never raises for a missing or unreadable root."""
    return [folder for folder in all_folders(root) if (folder / MEMORY_DIR).is_dir()]


def is_project_memory(path: Path) -> bool:
    """True when ``path`` is a project's memory folder, or inside one, under Claude Code's projects
    folder."""
    for root in path.parents:
        if is_projects_root(root):
            parts = path.relative_to(root).parts
            return len(parts) >= 2 and parts[1] == MEMORY_DIR
    return False


def auto_memory_directory() -> Path | None:
    """Where ``autoMemoryDirectory`` in the user's Claude Code settings (``settings.local.json`` over
    ``settings.json`` in the Claude config directory) moves auto memory, or None. The value must be
    absolute or start with ``~/`` (Claude Code ignores anything else). Unreadable files count as unset."""
    for name in ("settings.local.json", "settings.json"):
        try:
            settings = json.loads((claude_dir() / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
        if isinstance(value, str) and (value.startswith("~/") or value.startswith("/")):
            return Path(os.path.abspath(Path(value).expanduser()))
    return None


def is_claude_memory(live: Path) -> bool:
    """True when the tracked ``live`` directory is memory Claude Code loads: a project memory folder,
    ``<claude dir>/memory``, or the ``autoMemoryDirectory``."""
    return is_project_memory(live) or live in (claude_dir() / "memory", auto_memory_directory())


def over_loaded_limit(index: Path) -> tuple[int, int] | None:
    """(lines, bytes) of the ``MEMORY.md`` at ``index`` when Claude Code loads only part of it (more than
    ``LOADED_LINES`` lines or ``LOADED_BYTES`` bytes), else None (also when it cannot be read)."""
    try:
        data = index.read_bytes()
    except OSError:
        return None
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if lines > LOADED_LINES or len(data) > LOADED_BYTES:
        return lines, len(data)
    return None


def oversized_indexes(tracks: Iterable[Path]) -> list[tuple[Path, int, int]]:
    """(index path, lines, bytes) for each ``MEMORY.md`` of the tracked directories ``tracks`` that
    Claude Code loads (``is_claude_memory``) and loads only part of (``over_loaded_limit``): a merge of
    two machines' indexes can push one over."""
    found: list[tuple[Path, int, int]] = []
    for live in tracks:
        if is_claude_memory(live):
            size = over_loaded_limit(live / "MEMORY.md")
            if size is not None:
                found.append((live / "MEMORY.md", *size))
    return found


def partly_loaded(index: str, lines: int, size: int) -> str:
    """The warning for a ``MEMORY.md`` Claude Code loads only part of (``oversized_indexes``)."""
    return (
        f"{index} has {lines} lines, {size / 1024:.1f} KB: Claude Code loads only the first {LOADED_LINES} "
        f"lines or {LOADED_BYTES // 1024} KB of it. Move detail into topic files and keep the index short"
    )

"""Codex's own files: its home (``$CODEX_HOME``, else ``~/.codex``), its memories folder and its hooks file.

Codex keeps generated memory as markdown in ``<codex home>/memories/`` (``MEMORY.md``,
``memory_summary.md``, ``raw_memories.md``, ``rollout_summaries/``), a folder that is itself a git
repository Codex uses for its own bookkeeping. memsync tracks the folder like any role directory and
leaves its ``.git`` alone: ``layout.is_ignored`` keeps every ``.git`` out of watching, publishing and
delivering (DESIGN "Agent hosts").
"""

from __future__ import annotations

import os
from pathlib import Path

MEMORIES_STORE_PATH = "codex/memories"


def codex_home() -> Path:
    """Codex's home directory: ``$CODEX_HOME``, else ``~/.codex``."""
    override = os.environ.get("CODEX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".codex"


def memories_dir() -> Path:
    """Where Codex keeps its memories: ``<codex home>/memories``."""
    return codex_home() / "memories"


def hooks_file(project: Path | None = None) -> Path:
    """Codex's hooks file: the user's ``<codex home>/hooks.json``, or ``<project>/.codex/hooks.json``."""
    return (project / ".codex" if project is not None else codex_home()) / "hooks.json"

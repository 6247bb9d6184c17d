"""The memory agent hosts keep on their own, besides Claude Code's project folders and Codex's memories
folder (DESIGN "Agent hosts"): where each host keeps it and the store path it meets its peers' at.

- Claude Code's subagent memory (a subagent's ``memory: user``): ``<claude dir>/agent-memory/<agent>/``,
  a ``MEMORY.md`` index plus topic files, like project memory. ``memory: project`` keeps it in
  ``<project>/.claude/agent-memory/<agent>/`` (``memory: local``: ``.claude/agent-memory-local/``).
- Gemini CLI's ``save_memory`` adds a bullet under ``## Gemini Added Memories`` in ``~/.gemini/GEMINI.md``;
  Qwen Code's the same under ``## Qwen Added Memories`` in ``~/.qwen/QWEN.md``: append-mostly markdown,
  synced as one file (the rest of those folders holds credentials and settings, never synced).
- OpenCode keeps no memory of its own but its global rules, ``AGENTS.md`` beside its ``opencode.json``,
  which it loads into every session: synced as one file, like those.
- Gemini CLI's per-project memory (0.61): ``MEMORY.md`` and topic files in ``<gemini tmp>/<slug>/memory/``,
  where ``<gemini tmp>`` is ``~/.gemini/tmp`` (``$GEMINI_CLI_HOME/.gemini/tmp``) and ``<slug>`` a short
  name Gemini CLI picks per project path (``~/.gemini/projects.json``; ``shop``, then ``shop-1`` for
  another ``shop``), so it differs between machines; Gemini CLI writes the project's absolute path to
  ``<slug>/.project_root``, which ties the folder to the project (its store path is keyed by the project's
  identity, ``projects.store_paths``).
- Goose's memory extension: one ``<category>.txt`` per category in ``memory/`` beside Goose's
  ``config.yaml`` (global) and in ``<project>/.goose/memory/`` (local).

Every file of them is merged by its kind's driver (``base.layout.kind_of``): an index ``MEMORY.md`` by
the index driver, anything else whole with git's three-way text merge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memsync.hosts import claude_code, registry

CLAUDE_AGENTS_STORE_PATH = "claude/agent-memory"
GEMINI_STORE_PATH = "gemini/GEMINI.md"
QWEN_STORE_PATH = "qwen/QWEN.md"
OPENCODE_STORE_PATH = "opencode/AGENTS.md"
GOOSE_STORE_PATH = "goose/memory"
GEMINI_PROJECTS_STORE_PATH = "gemini/projects"
# The file in a Gemini CLI project folder naming the project's path (its ownership marker).
GEMINI_PROJECT_ROOT = ".project_root"
_ROOT_MAX_BYTES = 4096
# Project-scoped memory, keyed by the project's identity (``projects.identity.project_key``): the folder
# inside a project -> the store folder holding one entry per project key.
PROJECT_FOLDERS: dict[tuple[str, ...], str] = {
    (".claude", "agent-memory"): "claude/project-agent-memory",
    (".goose", "memory"): "goose/projects",
}


@dataclass(frozen=True)
class OwnMemory:
    """One host's own memory on this machine: what it is (``kind``, for messages), its ``live`` path (a
    folder, or a file for Gemini CLI, Qwen Code and OpenCode) and the ``store_path`` it syncs at."""

    kind: str
    live: Path
    store_path: str


def user_memory(home: Path | None = None) -> tuple[OwnMemory, ...]:
    """The hosts' user-scope memory places under ``home`` (default: this user's, where the hosts'
    own environment variables and the OS move them), whether they exist or not. Pure."""
    if home is None or home == Path.home():
        claude = claude_code.claude_dir()
        goose, opencode = registry.user_file("goose").parent, registry.user_file("opencode").parent
    else:
        claude, goose, opencode = home / ".claude", home / ".config" / "goose", home / ".config" / "opencode"
    home = Path.home() if home is None else home
    return (
        OwnMemory("Claude Code subagent memory folder", claude / "agent-memory", CLAUDE_AGENTS_STORE_PATH),
        OwnMemory("Gemini CLI memory file", home / ".gemini" / "GEMINI.md", GEMINI_STORE_PATH),
        OwnMemory("Qwen Code memory file", home / ".qwen" / "QWEN.md", QWEN_STORE_PATH),
        OwnMemory("OpenCode rules file", opencode / "AGENTS.md", OPENCODE_STORE_PATH),
        OwnMemory("Goose memory folder", goose / "memory", GOOSE_STORE_PATH),
    )


def gemini_tmp(home: Path | None = None) -> Path:
    """Gemini CLI's folder of per-project folders under ``home`` (default: this user's, moved by
    ``GEMINI_CLI_HOME`` as Gemini CLI does). Pure."""
    if home is None or home == Path.home():
        home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())
    return home / ".gemini" / "tmp"


def gemini_project(folder: Path, home: Path | None = None) -> Path | None:
    """The project whose Gemini CLI memory folder is ``folder`` (``<gemini tmp>/<slug>/memory``): the
    absolute path in the slug folder's ``.project_root``; None when ``folder`` is no such folder or the
    marker is missing, unreadable or not an absolute path. Never raises."""
    if folder.name != "memory" or folder.parent.parent != gemini_tmp(home):
        return None
    try:
        with open(folder.parent / GEMINI_PROJECT_ROOT, "rb") as marker:
            text = marker.read(_ROOT_MAX_BYTES).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return Path(text) if text and "\0" not in text and Path(text).is_absolute() else None


def gemini_project_folders(home: Path | None = None) -> tuple[Path, ...]:
    """The Gemini CLI project memory folders under ``home`` that exist and name their project, sorted.
    Never raises."""
    try:
        slugs = sorted(entry.path for entry in os.scandir(gemini_tmp(home)) if entry.is_dir())
    except OSError:
        return ()
    folders = (Path(slug) / "memory" for slug in slugs)
    return tuple(f for f in folders if f.is_dir() and gemini_project(f, home) is not None)

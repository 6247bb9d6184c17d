"""Find the memory that already lives on this machine, so ``memsync init`` can track it.

Looks at the places agents write by default (DESIGN "Vocabulary", "Agent hosts"):
``~/.agents/memory/<role>/`` role directories, ``~/.agent-memory/*.jsonl`` memory files,
``~/.claude/memory/`` (a Claude Code memory folder when it holds ``MEMORY.md``), Claude Code's projects
folder (one auto memory folder per project) and its ``autoMemoryDirectory``, Codex's memories folder,
the other hosts' own memory (``hosts.own_memory``: Claude Code's subagent memory, Gemini CLI's and Qwen
Code's memory files, OpenCode's global rules, Goose's memory folder),
and the markdown skill's legacy locations (``~/.claude/memory/<role>/``, ``~/.agents-legacy/memory/<role>/``,
and flat ``~/.claude/memory/<role>.md`` files, which need ``memsync migrate`` before they can be synced).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from memsync.commands.config_edits import overlapping, tracked
from memsync.config.file import Config
from memsync.hosts import claude_code, codex, own_memory
from memsync.projects import claude_folders, identity


class Found(Enum):
    """What kind of memory location a ``Location`` is."""

    ROLE = "role directory"
    ROLE_ROOT = "folder of role directories"
    MEMORY_ROOT = "folder of memory files"
    CLAUDE = "Claude Code memory folder"
    CLAUDE_PROJECTS = "Claude Code projects folder"
    CLAUDE_PROJECT = "Claude Code project memory folder"
    CLAUDE_AUTO = "Claude Code autoMemoryDirectory"
    CODEX = "Codex memories folder"
    # The other hosts' own memory: the kinds of ``hosts.own_memory.user_memory``.
    CLAUDE_AGENTS = "Claude Code subagent memory folder"
    GEMINI = "Gemini CLI memory file"
    QWEN = "Qwen Code memory file"
    OPENCODE = "OpenCode rules file"
    GOOSE = "Goose memory folder"
    GEMINI_PROJECT = "Gemini CLI project memory folder"
    JSONL = "memory file"
    LEGACY_ROLE = "legacy role directory"
    LEGACY_FLAT = "legacy flat file"


@dataclass(frozen=True)
class Location:
    """One memory location found on this machine.

    ``role`` is the role name for role directories (current or legacy) and flat legacy files, else None.
    ``track`` says whether ``init`` tracks it; ``note`` says why not, or what the user may do next;
    ``store_path`` is the store path to track it at when the default would not do (None: the default).
    """

    live: Path
    found: Found
    role: str | None
    track: bool
    note: str = ""
    store_path: str | None = None


# The kinds of location an agent host makes, which may appear after `memsync init` ran.
HOST_KINDS = frozenset(
    {
        Found.CLAUDE,
        Found.CLAUDE_PROJECTS,
        Found.CLAUDE_AUTO,
        Found.CODEX,
        Found.CLAUDE_AGENTS,
        Found.GEMINI,
        Found.QWEN,
        Found.OPENCODE,
        Found.GOOSE,
    }
)


def untracked_hosts(config: Config, home: Path | None = None) -> list[Location]:
    """The agent hosts' memory locations under ``home`` that ``init`` would track and that no store of
    ``config`` tracks, holds or leaves out (``exclude``): a host installed after ``memsync init``, whose
    memory syncs once ``init`` runs again; only folders that exist (a host's folder without its memory
    folder yet, such as ``~/.claude`` alone, is not named). Reads the file system only."""
    return [
        loc
        for loc in detect(home)
        if loc.track
        and loc.found in HOST_KINDS
        and loc.live.exists()
        and tracked(config, loc.live) is None
        and not any(overlapping(config, loc.live, name) for name in config.stores)
    ]


def _subdirs(path: Path) -> list[Path]:
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def detect(home: Path | None = None) -> list[Location]:
    """The memory locations under ``home`` (default: ``Path.home()``), in a stable order.

    The folders ``~/.agents/memory`` and ``~/.agent-memory`` are tracked whole, whether or not they exist
    yet (watched from their parent until they do), so a role or memory file an agent creates later syncs
    too; the store paths are the same per-role tracking would give (``roles/<role>``,
    ``memory/<name>.jsonl``). The roles and memory files found in them are listed, not tracked apart. A
    Claude Code memory folder is tracked. Legacy locations are reported, not tracked: ``memsync migrate``
    moves them to ``~/.agents/memory/<role>``, and a tracked directory that moves away would look deleted
    and sync as a deletion. A legacy copy of a role whose current directory exists is superseded (the
    markdown skill ignores it then). Reads the file system only; raises nothing for missing paths.
    """
    home = Path.home() if home is None else home
    found: list[Location] = []
    current = home / ".agents" / "memory"
    roles = {role_dir.name for role_dir in _subdirs(current)}
    found.append(Location(current, Found.ROLE_ROOT, None, True))
    found.extend(
        Location(
            role_dir, Found.ROLE, role_dir.name, False, f"synced as roles/{role_dir.name}, within {current}"
        )
        for role_dir in _subdirs(current)
    )

    memory_dir = home / ".agent-memory"
    memory_files = sorted(p for p in memory_dir.glob("*.jsonl") if p.is_file()) if memory_dir.is_dir() else []
    found.append(Location(memory_dir, Found.MEMORY_ROOT, None, True))
    found.extend(
        Location(path, Found.JSONL, None, False, f"synced as memory/{path.name}, within {memory_dir}")
        for path in memory_files
    )

    migrate = (
        f"run `memsync migrate {shlex.quote(str(home))} --apply`, "
        "then `memsync init` again to track the result"
    )
    claude = home / ".claude" / "memory"
    legacy_roots: list[Path] = []
    if (claude / "MEMORY.md").is_file():
        found.append(Location(claude, Found.CLAUDE, None, True))
    elif claude.is_dir():
        legacy_roots.append(claude)
        found.extend(
            Location(
                flat,
                Found.LEGACY_FLAT,
                flat.stem,
                False,
                f"{migrate} (it becomes {current / flat.stem}/project_briefing.md)",
            )
            for flat in sorted(claude.glob("*.md"))
            if flat.is_file()
        )
    found.extend(_agent_hosts(home, found))
    legacy_roots.append(home / ".agents-legacy" / "memory")
    for root in legacy_roots:
        for role_dir in _subdirs(root):
            role = role_dir.name
            note = (
                f"superseded by {current / role}; the skill ignores this legacy copy"
                if role in roles
                else f"legacy copy of role {role}: {migrate}"
            )
            roles.add(role)
            found.append(Location(role_dir, Found.LEGACY_ROLE, role, False, note))
    return found


def _agent_hosts(home: Path, found: list[Location]) -> list[Location]:
    """Claude Code's projects folder (when Claude Code's directory exists; tracked whole, so project
    folders created later sync too) with the memory folders in it, its ``autoMemoryDirectory`` (when it
    is not inside a location found already), Codex's memories folder (when it exists) and the other hosts'
    own memory (``own_memory.user_memory``: when the folder holding it exists; Gemini CLI's project memory
    folders that exist, ``own_memory.gemini_project_folders``)."""
    hosts: list[Location] = []
    default_home = home == Path.home()
    claude = claude_code.claude_dir() if default_home else home / ".claude"
    root = claude / "projects"
    if claude.is_dir():
        hosts.append(Location(root, Found.CLAUDE_PROJECTS, None, True))
        hosts.extend(
            Location(
                memory.live,
                Found.CLAUDE_PROJECT,
                None,
                False,
                f"synced as {memory.store_path}, within {root}",
            )
            for memory in claude_folders.expand_projects_root(root)
        )
    auto = claude_code.auto_memory_directory() if default_home else None
    tracked = [loc.live for loc in (*found, *hosts) if loc.track]
    if auto is not None and not any(auto.is_relative_to(p) or p.is_relative_to(auto) for p in tracked):
        hosts.append(
            Location(auto, Found.CLAUDE_AUTO, None, True, store_path=claude_code.AUTO_MEMORY_STORE_PATH)
        )
    memories = codex.memories_dir() if default_home else home / ".codex" / "memories"
    if memories.is_dir():
        inside_home = Path(os.path.abspath(memories)).is_relative_to(Path(os.path.abspath(home)))
        default = inside_home and memories.parent.name == ".codex"  # the default: codex/memories
        hosts.append(
            Location(
                memories, Found.CODEX, None, True, store_path=None if default else codex.MEMORIES_STORE_PATH
            )
        )
    hosts.extend(
        Location(place.live, Found(place.kind), None, True, store_path=place.store_path)
        for place in own_memory.user_memory(home)
        if place.live.parent.is_dir()  # the host is installed: its memory syncs here once it has some
    )
    gemini_home = None if default_home else home
    first: dict[str, Path] = {}  # project key -> its first folder: two checkouts of one project meet there
    for folder in own_memory.gemini_project_folders(gemini_home):
        project = own_memory.gemini_project(folder, gemini_home)
        key = identity.project_key(project) if project is not None else str(folder)
        taken = first.setdefault(key, folder)
        note = "" if taken == folder else f"the same project as {taken}, which is tracked"
        hosts.append(Location(folder, Found.GEMINI_PROJECT, None, taken == folder, note))
    return hosts

"""The memory this machine tracks, one item per memory file and role directory, each with its store and
store path (DESIGN "Vocabulary": tracked path, store path). Read by ``recall`` and the MCP server.

A track is a memory file, a role directory, or a folder of them (``~/.agents/memory``: one role per
subdirectory; ``~/.agent-memory``: one memory file per ``*.jsonl``). Where the skill fixes what a
directory is, its place tells, never its content (a peer or an agent can add a stray ``MEMORY.md`` or
``daily/`` anywhere, which must not turn a folder of roles into one role and hide every role in it):
``<dir>/.agents/memory`` is a folder of roles, each subdirectory with a role name in it is a role
directory, and ``~/.agent-memory`` is a folder of memory files only. Any other directory is a role
directory when it holds a ``MEMORY.md`` file, a ``daily/`` folder or any top-level ``*.md`` file, else a
folder whose subdirectories are role directories and whose ``*.jsonl`` files are memory files. What a
folder holds that is none of its members (a directory called ``MEMORY.md`` or ``daily`` in a folder of
roles, a directory in ``~/.agent-memory``) is no memory: it is logged once, and skipped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.config.file import Config, HostRoot, Track
from memsync.errors import MemsyncError
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.markdown.skill import DAILY_DIR, INDEX_NAME, is_role_name
from memsync.projects import claude_folders

log = logging.getLogger(__name__)

Format = Literal["jsonl", "role"]
_warned: set[Path] = set()  # the stray paths already logged by this process


@dataclass(frozen=True)
class Tracked:
    """One memory file or role directory: ``live`` here, ``store_path`` (POSIX) in store ``store``.

    ``store`` is None for the default memory file when no track maps it (it is not synced)."""

    store: str | None
    store_path: str
    live: Path
    format: Format


def is_roles_folder(folder: Path) -> bool:
    """True for a folder of roles by its place: ``<dir>/.agents/memory``."""
    return folder.name == "memory" and folder.parent.name == ".agents"


def is_memory_folder(folder: Path) -> bool:
    """True for the folder of memory files, ``~/.agent-memory`` (the default memory file's folder)."""
    return Path(os.path.abspath(folder)) == default_memory_path().parent


def is_role_dir(folder: Path) -> bool:
    """True when the directory ``folder`` is one role directory rather than a folder of them (see the
    module doc: its place decides where the skill fixes it, else its content). Never raises."""
    if is_roles_folder(folder) or is_memory_folder(folder):
        return False
    if is_roles_folder(folder.parent):
        return is_role_name(folder.name)
    if (folder / INDEX_NAME).is_file() or (folder / DAILY_DIR).is_dir():
        return True
    try:
        return any(child.suffix == ".md" and child.is_file() for child in folder.iterdir())
    except OSError:
        return False


def member_format(folder: Path, child: Path) -> Format | None:
    """What ``child``, directly inside the folder of memory ``folder``, is: a memory file (``*.jsonl``),
    a role directory, or None for anything else (hidden names included). A directory that cannot be a
    role there (a directory in ``~/.agent-memory``, one called ``MEMORY.md`` or ``daily`` in a folder of
    roles) and a markdown file in a folder of roles are logged once. Never raises."""
    if child.name.startswith("."):
        return None
    if child.suffix == ".jsonl" and child.is_file():
        return "jsonl"
    if not child.is_dir():
        # A markdown file in a folder of roles (a peer's MEMORY.md) belongs to no role: say so.
        if not (is_roles_folder(folder) and child.suffix.lower() == ".md"):
            return None
    elif not is_memory_folder(folder) and (is_role_name(child.name) or not is_roles_folder(folder)):
        return "role"
    if child not in _warned:
        _warned.add(child)
        log.warning(
            "%s is not a role (a role is a plain-named directory in a folder of roles): not read as memory",
            child,
        )
    return None


def check_new_role(path: Path) -> None:
    """Check that a new role directory may be created at ``path``: its name is a role name
    (``is_role_name``) and its folder is not the folder of memory files. Raises MemsyncError otherwise."""
    if not is_role_name(path.name) or is_memory_folder(path.parent):
        raise MemsyncError(
            f"handoff: {path} cannot be a new role: a role is a plain name (not hidden, no .md nor .jsonl, "
            "not daily) in a folder of roles, never in the folder of memory files. Give a role name in "
            "~/.agents/memory, or a *.jsonl memory file"
        )


def _members(store: str, track: Track) -> list[Tracked]:
    """The memory files and role directories of one track (a folder of them gives one per member)."""
    live = track.live
    if not live.exists():
        return []
    if live.is_file():  # a host's own memory file (Gemini CLI's GEMINI.md) is synced, not a memory file
        return [Tracked(store, track.store_path, live, "jsonl")] if live.suffix == ".jsonl" else []
    if not live.is_dir() or is_role_dir(live):
        return [Tracked(store, track.store_path, live, "role")]
    found = []
    for child in sorted(live.iterdir()):
        fmt = None if child in track.excludes else member_format(live, child)
        if fmt is not None:
            found.append(Tracked(store, f"{track.store_path.strip('/')}/{child.name}", child, fmt))
    return found


def tracked_memory(config: Config | None) -> list[Tracked]:
    """Every memory file and role directory ``config`` tracks (store order, then track order), plus the
    default memory file (``~/.agent-memory/<user>.jsonl``) when it exists and no track maps it. ``None``
    (no config yet) gives the default memory file alone. Never raises on odd directories."""
    found: list[Tracked] = []
    for store in config.stores.values() if config is not None else ():
        for track in store.tracks:
            found.extend(_members(store.name, track))
    default = default_memory_path()
    if default.is_file() and locate(config, default) is None:
        found.append(Tracked(None, default.name, default, "jsonl"))
    return found


def locate(config: Config | None, live: Path) -> tuple[str, str] | None:
    """(store name, store path) of the live path ``live`` (a file or directory inside a track), from the
    most specific track that maps it; None when no track does."""
    path = Path(os.path.abspath(live.expanduser()))
    best: tuple[int, str, str] | None = None
    for store in config.stores.values() if config is not None else ():
        for track in store.tracks:
            if not (path == track.live or path.is_relative_to(track.live)):
                continue
            if any(path == ex or path.is_relative_to(ex) for ex in track.excludes):
                continue
            rel = path.relative_to(track.live).as_posix()
            store_path = track.store_path.strip("/") + ("" if rel == "." else f"/{rel}")
            depth = len(track.live.parts)
            if best is None or depth > best[0]:
                best = (depth, store.name, store_path)
    return None if best is None else (best[1], best[2])


def tracks_stale(store_dir: Path, roots: Iterable[HostRoot], tracked: Iterable[Path]) -> bool:
    """True when the tracks expanded from the host ``roots`` of the store at ``store_dir`` are stale: a
    project memory folder appeared or went (``memory_folders_differ``, against the ``tracked`` live
    paths), or the store's project keys are not the ``held`` ones any more (a merge brought a peer's
    project, whose folder here without memory is tracked then). One listing per root and its store
    folder; never raises."""
    lives = list(tracked)
    return any(
        claude_folders.memory_folders_differ(root.live, root.excludes, lives)
        or claude_folders.store_keys(store_dir, root.prefix) != root.held
        for root in roots
    )

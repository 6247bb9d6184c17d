"""The memory this machine tracks, one item per memory file and role directory, each with its store and
store path (DESIGN "Vocabulary": tracked path, store path). Read by ``recall`` and the MCP server.

A track is a memory file, a role directory, or a folder of them (``~/.agents/memory``: one role per
subdirectory; ``~/.agent-memory``: one memory file per ``*.jsonl``). A directory is a role directory when
it holds ``MEMORY.md``, a ``daily/`` folder or any top-level ``*.md`` file; any other directory is a folder
whose subdirectories are role directories and whose ``*.jsonl`` files are memory files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.config import Config, Track
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.markdown.skill import DAILY_DIR, INDEX_NAME

Format = Literal["jsonl", "role"]


@dataclass(frozen=True)
class Tracked:
    """One memory file or role directory: ``live`` here, ``store_path`` (POSIX) in store ``store``.

    ``store`` is None for the default memory file when no track maps it (it is not synced)."""

    store: str | None
    store_path: str
    live: Path
    format: Format


def _is_role(folder: Path) -> bool:
    if (folder / INDEX_NAME).exists() or (folder / DAILY_DIR).is_dir():
        return True
    try:
        return any(child.suffix == ".md" and child.is_file() for child in folder.iterdir())
    except OSError:
        return False


def _members(store: str, track: Track) -> list[Tracked]:
    """The memory files and role directories of one track (a folder of them gives one per member)."""
    live = track.live
    if not live.exists():
        return []
    if live.is_file():
        return [Tracked(store, track.store_path, live, "jsonl")]
    if not live.is_dir() or _is_role(live):
        return [Tracked(store, track.store_path, live, "role")]
    found = []
    for child in sorted(live.iterdir()):
        if child.name.startswith(".") or child in track.excludes:
            continue
        rel = f"{track.store_path.strip('/')}/{child.name}"
        if child.is_dir():
            found.append(Tracked(store, rel, child, "role"))
        elif child.suffix == ".jsonl" and child.is_file():
            found.append(Tracked(store, rel, child, "jsonl"))
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

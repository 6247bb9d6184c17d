"""Which project each of Claude Code's project folders belongs to, and the tracks a projects folder gives.

Claude Code names a project's folder by its sanitized path (``hosts.claude_code.sanitize``), which cannot
be reversed (``/src/my.shop`` and ``/src/my-shop`` give the same name), so the project path is recovered
from the session transcripts Claude writes beside the memory folder (each line records the session's
``cwd``), else by finding an existing directory whose sanitized path is the folder's name. A folder's
store path comes from its project's identity (``memsync.projects.identity``), not from its name, so the
same project meets on machines whose checkout paths differ (DESIGN "Agent hosts").
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memsync.hosts.claude_code import (
    MEMORY_DIR,
    STORE_PREFIX,
    all_folders,
    is_projects_root,
    project_folders,
    sanitize,
)
from memsync.projects.identity import identity_name, legacy_keys, local_key, project_key

log = logging.getLogger(__name__)

# Claude Code cuts a sanitized name at 200 characters and appends a hash of the full path.
_MAX_SANITIZED = 200
_TRANSCRIPTS_READ = 5
_TRANSCRIPT_HEAD_BYTES = 64 * 1024
_SEARCH_LISTINGS = 200
_CWD = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')


def _matches(name: str, path: str) -> bool:
    sanitized = sanitize(path)
    if len(sanitized) <= _MAX_SANITIZED:
        return name == sanitized
    return name.startswith(sanitized[:_MAX_SANITIZED])


def store_keys(store_dir: Path, prefix: str = STORE_PREFIX) -> frozenset[str]:
    """The names under ``<prefix>`` in the store work tree ``store_dir``: the project keys a store holds
    memory for (and legacy folder names). Empty when there is none. One directory listing; never
    raises."""
    try:
        return frozenset(
            entry.name for entry in os.scandir(store_dir / prefix) if not entry.name.startswith(".")
        )
    except OSError:
        return frozenset()


def project_path(folder: Path) -> Path | None:
    """The project (checkout) path whose memory ``folder`` (``<projects>/<name>``) holds, or None.

    First from the transcripts in ``folder`` (the newest few, their first 64 KB): a ``cwd`` whose
    sanitized form is the folder's name. Else an existing directory on this machine whose sanitized path
    is the name. Never raises; reads are bounded.
    """
    name = folder.name
    found = _from_transcripts(folder, name)
    return found if found is not None else _search(name)


def _from_transcripts(folder: Path, name: str) -> Path | None:
    try:
        transcripts = sorted(
            (entry for entry in os.scandir(folder) if entry.name.endswith(".jsonl") and entry.is_file()),
            key=lambda entry: entry.stat().st_mtime,
            reverse=True,
        )[:_TRANSCRIPTS_READ]
    except OSError:
        return None
    for entry in transcripts:
        try:
            with open(entry.path, "rb") as handle:
                head = handle.read(_TRANSCRIPT_HEAD_BYTES)
        except OSError:
            continue
        for match in _CWD.finditer(head):
            try:
                cwd = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(cwd, str) and cwd and _matches(name, cwd):
                return Path(cwd)
    return None


def _search(name: str) -> Path | None:
    """An existing absolute directory whose sanitized path is ``name``: a walk from ``/`` that follows
    only entries whose sanitized path is a prefix of ``name`` (at most ``_SEARCH_LISTINGS`` listings);
    None when there is none or more than one."""
    found: list[Path] = []
    budget = [_SEARCH_LISTINGS]

    def walk(directory: Path, sanitized: str) -> None:
        if budget[0] <= 0 or len(found) > 1:
            return
        budget[0] -= 1
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            candidate = f"{sanitized}-{sanitize(entry.name)}"
            if not (name == candidate or name.startswith(candidate + "-")):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not is_dir:
                continue
            if name == candidate:
                found.append(Path(entry.path))
            else:
                walk(Path(entry.path), candidate)

    if name.startswith("-") and len(name) <= _MAX_SANITIZED:
        walk(Path("/"), "")
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class ProjectMemory:
    """One project's memory folder (``live``) and where it goes in a store: ``store_path`` from the
    project's identity, ``legacy`` the store paths earlier memsync versions (or this one, before the
    project path was known) used for it."""

    live: Path
    store_path: str
    legacy: tuple[str, ...]


def folder_key(folder: Path) -> str:
    """The store path component of project folder ``folder``: the key of its project
    (``memsync.projects.identity.project_key``: a checkout gone has no remote, so its key is this machine's),
    else, when the project path cannot be recovered, this machine's key for the folder's own name.
    Never raises."""
    return _key(folder, project_path(folder))


def _key(folder: Path, project: Path | None) -> str:
    return local_key(folder) if project is None else project_key(project)


def project_memory(memory: Path, prefix: str = STORE_PREFIX) -> ProjectMemory:
    """Where the memory folder ``memory`` (``<projects>/<name>/memory``, possibly a path inside it) goes:
    ``<prefix>/<project key>[/<rest>]``. Its legacy store paths (under the default prefix only): the
    home-relative path earlier versions gave it, the folder-name key used while the project path was
    unknown, and the keys earlier versions gave its project (``identity.legacy_keys``). Never raises."""
    folder = _folder_of(memory)
    project = project_path(folder)
    key = _key(folder, project)
    rest = memory.relative_to(folder / MEMORY_DIR).as_posix()
    suffix = "" if rest == "." else f"/{rest}"
    store_path = f"{prefix}/{key}{suffix}"
    legacy: list[str] = []
    if prefix == STORE_PREFIX:
        legacy.append(f"{STORE_PREFIX}/{folder.name.lstrip('.') or folder.name}/{MEMORY_DIR}{suffix}")
        legacy.append(f"{STORE_PREFIX}/{identity_name(folder.name)}{suffix}")
        old_keys = legacy_keys(project) if project is not None else ()
        legacy.extend(f"{STORE_PREFIX}/{old}{suffix}" for old in old_keys)
    return ProjectMemory(memory, store_path, tuple(dict.fromkeys(p for p in legacy if p != store_path)))


def _folder_of(memory: Path) -> Path:
    """The project folder (``<projects>/<name>``) of a path at or inside its ``memory`` directory."""
    root = next(p for p in memory.parents if is_projects_root(p))
    return root / memory.relative_to(root).parts[0]


def expand_projects_root(
    root: Path, prefix: str = STORE_PREFIX, excludes: Sequence[Path] = (), held: frozenset[str] = frozenset()
) -> list[ProjectMemory]:
    """One ``ProjectMemory`` per project folder with a memory directory under ``root`` (sorted by folder
    name), but the folders ``excludes`` names; and per folder without one whose project key the store
    holds (``held``: ``store_keys``), so that peers' memory of that project is delivered into it (its
    ``memory`` directory created): Claude Code creates the folder at its first session in a project and
    loads the folder's memory at the next. Two folders of one project (two clones, not worktrees) cannot
    share a store path: the second gets ``<key>@<folder name>``, and a warning says so. Reads the
    transcripts and the checkout's git config of a folder without memory only while ``held`` has a key
    no folder with memory takes. Never raises. Implements DESIGN "Agent hosts"."""
    found: list[ProjectMemory] = []
    used: set[str] = set()
    folders = all_folders(root)
    with_memory = {folder for folder in folders if (folder / MEMORY_DIR).is_dir()}
    for folder in folders:
        if folder in excludes or folder not in with_memory:
            continue
        memory = project_memory(folder / MEMORY_DIR, prefix)
        if memory.store_path in used:
            alone = f"{memory.store_path}@{identity_name(folder.name)}"
            log.warning(
                "%s: another Claude Code folder of the same project syncs as %s; this one syncs as %s",
                memory.live,
                memory.store_path,
                alone,
            )
            memory = ProjectMemory(memory.live, alone, ())
        used.add(memory.store_path)
        found.append(memory)
    wanted = {f"{prefix}/{key}" for key in held} - used
    for folder in folders:
        if not wanted or folder in with_memory or folder in excludes or project_path(folder) is None:
            continue  # a folder whose project is unknown matches a store path by its name alone
        memory = project_memory(folder / MEMORY_DIR, prefix)
        if memory.store_path in wanted:
            wanted.discard(memory.store_path)
            found.append(memory)
    return sorted(found, key=lambda memory: memory.live)


def memory_folders_differ(root: Path, excludes: Sequence[Path], tracked: Iterable[Path]) -> bool:
    """True when the project memory folders under ``root`` (but ``excludes``) are not the ``tracked``
    ones: a folder appeared or went after the tracks were read (the daemon then reads them again). A
    tracked memory folder not created yet in its project folder (``expand_projects_root``'s ``held``:
    deliver creates it) counts as there. One directory listing."""
    here = {live for live in tracked if live.is_relative_to(root)}
    found = {folder / MEMORY_DIR for folder in project_folders(root) if folder not in excludes}
    found |= {live for live in here if not live.exists() and live.parent.is_dir()}
    return found != here

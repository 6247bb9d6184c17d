"""The facts `memsync status` lists that are read from the store itself: held-back secrets (I6: named),
both-kept files, files set aside for a directory, store content no track maps here, the store's size.
A full walk for `memsync status`; a cycle brings its last facts up to date from what it changed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memsync.base.layout import is_append_only, is_aside, is_store_meta
from memsync.base.paths import STATE_DB, StoreLayout
from memsync.config.file import StoreConfig, Track
from memsync.cycle.report import CycleReport
from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from memsync.store.access import meta_dir
from memsync.sync.files import Emptied, emptied_advice
from memsync.sync.records import HeldLine, digest
from memsync.sync.state import SyncState
from memsync.tracks.listing import untracked_group

_BOTH_KEPT = BOTH_KEPT_NOTE_PREFIX.encode("utf-8")
# The facts read from the store, kept up to date by each cycle; ``git_bytes`` is the part of
# ``size_bytes`` that is git's own (objects, index).
_FACTS = ("both_kept", "set_aside", "untracked", "size_bytes", "git_bytes")


def facts_after(store_cfg: StoreConfig, old: dict[str, Any], report: CycleReport | None) -> dict[str, Any]:
    """The store facts of ``status.json``: those of the last cycle brought up to date with the store paths
    this cycle changed (``report.store_changes``: work bounded by the change); a walk of the store only
    when there is nothing to start from (first cycle, tracks changed, a cycle failed in between).
    Held-back secrets always come from the sync state. ``facts_head``/``facts_tracks`` say which commit
    and which tracks the facts describe."""
    tracks = digest(repr(store_cfg.tracks).encode("utf-8"))[:16]
    known = old.get("facts_tracks") == tracks and all(key in old for key in _FACTS)
    if report is None:  # a failed cycle: what it changed is unknown; the next one starts from scratch
        return {
            **{key: old.get(key) for key in _FACTS},
            "facts_head": None,
            "held_back_secrets": _held(store_cfg),
        }
    changes = report.store_changes
    if known and old.get("facts_head") == changes.old and changes.paths is not None:
        facts = {key: old[key] for key in _FACTS}
        if changes.paths:  # else an idle cycle: nothing in the store to read again
            facts = _updated(facts, store_cfg, changes.paths)
        facts["held_back_secrets"] = _held(store_cfg, report.held)
    else:
        facts = {**store_facts(store_cfg), "git_bytes": _git_bytes(store_cfg)}
    return {**facts, "facts_head": changes.new, "facts_tracks": tracks}


def _updated(facts: dict[str, Any], store_cfg: StoreConfig, changed: dict[str, int | None]) -> dict[str, Any]:
    """``facts`` with the store paths ``changed`` (path -> size before, None: absent) read again."""
    root = store_cfg.path
    both_kept, set_aside, untracked = (
        set(facts["both_kept"]),
        set(facts["set_aside"]),
        set(facts["untracked"]),
    )
    size = int(facts["size_bytes"]) - int(facts["git_bytes"])
    folded = tuple(old for track in store_cfg.tracks for old in track.legacy)
    for rel, before in changed.items():
        if is_store_meta(rel):
            continue
        path = root / rel
        try:
            now: int | None = path.lstat().st_size
        except OSError:
            now = None
        size += (now or 0) - (before or 0)
        live = live_path(store_cfg.tracks, rel)
        shown = str(live or rel)
        both_kept.discard(shown)
        set_aside.discard(shown)
        if now is not None and not is_append_only(rel) and _has_both_kept(path):
            both_kept.add(shown)
        if now is not None and is_aside(rel):
            set_aside.add(shown)
        if live is None and not any(rel.startswith(old + "/") or rel == old for old in folded):
            group = untracked_group(rel, store_cfg.tracks)
            if now is not None:
                untracked.add(group)
            elif not _holds_files(root / group):
                untracked.discard(group)
    git_bytes = _git_bytes(store_cfg)
    return {
        "both_kept": sorted(both_kept),
        "set_aside": sorted(set_aside),
        "untracked": sorted(untracked),
        "size_bytes": size + git_bytes,
        "git_bytes": git_bytes,
    }


def _holds_files(path: Path) -> bool:
    """True when ``path`` is a file or a directory with a file somewhere under it."""
    if path.is_file():
        return True
    return any(files for _, _, files in os.walk(path))


def _git_bytes(store_cfg: StoreConfig) -> int:
    """The bytes of the store's git objects and index: its packs and loose objects (as many as
    ``git gc --auto`` lets pile up, whatever the number of files tracked)."""
    git_dir = StoreLayout(store_cfg.path).git_dir
    size = 0
    for directory in [git_dir, git_dir / "objects" / "pack", *_loose_dirs(git_dir / "objects")]:
        try:
            with os.scandir(directory) as listing:
                size += sum(entry.stat(follow_symlinks=False).st_size for entry in listing if entry.is_file())
        except OSError:
            continue
    return size


def _loose_dirs(objects: Path) -> list[Path]:
    try:
        with os.scandir(objects) as listing:
            return [Path(entry.path) for entry in listing if len(entry.name) == 2 and entry.is_dir()]
    except OSError:
        return []


def store_facts(store_cfg: StoreConfig) -> dict[str, Any]:
    """What `status` lists that is read from the store itself: held-back secrets, both-kept files, files
    moved aside for a directory, store content no track maps here, and the store's size in bytes."""
    held = _held(store_cfg)
    both_kept: list[str] = []
    set_aside: list[str] = []
    untracked: set[str] = set()
    size = 0
    root = store_cfg.path
    git_dir = StoreLayout(root).git_dir
    # Legacy store paths still hold what machines not upgraded yet sync there; they are folded, not lost.
    folded = tuple(old for track in store_cfg.tracks for old in track.legacy)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        in_git = here.is_relative_to(git_dir)  # once per directory: thousands of files share one
        for name in filenames:
            path = here / name
            try:
                size += path.lstat().st_size
            except OSError:
                continue
            if in_git:
                continue
            rel = path.relative_to(root).as_posix()
            if is_store_meta(rel):
                continue
            if live_path(store_cfg.tracks, rel) is None and not any(
                rel.startswith(old + "/") or rel == old for old in folded
            ):
                untracked.add(untracked_group(rel, store_cfg.tracks))
            if not is_append_only(rel) and _has_both_kept(path):
                both_kept.append(str(live_path(store_cfg.tracks, rel) or rel))
            if is_aside(rel):
                set_aside.append(str(live_path(store_cfg.tracks, rel) or rel))
        dirnames.sort()
    return {
        "held_back_secrets": held,
        "both_kept": sorted(both_kept),
        "set_aside": sorted(set_aside),
        "untracked": sorted(untracked),
        "size_bytes": size,
    }


def _held(store_cfg: StoreConfig, held: Sequence[tuple[str, HeldLine]] | None = None) -> list[dict[str, Any]]:
    """The lines the secret scanner keeps on this machine (``held``, else read from the sync state): live
    file, store path, line, detector."""
    if held is None:
        if not (meta_dir(store_cfg) / STATE_DB).exists():
            return []
        with SyncState(meta_dir(store_cfg)) as state:
            held = state.held()
    return [
        {
            "file": str(live_path(store_cfg.tracks, rel) or rel),
            "store_path": rel,
            "line": line.line,
            "detector": line.detector,
        }
        for rel, line in held
    ]


def emptied_folders(store_cfg: StoreConfig) -> list[dict[str, Any]]:
    """The folders of ``store_cfg``'s tracks held as emptied here (``sync.files.Emptied``): each folder,
    the number of files the sync state knows in it, and what to do."""
    if not (meta_dir(store_cfg) / STATE_DB).exists():
        return []
    with SyncState(meta_dir(store_cfg)) as state:
        found = {
            folder: count
            for track in store_cfg.tracks
            for folder, count in Emptied(track, state).all().items()
        }
    return [
        {"folder": str(folder), "files": count, "advice": emptied_advice(folder, count)}
        for folder, count in sorted(found.items())
    ]


def _has_both_kept(path: Path) -> bool:
    try:
        return _BOTH_KEPT in path.read_bytes()
    except OSError:
        return False


def live_path(tracks: tuple[Track, ...], rel: str) -> Path | None:
    """The live path of store path ``rel`` on this machine, None when no track maps it (or the track
    leaves it out: ``Track.excludes``)."""
    for track in tracks:
        prefix = track.store_path.strip("/")
        if rel == prefix:
            return track.live
        if rel.startswith(prefix + "/"):
            live = track.live / rel[len(prefix) + 1 :]
            return None if any(live.is_relative_to(p) for p in track.excludes) else live
    return None

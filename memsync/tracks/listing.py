"""What ``memsync status`` says about tracks: each tracked path with its store path and file count, and
how store content that no track maps here is grouped."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from memsync.base.layout import IGNORED_DIRS, is_ignored
from memsync.config.file import StoreConfig, Track


def list_tracks(store_cfg: StoreConfig) -> list[dict[str, Any]]:
    """One row per track of ``store_cfg``, in config order: ``path`` (live), ``store_path``, ``files``
    (how many files it holds here that memsync syncs: ignored names and excluded paths do not count),
    ``exists`` and ``excludes`` (live paths left out of it). Reads the file system only; never raises."""
    return [
        {
            "path": str(track.live),
            "store_path": track.store_path,
            "files": _count_files(track),
            "exists": track.live.exists(),
            "excludes": [str(path) for path in track.excludes],
        }
        for track in store_cfg.tracks
    ]


def _count_files(track: Track) -> int:
    if track.live.is_file():
        return 1
    count = 0
    for dirpath, dirnames, filenames in os.walk(track.live):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS and here / d not in track.excludes]
        count += sum(1 for name in filenames if not is_ignored(name) and here / name not in track.excludes)
    return count


def untracked_group(rel: str, tracks: tuple[Track, ...]) -> str:
    """How `status` names untracked store path ``rel``: by its top two directories (``roles/x/``), or
    deeper where a track of this machine lies inside those (``projects/p/b/`` when only
    ``projects/p/a`` is tracked), so a listed group never holds tracked content."""
    parts = PurePosixPath(rel).parts
    tracked = [PurePosixPath(track.store_path.strip("/")) for track in tracks]
    for depth in range(2, len(parts)):
        group = PurePosixPath(*parts[:depth])
        if not any(path.is_relative_to(group) for path in tracked):
            return group.as_posix() + "/"
    return rel

"""A file meeting a directory of the same name, between the live files and the store (DESIGN
"Deletions"): what stands in the way, and how it is reported."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.sync.files import TrackFile


@dataclass(frozen=True)
class Clash:
    """A file meeting a directory of the same name: the live files have one where the store has the other
    (a peer made it so; the store's merge settles such a clash between peers, see ``store``, but cannot
    rename a live file). ``path`` is the store path, ``live`` the live path here, ``here`` what the live
    path is. Nothing under ``path`` syncs here, and nothing is deleted, until the user renames it."""

    path: str
    live: Path
    here: Literal["file", "directory"]

    def advice(self) -> str:
        """One line for the user: what meets what, and what to rename."""
        there = "directory" if self.here == "file" else "file"
        return (
            f"{self.live} is a {self.here} here but a {there} in the store ({self.path}): nothing there "
            f"syncs until you rename {self.live} or move it away (then the store's {there} arrives, and "
            f"your {self.here} syncs under its new name)"
        )


def clash_of(f: TrackFile) -> Clash | None:
    """The file meeting a directory that keeps ``f`` from syncing here (see ``Clash``), else None: one
    side has ``f`` as a file and the other a directory at its path or a file above it."""
    live_file = f.live.is_file()
    if live_file == f.store.is_file():
        return None
    up = _obstacle(f.store, f.label) if live_file else _obstacle(f.live, f.label)
    if up is None:
        return None
    # Above ``f`` the side holding the file has a directory; at ``f`` itself, the file.
    here: Literal["file", "directory"] = "directory" if (up > 0) == live_file else "file"
    if up == 0:
        return Clash(f.rel, f.live, here)
    return Clash(f.rel.rsplit("/", up)[0], f.live.parents[up - 1], here)


def store_in_the_way(f: TrackFile) -> bool:
    """True when the live file ``f`` cannot be published because the store has a directory at its path or
    a file above it (a ``Clash``). An empty store directory in the way (git keeps no directories: one is
    left when a peer deletes the files in it) is removed instead."""
    if not f.live.is_file() or f.store.is_file():
        return False
    up = _obstacle(f.store, f.label)
    return up is not None and not (up == 0 and _remove_empty_dirs(f.store))


def _obstacle(path: Path, label: str) -> int | None:
    """What keeps a regular file from being at ``path``, the file ``label`` of a track ("" for a tracked
    file): how many levels above ``path`` a non-directory stands (the track's root included), 0 when
    ``path`` itself is a directory; None when nothing does."""
    for up in range(label.count("/") + 1 if label else 0, 0, -1):
        try:
            mode = path.parents[up - 1].stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISDIR(mode):
            return up
    return 0 if path.is_dir() else None


def _remove_empty_dirs(root: Path) -> bool:
    """Remove the store directory ``root`` when it holds nothing but directories; True when it is gone."""
    for here, _dirs, files in os.walk(root, topdown=False):
        if files:
            return False
        try:
            os.rmdir(here)
        except OSError:
            return False
    return not root.exists()

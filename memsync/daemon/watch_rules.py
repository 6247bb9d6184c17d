"""What the watcher's handler compares an event's path with (DESIGN "One sync cycle" step 1): tracked
paths, the refs of local-path remotes, host roots; replaced whole on each refresh, never mutated, so
the observer threads read it without a lock."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.base.layout import is_ignored

Source = Literal["local", "remote", "layout"]

# In a host root (one folder per project), the folder whose appearance makes a project folder a track.
LAYOUT_CHILD = "memory"


@dataclass(frozen=True)
class Rules:
    """What the handler thread compares event paths with; replaced whole, never mutated."""

    dirs: tuple[Path, ...] = ()
    files: frozenset[Path] = frozenset()
    pending: tuple[Path, ...] = ()
    ref_dirs: tuple[Path, ...] = ()
    packed_refs: frozenset[Path] = frozenset()
    pending_refs: tuple[Path, ...] = ()
    layout: tuple[Path, ...] = ()

    def classify(self, raw: str) -> Source | None:
        """ "local", "remote", "layout" or None (irrelevant) for the absolute path ``raw`` of an event."""
        path = Path(raw)
        if path in self.files:
            return "local"
        for root in self.dirs:
            if path == root or (
                path.is_relative_to(root) and not is_ignored(path.relative_to(root).as_posix())
            ):
                return "local"
        if any(_on_the_way(path, target) for target in self.pending):
            return "local"
        if path in self.packed_refs:
            return "remote"
        if any(path.is_relative_to(refs) and not path.name.endswith(".lock") for refs in self.ref_dirs):
            return "remote"
        if any(_on_the_way(path, target) for target in self.pending_refs):
            return "remote"
        for root in self.layout:
            if path.parent == root or (path.name == LAYOUT_CHILD and path.parent.parent == root):
                return "layout"
            if root.is_relative_to(path):
                return "layout"
        return None


def _on_the_way(path: Path, target: Path) -> bool:
    """True when ``path`` is ``target``, one of its ancestors or inside it (a missing target appearing)."""
    return path == target or target.is_relative_to(path) or path.is_relative_to(target)

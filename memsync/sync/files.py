"""The files of a track: in the live directory, in the store copy, or known to the sync state (DESIGN
"Vocabulary": tracked path, store path), each with its live and store path."""

from __future__ import annotations

import functools
import os
import shlex
import stat
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memsync.base.layout import is_ignored
from memsync.config.file import Track
from memsync.sync.state import SyncState

# Every cycle checks every label of every track against the ignore patterns, twice (live and store walk):
# the labels repeat, and the patterns cost ~15 µs per label.
_is_ignored = functools.lru_cache(maxsize=1 << 16)(is_ignored)


@dataclass(frozen=True)
class TrackFile:
    """One tracked file: store path, live path, store worktree path, label within the track ("" for a
    tracked file)."""

    rel: str
    live: Path
    store: Path
    label: str


def track_files(
    track: Track, worktree: Path, state: SyncState | None, labels: Collection[str] | None = None
) -> list[TrackFile]:
    """The files of ``track`` (store worktree ``worktree``), sorted: in the live directory, in the store
    copy, or known to ``state`` (None, for a preview that opens no state: those of the two sides alone;
    only with ``labels`` None); not those under ``track.excludes`` (another store's track owns them, live
    and store side alike), nor any reached through a symlinked directory. ``labels``: only these paths
    relative to the track (what changed, from watch events or git's diff; "" names a tracked file),
    found without a walk, each kept by the same rules as the walk keeps a file; None: every file.
    Reads the file system only."""
    prefix = track.store_path.strip("/")
    store_root = worktree / prefix
    if _is_file_track(track, worktree):
        return [TrackFile(prefix, track.live, store_root, "")] if labels is None or labels else []
    if labels is None:
        found = _walk(track.live, follow_inside=True) | _walk(store_root, follow_inside=False)
        # _walk skipped the ignored paths already; only those known to the state alone need the check.
        found |= {
            label
            for p in (state.paths(prefix) if state is not None else ())
            if p != prefix
            if (label := p[len(prefix) + 1 :]) not in found and not _is_ignored(label)
        }
    else:
        assert state is not None
        found = {label for label in labels if label and _listed(track.live, store_root, label, state, prefix)}
    # Thousands of files share a few directories: check each directory for symlinks once.
    through_symlink = functools.cache(functools.partial(_through_symlink, track.live))
    return [
        TrackFile(f"{prefix}/{label}", track.live / label, store_root / label, label)
        for label in sorted(found)
        if ".." not in label.split("/")
        and not through_symlink(label.rpartition("/")[0])
        and not any((track.live / label).is_relative_to(owned) for owned in track.excludes)
    ]


def unavailable(f: TrackFile) -> Path | None:
    """The live path that makes ``f`` unavailable here, else None: a directory on its way (the track's root
    included) that is not a listable directory (a file, a dangling or looping symlink, unreadable; a
    symlinked directory inside the track), or ``f`` itself being neither missing, a regular file nor a
    directory (a dangling or looping symlink, a FIFO). Nothing of an unavailable file is deleted or
    delivered (DESIGN "Deletions", I1): it is not an agent's deletion. A directory that is simply gone
    makes nothing unavailable (its files were deleted; a vanished root is the cycle's). Never raises."""
    if f.live.is_file():
        return None  # the common case: one stat
    parts = PurePosixPath(f.label).parts
    dirs = [f.live.parents[len(parts) - 1 - i] for i in range(len(parts))]  # the root first
    for here in dirs:
        try:
            mode = here.lstat().st_mode
            if here == dirs[0] and stat.S_ISLNK(mode):
                mode = here.stat().st_mode  # the track's root may be a symlink to the real folder
        except FileNotFoundError:
            return here if here.is_symlink() else None
        except (OSError, RuntimeError):  # a symlink loop: Python 3.11 raises RuntimeError
            return here
        if not stat.S_ISDIR(mode) or not os.access(here, os.R_OK | os.X_OK):
            return here
    try:
        mode = f.live.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return f.live
    # A file an agent turned into a directory of files is a change that syncs (the file's deletion, the
    # directory's files); any other non-regular file in its place (a dangling symlink, a FIFO) is not.
    return None if stat.S_ISDIR(mode) else f.live


class Emptied:
    """The folders of one track (its root, a folder in it) that are empty here while the sync state knows
    more than one whole file under them as last synced present: a drive not mounted yet over its mount
    point, a folder swapped for a symlink and back, a folder emptied at once. Their files' absence is no
    deletion until the user says so (DESIGN "Deletions", I1): nothing under such a folder is published
    or delivered. One per pass (it remembers what it looked at); reads the file system and the state."""

    def __init__(self, track: Track, state: SyncState) -> None:
        self._track = track
        self._state = state
        self._counts: dict[str, int] | None = None
        self._empty: dict[str, bool] = {}

    def folder(self, f: TrackFile) -> tuple[Path, int] | None:
        """The emptied folder ``f`` lies in (the one nearest the root) and the number of files the state
        knows under it, else None (``f`` is here, or its folders hold files, or are gone). Never
        raises."""
        if not f.label or f.live.exists() or f.live.is_symlink():
            return None
        parts = PurePosixPath(f.label).parts[:-1]
        for depth in range(len(parts) + 1):
            label = "/".join(parts[:depth])
            folder = self._track.live / label if label else self._track.live
            if self._is_empty(label, folder):
                count = self._known().get(label, 0)
                if count > 1:
                    return folder, count
        return None

    def all(self) -> dict[Path, int]:
        """Every emptied folder of the track (none inside another), with the number of files the state
        knows under it."""
        taken: dict[str, tuple[Path, int]] = {}
        for label, count in sorted(self._known().items()):  # a folder sorts before the folders in it
            if count < 2 or any(not t or label.startswith(t + "/") for t in taken):
                continue
            folder = self._track.live / label if label else self._track.live
            if self._is_empty(label, folder):
                taken[label] = (folder, count)
        return dict(taken.values())

    def _is_empty(self, label: str, folder: Path) -> bool:
        if label not in self._empty:
            try:
                is_dir = folder.is_dir() and (not label or not folder.is_symlink())
            except OSError:
                is_dir = False
            self._empty[label] = is_dir and not _holds_a_file(folder)
        return self._empty[label]

    def _known(self) -> dict[str, int]:
        """Per folder label ("" the root): the whole files the state knows under it as synced present."""
        if self._counts is None:
            prefix = self._track.store_path.strip("/")
            counts: dict[str, int] = {}
            for path in self._state.paths(prefix):
                record = self._state.get_whole(path)
                if path == prefix or record is None or not record.synced_known or record.synced is None:
                    continue
                parts = PurePosixPath(path[len(prefix) + 1 :]).parts[:-1]
                for depth in range(len(parts) + 1):
                    label = "/".join(parts[:depth])
                    counts[label] = counts.get(label, 0) + 1
            self._counts = counts
        return self._counts


def emptied_advice(folder: Path, count: int) -> str:
    """What to say of an emptied folder (``files.Emptied``): the cycle's warning and `memsync status`'s
    line."""
    return (
        f"{folder} is empty but the store has {count} files synced from it: held, none is deleted or "
        f"delivered. Run `memsync held delete {shlex.quote(str(folder))}` to delete them everywhere or "
        f"`memsync held restore {shlex.quote(str(folder))}` to bring them back"
    )


def _holds_a_file(folder: Path) -> bool:
    """Whether ``folder`` holds a file (not an ignored one) at any depth; stops at the first. An
    unreadable folder counts as holding one (it is not known to be empty)."""
    return any(True for _ in _entries(folder))  # None, an unreadable folder, counts too


def _listed(live_root: Path, store_root: Path, label: str, state: SyncState, prefix: str) -> bool:
    """Whether a full walk (``_walk`` of both sides, the state's paths) would list ``label``."""
    parts = label.split("/")
    if any(_is_ignored("/".join(parts[: i + 1])) for i in range(len(parts))):
        return False
    if _regular(live_root, label, follow_inside=True) or _regular(store_root, label, follow_inside=False):
        return True
    rel = f"{prefix}/{label}"
    return (
        state.get(rel) is not None
        or state.pending_publish(rel) is not None
        or (state.pending_delivery(rel) is not None)
    )


def _regular(root: Path, label: str, *, follow_inside: bool) -> bool:
    """``_walk``'s test of one path: a regular file, or (``follow_inside``) a symlink to a regular file
    inside ``root``."""
    path = root / label
    try:
        if not path.is_symlink():
            return path.is_file()
        if not follow_inside:
            return False
        target = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: Python 3.11 raises RuntimeError
        return False
    return target.is_relative_to(root.resolve()) and target.is_file()


def _is_file_track(track: Track, worktree: Path) -> bool:
    """A tracked file (True) or a tracked directory (False), from the live path, else the store copy."""
    if track.live.is_dir():
        return False
    if track.live.exists():
        return True
    store = worktree / track.store_path
    if store.is_dir():
        return False
    return store.is_file() or PurePosixPath(track.store_path).suffix != ""


def _through_symlink(root: Path, directory: str) -> bool:
    """True when ``directory`` (relative to ``root``, "" for root itself) or a directory on the way to it
    is a symlink: nothing is written through one."""
    here = root
    for part in PurePosixPath(directory).parts:
        here = here / part
        if here.is_symlink():
            return True
    return False


def _walk(root: Path, *, follow_inside: bool) -> set[str]:
    """Relative POSIX paths of the regular files under ``root``, skipping ignored paths.

    Symlinks are skipped, except (``follow_inside``) a symlink to a regular file inside ``root``.
    Symlinked directories are never entered. Unreadable directories and symlink loops are skipped.
    """
    found: set[str] = set()
    if not root.is_dir():
        return found
    real_root = root.resolve()
    for item in _entries(root):
        if item is None:
            continue
        label, entry = item
        if entry.is_file(follow_symlinks=False):
            found.add(label)
        elif follow_inside and entry.is_symlink():
            try:
                target = Path(entry.path).resolve()
            except (OSError, RuntimeError):  # a symlink loop: Python 3.11 raises RuntimeError
                continue
            if target.is_relative_to(real_root) and target.is_file():
                found.add(label)
    return found


def _entries(root: Path) -> Iterator[tuple[str, os.DirEntry[str]] | None]:
    """Every entry under ``root`` that is not a directory (files, symlinks, special files), with its
    relative POSIX path, ignored paths skipped; directories are entered, never through a symlink. None
    for each directory that could not be listed (its content is unknown)."""
    # os.scandir's entries know their type from the directory listing: no stat per file.
    pending = [("", os.fspath(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            yield None
            continue
        for entry in entries:
            label = prefix + entry.name
            if _is_ignored(label):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append((label + "/", entry.path))
            else:
                yield label, entry

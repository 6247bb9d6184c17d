"""A store's tracks as this machine resolves them from the config: each track's store path (``as``, else
its default store path, which reads the project's git config), the store paths earlier versions gave it,
Claude Code's projects folder expanded into one track per project memory folder, the live paths another
store tracks excluded, and the overlap checks that need those paths. ``memsync.config`` reads the file
alone; this is where the file's tracks meet the machine."""

from __future__ import annotations

import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from memsync.base.paths import config_path
from memsync.config.check import Checker
from memsync.config.file import (
    KNOWN_KEYS,
    NO_STORE,
    Config,
    HostRoot,
    StoreConfig,
    Track,
    edit_config,
    load_config,
)
from memsync.errors import MemsyncError
from memsync.hosts import claude_code
from memsync.projects import claude_folders
from memsync.projects.store_paths import default_store_path_for, legacy_store_paths_for, untaken


def resolve(config: Config, *, discover: bool = True, change: bool = False) -> Config:
    """``config`` with every store's ``tracks`` and ``host_roots`` resolved from its ``entries``: the
    store path of each (``as``, else ``default_store_path_for``, which reads the project's git config),
    its legacy store paths (those no other track takes), and the live paths another store tracks inside
    it in its ``excludes``. A host folder of project memory folders (``host_roots``) gives a track per
    project folder in it now, unless ``discover`` is False (the readers that need only the configured
    tracks skip its listings and git calls). Raises ``MemsyncError`` naming the file's key (or, with
    ``change``, saying that a change is at fault) when two tracks overlap in the store or here, or a
    track overlaps its store's working tree."""
    check = Checker(config.path, KNOWN_KEYS, change=change)
    stores = {name: _store(check, store, discover) for name, store in config.stores.items()}
    return replace(config, stores=_with_excludes(stores))


def load_tracks(path: Path | None = None, *, discover: bool = True) -> Config:
    """The config at ``path`` (``load_config``) with its tracks resolved (``resolve``). Raises
    ``MemsyncError`` as both do."""
    return resolve(load_config(path), discover=discover)


def load_stores(path: Path | None = None) -> Config:
    """``load_tracks`` for a command that needs a store: raises ``MemsyncError`` (``NO_STORE``) when the
    file is missing or names no store, and as ``load_tracks`` does otherwise."""
    config = load_config(path)
    if not config.stores:
        raise MemsyncError(NO_STORE)
    return resolve(config)


def edit_tracks(path: Path | None, mutate: Callable[[dict[str, Any]], None]) -> Config:
    """``edit_config`` whose new config's tracks are resolved and checked before it is written: a change
    that makes two tracks overlap is refused (naming the key; nothing written). Returns the new config,
    resolved."""
    return edit_config(path, mutate, lambda config: resolve(config, change=True))


@dataclass(frozen=True)
class _Loaded:
    """The config as last read: its file's (size, mtime_ns, inode), the config as read, and its tracks
    resolved unless a host folder's project folders are among them (those come and go)."""

    stamp: tuple[int, int, int]
    config: Config
    resolved: Config | None


_loaded: dict[Path, _Loaded] = {}


def current_config() -> Config | None:
    """The config at ``config_path()`` with its tracks resolved, or None when there is none yet. Raises
    ``MemsyncError`` when it exists but is invalid. A long-lived process (the MCP server) reads the file
    again only once it changed; the tracks of a host folder of project folders are found again at each
    call (project folders in it come and go)."""
    path = config_path()
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    kept = _loaded.get(path)
    if kept is not None and kept.stamp == stamp:
        return kept.resolved if kept.resolved is not None else resolve(kept.config)
    config = load_config(path)
    resolved = resolve(config)
    has_roots = any(store.host_roots for store in resolved.stores.values())
    _loaded[path] = _Loaded(stamp, config, None if has_roots else resolved)
    return resolved


def _store(check: Checker, store: StoreConfig, discover: bool) -> StoreConfig:
    tracks: list[Track] = []
    roots: list[HostRoot] = []
    claimed: list[tuple[Path, str]] = []  # per entry: its live path and store path, for overlap checks
    for i, entry in enumerate(store.entries):
        tkey = f"stores.{store.name}.track[{i}]"
        live = entry.live
        root = claude_code.is_projects_root(live)
        if entry.store_path is not None:
            store_path = entry.store_path
        else:
            store_path = claude_code.STORE_PREFIX if root else default_store_path_for(live)
        for j, (other_live, other) in enumerate(claimed):
            mine, theirs = PurePosixPath(store_path), PurePosixPath(other)
            if mine.is_relative_to(theirs) or theirs.is_relative_to(mine):
                raise check.fail(f"{tkey}.as", f"maps to {store_path!r}, overlapping track[{j}] ({other!r})")
            if live.is_relative_to(other_live) or other_live.is_relative_to(live):
                raise check.fail(f"{tkey}.path", f"{live} overlaps track[{j}] ({other_live}); track it once")
        if live.is_relative_to(store.path) or store.path.is_relative_to(live):
            raise check.fail(f"{tkey}.path", f"{live} overlaps the store itself ({store.path})")
        claimed.append((live, store_path))
        if root:  # one track per project memory folder in it, but those its exclude list names
            held = claude_folders.store_keys(store.path, store_path) if discover else frozenset()
            roots.append(HostRoot(live, store_path, entry.excludes, held))
            if discover:
                found = claude_folders.expand_projects_root(live, store_path, entry.excludes, held)
                tracks.extend(Track(m.live, m.store_path, legacy=m.legacy) for m in found)
        else:
            legacy = () if entry.store_path is not None else legacy_store_paths_for(live)
            tracks.append(Track(live, store_path, entry.excludes, legacy))
    # Only the legacy store paths no other track takes are folded (``store_paths.untaken``).
    kept = untaken([track.store_path for track in tracks], [track.legacy for track in tracks])
    tracks = [replace(track, legacy=legacy) for track, legacy in zip(tracks, kept, strict=True)]
    return replace(store, tracks=tuple(tracks), host_roots=tuple(roots))


def _with_excludes(stores: Mapping[str, StoreConfig]) -> dict[str, StoreConfig]:
    """Give each track the live paths inside it that another store tracks (a nested track wins), beside
    those its own ``exclude`` list names."""
    everything = [(name, track.live) for name, store in stores.items() for track in store.tracks]

    def nested(name: str, track: Track) -> set[Path]:
        return {
            live
            for other, live in everything
            if other != name and live != track.live and live.is_relative_to(track.live)
        }

    return {
        name: replace(
            store,
            tracks=tuple(
                replace(track, excludes=tuple(sorted({*track.excludes, *nested(name, track)})))
                for track in store.tracks
            ),
        )
        for name, store in stores.items()
    }

"""What the daemon's watcher watches for a config, and which stores an event concerns (DESIGN "One sync
cycle" step 1)."""

from __future__ import annotations

from pathlib import Path

from memsync.config.file import Config
from memsync.daemon.remotedirs import remote_dirs
from memsync.daemon.watch import WatchEvent


def watch_targets(config: Config) -> tuple[list[Path], list[Path], list[Path]]:
    """The tracked live paths, the local-path remotes' directories and the agent hosts' roots of every
    store of ``config``, in ``Watcher.set_targets``'s order."""
    stores = config.stores.values()
    tracked = [track.live for store in stores for track in store.tracks]
    remotes = [d for store in stores for d in remote_dirs(store).values()]
    layout = [root.live for store in stores for root in store.host_roots]
    return tracked, remotes, layout


def stores_for(config: Config, event: WatchEvent) -> list[str]:
    """The names of the stores of ``config`` that ``event`` concerns: those whose local remote (a
    ``remote`` event) or whose track (any other) holds or lies under its path; every store when none
    does (a change nothing names is checked everywhere rather than missed)."""
    path = Path(event.path)
    names: list[str] = []
    for name, store in config.stores.items():
        if event.source == "remote":
            dirs = remote_dirs(store).values()
            if any(path.is_relative_to(d) or d.is_relative_to(path) for d in dirs):
                names.append(name)
        elif any(path.is_relative_to(t.live) or t.live.is_relative_to(path) for t in store.tracks):
            names.append(name)
    return names or list(config.stores)

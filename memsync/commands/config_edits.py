"""Editing the config for the setup commands: what each of them shares.

Every change goes through ``config.edit_config`` (tomlkit): every key, value and comment the user wrote
is kept. A running daemon is sent SIGHUP to reload the config at once; without a daemon, the change
applies when one starts.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.base.fsio import atomic_write
from memsync.config.file import NO_STORE, PERSONAL_STORE, Config, StoreConfig, Track
from memsync.daemon.instance import running_daemon_pid
from memsync.errors import MemsyncError

DEFAULT_STORE = PERSONAL_STORE
DEFAULT_REMOTE = "origin"


@dataclass(frozen=True)
class Report:
    """What a setup command did, as lines for the user; ``changed`` is False when nothing was written."""

    lines: tuple[str, ...]
    changed: bool


def home_relative(path: Path) -> str:
    """``path`` as the config stores it: ``~/...`` under the home directory (the same on every machine)."""
    path = Path(os.path.abspath(path.expanduser()))
    home = Path(os.path.abspath(Path.home()))
    if path.is_relative_to(home) and path != home:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


@contextmanager
def undone_on_failure(path: Path) -> Iterator[None]:
    """Put the config at ``path`` back as it was (or absent) when the block raises ``MemsyncError``: a
    store git could not create (a remote that does not exist, say) leaves no config naming it."""
    try:
        before: bytes | None = path.read_bytes()
    except FileNotFoundError:
        before = None
    try:
        yield
    except MemsyncError:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, before)
        raise


def reload_daemon(path: Path, *, silent_without: bool = False) -> list[str]:
    """Send a running daemon SIGHUP; the line saying so (none when no daemon runs and ``silent_without``)."""
    pid = running_daemon_pid(path)
    if pid is None:
        quiet = silent_without
        return [] if quiet else ["no daemon is running: the change applies when it starts (`memsync up`)"]
    try:
        os.kill(pid, signal.SIGHUP)
    except OSError as exc:
        return [f"could not signal the daemon (PID {pid}): {exc}; it applies the change when restarted"]
    return [f"the running daemon (PID {pid}) reloads its config now"]


def store_table(raw: dict[str, Any], name: str) -> dict[str, Any]:
    """The table of store ``name`` in the raw config ``raw``. Raises ``MemsyncError``: ``NO_STORE`` when
    the config has no store at all, else naming the stores there are."""
    stores = raw.setdefault("stores", {})
    if not stores:
        raise MemsyncError(NO_STORE)
    if name not in stores:
        raise MemsyncError(
            f"store {name!r} is not configured: it is not in the config. "
            f"Run `memsync store add {name}` or choose one of: {', '.join(stores) or 'none'}"
        )
    table: dict[str, Any] = stores[name]
    return table


def tracked(config: Config, live: Path) -> tuple[StoreConfig, str] | None:
    """The store tracking ``live`` and its store path (for a host folder of project folders, the prefix
    of theirs), or None."""
    for store in config.stores.values():
        for track in store.tracks:
            if track.live == live:
                return store, track.store_path
        for root in store.host_roots:
            if root.live == live:
                return store, root.prefix
    return None


def overlapping(config: Config, live: Path, store: str = DEFAULT_STORE) -> Track | None:
    """The track of ``store`` that contains ``live``, equals it or lies inside it, if any (tracking
    ``live`` in that store too would sync the same files twice). Tracks of other stores do not count: a
    path nested in another store's track is taken out of it (``config.Track.excludes``)."""
    if store not in config.stores:
        return None
    for track in config.stores[store].tracks:
        if live.is_relative_to(track.live) or track.live.is_relative_to(live):
            return track
    return None


def covered_line(live: Path, covering: Track) -> str:
    """The one line saying that ``live`` syncs already, inside the tracked folder ``covering``."""
    inside = f"{covering.store_path}/{live.relative_to(covering.live).as_posix()}"
    return f"{live} is synced as {inside}, as part of the tracked folder {covering.live}"

"""`memsync log`: the history of memory, read from each store's git history (which host added,
superseded or deleted what, and when)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from memsync.base.paths import StoreLayout
from memsync.commands.timeline import changes_in
from memsync.config.file import Config, StoreConfig
from memsync.errors import MemsyncError
from memsync.store.facade import Store
from memsync.tracks.resolve import load_stores


@dataclass(frozen=True)
class LogFilter:
    """Which commits `memsync log` shows: at or after ``since``, written by ``host``, the ``limit`` newest
    of them over every store (None: no bound)."""

    since: datetime | None = None
    host: str | None = None
    limit: int | None = None


def history_of(path: Path, target: str | None, shown: LogFilter = LogFilter()) -> list[str] | None:
    """What `memsync log` prints for config file ``path`` and ``target`` (see :func:`history`); None when
    ``target`` names nothing with a history: neither an existing tracked or store path nor, inside a
    tracked path or a store, a deleted file or an entry id any commit mentions. Raises ``MemsyncError``."""
    if target is None:
        return history(path, target, shown)
    place = _place(load_stores(path), target)
    # git refuses a path outside the store's worktree with an error of its own; nothing to ask it there.
    lines = [] if place == "outside" else history(path, target, shown)
    return None if not lines and place != "exists" else lines


def parse_since(value: str) -> datetime:
    """``--since``: a date (``2026-11-01``, local midnight) or an ISO-8601 time (without an offset: local
    time) -> aware datetime. Raises ``MemsyncError`` otherwise."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise MemsyncError(
            f"log: --since {value!r} is not a date. Give one such as 2026-11-01 or 2026-11-01T09:00"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


def _selector(
    store_cfg: StoreConfig, tracked_by: set[str], target: str | None
) -> str | Literal[False] | None:
    """What to ask ``store_cfg``'s history for ``target``: None for everything; a live path this store
    tracks becomes its store path; a live path another store tracks (``tracked_by``: their names), or a
    path outside this store, is not this store's (False: git would refuse it); anything else (a store
    path, an entry id) is kept."""
    if target is None:
        return None
    live = Path(os.path.abspath(Path(target).expanduser()))
    for track in store_cfg.tracks:
        if live == track.live or live.is_relative_to(track.live):
            rel = live.relative_to(track.live).as_posix()
            return track.store_path if rel == "." else f"{track.store_path}/{rel}"
    if tracked_by:
        return False
    in_store = Path(os.path.normpath(store_cfg.path / Path(target).expanduser()))
    return target if in_store.is_relative_to(store_cfg.path) else False


def _tracked_by(config: Config, target: str | None) -> set[str]:
    """The names of the stores with a track holding ``target`` read as a live path."""
    if target is None:
        return set()
    live = Path(os.path.abspath(Path(target).expanduser()))
    return {
        name
        for name, store_cfg in config.stores.items()
        if any(live == track.live or live.is_relative_to(track.live) for track in store_cfg.tracks)
    }


def local_time(moment: datetime) -> str:
    """``moment`` in this machine's local time with its zone, e.g. ``2026-11-30 10:15:02 CET``."""
    local = moment.astimezone()
    return f"{local:%Y-%m-%d %H:%M:%S} {local.tzname() or local.strftime('%z')}"


def history(path: Path, target: str | None = None, shown: LogFilter = LogFilter()) -> list[str]:
    """`memsync log`: one line per commit, newest first over every store of config file ``path``:
    ``<local date and zone> <host> <sha> [<store>] <message>`` plus the files changed; only the commits
    ``shown`` selects. ``target`` is a live path (asked of the store that tracks it only), a store path or
    an entry id; for an entry id each commit also says what happened to that entry (added, deleted by a
    tombstone, superseded by another entry). Raises ``MemsyncError``."""
    config = load_stores(path)
    tracked_by = _tracked_by(config, target)
    # The host and time filters read the records, so git is asked for a bound only without them.
    bound = shown.limit if shown.since is None and shown.host is None else None
    found: list[tuple[datetime, list[str]]] = []
    for store_cfg in config.stores.values():
        selector = _selector(store_cfg, tracked_by, target)
        if selector is False or not StoreLayout(store_cfg.path).exists:
            continue
        store = Store(store_cfg, config.host, config.identity())
        entry_id = selector if selector and not _exists(store_cfg.path / selector) else None
        for record in store.log(selector, bound):
            if (shown.since is not None and record.date < shown.since) or (
                shown.host is not None and record.host != shown.host
            ):
                continue
            subject = record.message.strip().splitlines()[0] if record.message.strip() else ""
            lines = [
                f"{local_time(record.date)}  {record.host or '?':<12} "
                f"{record.sha[:10]}  [{store_cfg.name}] {subject}",
                *(f"    {name}" for name in record.files),
            ]
            if entry_id is not None and record.files:
                lines.extend(f"    {event}" for event in _entry_events(store, record.sha, entry_id))
            found.append((record.date, lines))
    found.sort(key=lambda item: item[0], reverse=True)  # stable: each store's own order kept on a tie
    return [line for _, lines in found[: shown.limit] for line in lines]


def _entry_events(store: Store, sha: str, entry_id: str) -> list[str]:
    """What commit ``sha`` did to entry ``entry_id``, one line per change."""
    shown = {
        "created": "added: {text}",
        "forgotten": "deleted (tombstone)",
        "superseded": "superseded by {id}: {text}",
    }
    return [
        shown[change.what].format(text=change.record.get("text", ""), id=change.record.get("id"))
        for change in changes_in(store, sha, entry_id)
    ]


def _place(config: Config, target: str) -> Literal["exists", "inside", "outside"]:
    """Where `memsync log`'s ``target`` is, read as a live path (from here) or a store path (from a store's
    worktree): an existing tracked live path or store path; else inside a tracked path or a store (a
    deleted file, or an entry id); else outside all of them."""
    given = Path(target).expanduser()
    live = Path(os.path.abspath(given))
    place: Literal["exists", "inside", "outside"] = "outside"
    for store in config.stores.values():
        in_store = Path(os.path.normpath(store.path / given))
        for candidate, root in [(in_store, store.path), *((live, track.live) for track in store.tracks)]:
            if candidate.is_relative_to(root):
                if _exists(candidate):
                    return "exists"
                place = "inside"
    return place


def _exists(path: Path) -> bool:
    """``path.exists()``, False for a name no file system takes (a long text given as the target)."""
    try:
        return path.exists()
    except OSError:
        return False

"""`memsync log`: the history of memory, read from each store's git history (which host added,
superseded or deleted what, and when)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from memsync.config import Config, StoreConfig, load_stores
from memsync.formats.jsonl.canonical import parse_record
from memsync.paths import StoreLayout
from memsync.store.facade import Store


def history_of(path: Path, target: str | None) -> list[str] | None:
    """What `memsync log` prints for config file ``path`` and ``target`` (see :func:`history`); None when
    ``target`` names nothing with a history: neither an existing tracked or store path nor, inside a
    tracked path or a store, a deleted file or an entry id any commit mentions. Raises ``MemsyncError``."""
    if target is None:
        return history(path, target)
    place = _place(load_stores(path), target)
    # git refuses a path outside the store's worktree with an error of its own; nothing to ask it there.
    lines = [] if place == "outside" else history(path, target)
    return None if not lines and place != "exists" else lines


def _selectors(store_cfg: StoreConfig, target: str | None) -> list[str | None]:
    """What to ask a store's history for: a live path becomes its store path; anything else is kept."""
    if target is None:
        return [None]
    live = Path(os.path.abspath(Path(target).expanduser()))
    for track in store_cfg.tracks:
        if live == track.live or live.is_relative_to(track.live):
            rel = live.relative_to(track.live).as_posix()
            return [track.store_path if rel == "." else f"{track.store_path}/{rel}"]
    return [target]


def history(path: Path, target: str | None = None, limit: int | None = None) -> list[str]:
    """`memsync log`: one line per commit, newest first, over every store of config file ``path``:
    ``<date> <host> <sha> [<store>] <message>`` plus the files changed. ``target`` is a live path, a
    store path or an entry id; for an entry id each commit also says what happened to that entry
    (added, deleted by a tombstone, superseded by another entry). Raises ``MemsyncError``."""
    config = load_stores(path)
    lines: list[str] = []
    for store_cfg in config.stores.values():
        store = Store(store_cfg, config.host, config.identity())
        if not StoreLayout(store_cfg.path).exists:
            continue
        for selector in _selectors(store_cfg, target):
            entry_id = selector if selector and not _exists(store_cfg.path / selector) else None
            for record in store.log(selector, limit):
                subject = record.message.strip().splitlines()[0] if record.message.strip() else ""
                lines.append(
                    f"{record.date.isoformat(timespec='seconds')}  {record.host or '?':<12} "
                    f"{record.sha[:10]}  [{store_cfg.name}] {subject}"
                )
                lines.extend(f"    {name}" for name in record.files)
                if entry_id is not None and record.files:
                    events = _entry_events(store, record.sha, entry_id)
                    lines.extend(f"    {event}" for event in events)
    return lines


def _entry_events(store: Store, sha: str, entry_id: str) -> list[str]:
    """What commit ``sha`` did to entry ``entry_id``, read from the JSON lines it added."""
    events: list[str] = []
    for raw in store.added_lines(sha):
        record = parse_record(raw)
        if record is None:
            continue
        if record.get("id") == entry_id:
            if record.get("deleted") is True:
                events.append("deleted (tombstone)")
            else:
                events.append(f"added: {record.get('text', '')}")
        elif record.get("supersedes") == entry_id:
            events.append(f"superseded by {record.get('id')}: {record.get('text', '')}")
    return events


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

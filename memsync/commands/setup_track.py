"""``memsync track`` / ``untrack``: which live paths a store syncs, and which paths inside a tracked
folder it leaves out (the track's ``exclude`` list)."""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath
from typing import Any

from memsync.base import argcheck
from memsync.base.paths import config_path
from memsync.commands.config_edits import (
    DEFAULT_STORE,
    Report,
    absolute,
    covered_line,
    home_relative,
    overlapping,
    reload_daemon,
    store_table,
    tracked,
)
from memsync.commands.crossing import between
from memsync.config.file import Track
from memsync.errors import MemsyncError
from memsync.projects.store_paths import default_store_path_for
from memsync.tracks.resolve import edit_tracks, load_tracks


def _entry_of(raw: dict[str, Any], store: str, live: Path) -> dict[str, Any]:
    """The ``[[stores.STORE.track]]`` table whose path is ``live``."""
    entries = store_table(raw, store).get("track", [])
    return next(e for e in entries if isinstance(e, dict) and absolute(Path(str(e.get("path", "")))) == live)


def track(
    live: Path,
    store: str = DEFAULT_STORE,
    as_path: str | None = None,
    config: Path | None = None,
    yes: bool = False,
) -> Report:
    """Track ``live`` (a role directory or memory file) in ``store``, at ``as_path`` (default: DESIGN's
    default store path). If the store already holds content at that path (from peers), the next cycle
    merges it with the live content, losing nothing on either side, and the report says so. Tracking an
    already tracked path the same way changes nothing; so does a path inside a folder the store tracks
    (one line says so), unless ``untrack --exclude`` left it out: then it is taken back into the folder.
    A path inside another store's tracked folder is taken out of it; when it exists (that store synced
    it) and ``store`` syncs with a remote the other does not, that needs ``yes``. Raises
    ``MemsyncError`` (nothing written) when ``live``'s directory does not exist, the path is
    tracked elsewhere, lies around a tracked path, the store is unknown, the store path overlaps
    another track's, or such a move lacks ``yes``.
    """
    cfg_path = config_path() if config is None else config
    live = argcheck.memory_path(live, "PATH")
    before = load_tracks(cfg_path)
    existing = tracked(before, live)
    if existing is not None:
        where, store_path = existing
        if where.name == store and as_path in (None, store_path):
            return Report((f"{live} is already tracked in store {store} as {store_path}",), False)
        raise MemsyncError(
            f"cannot track {live}: it is already tracked in store {where.name} as {store_path}. "
            "Run `memsync untrack` first"
        )
    covering = overlapping(before, live, store)
    if covering is not None and live.is_relative_to(covering.live):
        inside = f"{covering.store_path}/{live.relative_to(covering.live).as_posix()}"
        left_out = next((p for p in covering.excludes if live.is_relative_to(p)), None)
        if left_out == live and as_path in (None, inside):
            return _set_excluded(cfg_path, store, covering, live, excluded=False)
        if left_out is not None:
            raise MemsyncError(
                f"cannot track {live}: it lies in {left_out}, which is left out of the tracked folder "
                f"{covering.live}. Run `memsync track {shlex.quote(str(left_out))}` to sync it again"
            )
        if as_path in (None, inside):
            return Report((covered_line(live, covering),), False)
    if covering is not None:
        raise MemsyncError(
            f"cannot track {live}: it overlaps the tracked {covering.live} in store {store}, so "
            f"its files would sync twice. Untrack {covering.live} first, or track it in "
            "another store"
        )
    wanted = PurePosixPath(as_path or default_store_path_for(live))
    for other in before.stores[store].tracks if store in before.stores else ():
        if wanted.is_relative_to(other.store_path) or PurePosixPath(other.store_path).is_relative_to(wanted):
            raise MemsyncError(
                f"cannot track {live}: its store path {wanted} meets {other.store_path}, where store "
                f"{store} keeps the tracked {other.live}. Give it a store path of its own with "
                f"--as (e.g. --as notes/{live.name}), or move it into {other.live}"
            )
    elsewhere = [
        (name, track.live)
        for name, cfg in before.stores.items()
        if name != store
        for track in cfg.tracks
        if live.is_relative_to(track.live)
    ]
    # A path that does not exist yet holds no memory the other store synced: nothing crosses.
    moves = [m for name, _ in elsewhere if live.exists() and (m := between(before, name, store))]
    if moves and not yes:
        raise moves[0].refusal(f"cannot track {live} in store {store}", "--yes")

    def mutate(raw: dict[str, Any]) -> None:
        entry = {"path": home_relative(live)}
        if as_path is not None:
            entry["as"] = as_path
        store_table(raw, store).setdefault("track", []).append(entry)

    new = edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    store_cfg = new.stores[store]
    added = tracked(new, live)
    assert added is not None  # edit_tracks validated the config with the new track in it
    store_path = added[1]
    lines.append(f"tracking {live} in store {store} as {store_path}")
    lines.extend(
        f"{live} is taken out of the tracked {outer} (store {name}): it syncs with store {store} only"
        for name, outer in elsewhere
    )
    lines.extend(f"{live}: its memory (so far in store {m.source}) goes to {m.receivers()}" for m in moves)
    in_store = store_cfg.path / store_path
    if in_store.exists() and (in_store.is_file() or any(in_store.iterdir())):
        lines.append(
            f"store {store} already holds {store_path} (from peers): the next sync merges it with "
            f"{live}; nothing on either side is lost"
        )
    if not live.exists():
        lines.append(f"{live} does not exist yet: memsync picks it up when it is created")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def _set_excluded(cfg_path: Path, store: str, folder: Track, live: Path, *, excluded: bool) -> Report:
    """Put ``live`` on the ``exclude`` list of the tracked ``folder`` (it stops syncing, the rest of the
    folder goes on) or, with ``excluded`` False, take it off (it syncs with the folder again)."""
    rel = live.relative_to(folder.live).as_posix()

    def mutate(raw: dict[str, Any]) -> None:
        entry = _entry_of(raw, store, folder.live)
        kept = {item for item in entry.get("exclude", []) if item != rel} | ({rel} if excluded else set())
        entry["exclude"] = sorted(kept)
        if not kept:
            del entry["exclude"]

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(
        f"{live} is left out of the tracked folder {folder.live} (its exclude list); its files stay here "
        f"and {folder.store_path}/{rel} stays in store {store}. "
        f"`memsync track {shlex.quote(str(live))}` syncs it again"
        if excluded
        else f"{live} syncs again as {folder.store_path}/{rel}, as part of the tracked folder "
        f"{folder.live} (taken off its exclude list)"
    )
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def untrack(live: Path, exclude: bool = False, config: Path | None = None) -> Report:
    """Stop syncing ``live``. Its content stays in the store (and on peers), listed by ``memsync status``
    as store content not tracked here; the live files are not touched. A path inside a tracked folder
    is left out of that folder only with ``exclude`` (it goes on the track's ``exclude`` list); without
    it the error says so. Raises ``MemsyncError`` if ``live`` is not tracked."""
    cfg_path = config_path() if config is None else config
    live = absolute(live)
    config_now = load_tracks(cfg_path)
    found = tracked(config_now, live)
    folder = next(
        (
            (store, track)
            for store in config_now.stores.values()
            for track in store.tracks
            if live != track.live and live.is_relative_to(track.live)
        ),
        None,
    )
    if found is None and folder is not None:
        store, covering = folder
        if any(live.is_relative_to(p) for p in covering.excludes):
            raise MemsyncError(
                f"cannot untrack {live}: it is already left out of the tracked folder {covering.live}. "
                "`memsync status` lists what is tracked"
            )
        if not exclude:
            raise MemsyncError(
                f"cannot untrack {live}: it is not tracked on its own but as part of the tracked folder "
                f"{covering.live} (store {store.name}). Leave it out of that folder with "
                f"`memsync untrack --exclude {shlex.quote(str(live))}`, or stop syncing the folder with "
                f"`memsync untrack {shlex.quote(str(covering.live))}`"
            )
        return _set_excluded(cfg_path, store.name, covering, live, excluded=True)
    if found is None:
        raise MemsyncError(f"cannot untrack {live}: it is not tracked. `memsync status` lists what is")
    store_cfg, store_path = found

    def mutate(raw: dict[str, Any]) -> None:
        table = store_table(raw, store_cfg.name)
        table["track"] = [
            entry for entry in table.get("track", []) if absolute(Path(str(entry.get("path", "")))) != live
        ]

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(f"no longer tracking {live}; {store_path} stays in store {store_cfg.name}")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)

"""`memsync held`: the lines the secret scanner kept on this machine (DESIGN I6), with their text (shown
here only: it never leaves), and `memsync held allow FILE LINE`: a person says a line is no secret. Its
hash (never its text) joins the store's allow-list (:mod:`memsync.secrets.allowed`), which syncs, so every
peer's scanner lets the same line pass; the file is settled by content at the next sync, which then
publishes the line."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from memsync.base.fsio import read_range
from memsync.base.layout import is_append_only
from memsync.base.paths import StoreLayout
from memsync.base.wording import plural
from memsync.commands.proposals import now_text
from memsync.commands.store_records import append_record
from memsync.config.file import Config, StoreConfig
from memsync.cycle.store_facts import emptied_folders, store_facts
from memsync.errors import MemsyncError
from memsync.secrets.allowed import ALLOWED_RECORD, line_hash
from memsync.store.access import cycle_lock, open_store
from memsync.store.written import commit_written
from memsync.sync.records import WholeState
from memsync.sync.state import SyncState
from memsync.tracks.resolve import load_stores

_SHOWN_BYTES = 4096  # of a held line: enough to recognise it


@dataclass(frozen=True)
class Held:
    """A held-back line: the live ``file``, its ``store`` and ``store_path``, the 1-based ``line`` (0: the
    file's name is what was flagged), the ``detector``, and the line's ``text`` as it is now."""

    store: str
    store_path: str
    file: Path
    line: int
    detector: str
    text: str


def _line_of(path: Path, number: int) -> bytes | None:
    """Line ``number`` (1-based, without its end) of ``path``, None when the file has no such line."""
    try:
        data = read_range(path, 0, path.stat().st_size)
    except OSError:
        return None
    lines = data.split(b"\n")
    return lines[number - 1] if 0 < number <= len(lines) else None


def held_lines(config_file: Path | None) -> list[Held]:
    """Every line the scanner holds back in each store of config file ``config_file``, as the last cycle
    recorded it. Raises ``MemsyncError`` (no store)."""
    config = load_stores(config_file)
    found = []
    for store_cfg in config.stores.values():
        if not StoreLayout(store_cfg.path).exists:
            continue
        for item in store_facts(store_cfg)["held_back_secrets"]:
            path = Path(item["file"])
            raw = _line_of(path, item["line"]) if item["line"] else None
            text = "" if raw is None else raw[:_SHOWN_BYTES].decode("utf-8", "replace")
            found.append(Held(store_cfg.name, item["store_path"], path, item["line"], item["detector"], text))
    return found


def _holder(config: Config, live: Path, line: int) -> tuple[StoreConfig, Held]:
    path = Path(os.path.abspath(live.expanduser()))
    for item in held_lines(config.path):
        if item.file == path and item.line == line and item.line:
            return config.stores[item.store], item
    raise MemsyncError(f"held allow {path}:{line}: no line held back there. List them with `memsync held`")


def allow(config_file: Path | None, live: Path, line: int) -> str:
    """Say line ``line`` of the live file ``live`` (as `memsync held` lists it) is no secret: its hash joins
    the allow-list of the file's store (committed; the next sync pushes it) and the file's sync state is
    put in doubt, so the next sync settles it by content and publishes the line. Returns the line to
    print. Raises ``MemsyncError`` (no such held line, git failing)."""
    config = load_stores(config_file)
    store_cfg, held = _holder(config, live, line)
    raw = _line_of(held.file, line)
    if raw is None:
        raise MemsyncError(
            f"held allow {held.file}:{line}: the file has no such line now. Run `memsync sync`"
        )
    who = config.identity()
    record = {
        "id": "a" + secrets.token_hex(6),
        "allow": line_hash(raw),
        "at": now_text(),
        "host": config.host,
        "by": f"{who.name} <{who.email}>",
    }
    append_record(
        config, store_cfg, ALLOWED_RECORD, record, f"memsync: a line of {held.store_path} is no secret"
    )
    with cycle_lock(store_cfg, config=config.path), SyncState(StoreLayout(store_cfg.path).meta_dir) as state:
        # A whole file is scanned whole at each publish; an append-only one only past its offset.
        current = state.get_append(held.store_path) if is_append_only(held.store_path) else None
        if current is not None:
            state.put(current.in_doubt())
    return f"allowed {held.file}:{line} (its hash, not its text, syncs); the next sync publishes it"


def _emptied(config: Config, folder: Path, verb: str) -> tuple[StoreConfig, str]:
    """The store of ``folder`` and its store path, when ``folder`` is held as emptied
    (``files.Emptied``). Raises ``MemsyncError`` otherwise."""
    path = Path(os.path.abspath(folder.expanduser()))
    for store_cfg in config.stores.values():
        for item in emptied_folders(store_cfg):
            if Path(item["folder"]) == path:
                track = next(t for t in store_cfg.tracks if path == t.live or path.is_relative_to(t.live))
                label = path.relative_to(track.live).as_posix()
                prefix = track.store_path.strip("/")
                return store_cfg, prefix if label == "." else f"{prefix}/{label}"
    raise MemsyncError(
        f"held {verb} {path}: no folder is held there (it is not empty, or memsync knows no files in it). "
        "List what is held with `memsync status`"
    )


def restore_folder(config_file: Path | None, folder: Path) -> str:
    """Bring the store's files back into the emptied ``folder`` (as `memsync status` names it): what was
    last synced there is forgotten, so the next sync delivers the store's files, as on a new machine.
    Returns the line to print. Raises ``MemsyncError`` (no such held folder)."""
    config = load_stores(config_file)
    store_cfg, prefix = _emptied(config, folder, "restore")
    with cycle_lock(store_cfg, config=config.path), SyncState(StoreLayout(store_cfg.path).meta_dir) as state:
        paths = [
            p
            for p in state.paths(prefix)
            if (current := state.get_whole(p)) is not None
            and current.synced_known
            and current.synced is not None
        ]
        for path in paths:
            state.forget(path)
    return f"restoring {folder}: the next sync brings back its {plural(len(paths), 'file')} from the store"


def delete_folder(config_file: Path | None, folder: Path) -> str:
    """Delete everywhere the files the emptied ``folder`` (as `memsync status` names it) held: each store
    copy still as last synced here is deleted and committed (the next sync pushes it); one a peer changed
    meanwhile is kept and comes back (DESIGN "Deletions"). Returns the line to print. Raises
    ``MemsyncError`` (no such held folder, git failing)."""
    config = load_stores(config_file)
    store_cfg, prefix = _emptied(config, folder, "delete")
    with cycle_lock(store_cfg, config=config.path):
        store = open_store(config, store_cfg)
        with SyncState(store.meta_dir) as state:
            deleted = 0
            for path in state.paths(prefix):
                current = state.get_whole(path)
                if current is None or not current.in_sync or current.synced is None:
                    continue
                try:
                    same = (store.worktree / path).read_bytes() == current.synced
                except FileNotFoundError:
                    same = False
                if same:
                    state.note_written(path)  # before the write: a kill before the commit loses nothing
                    (store.worktree / path).unlink()
                    deleted += 1
                state.put(WholeState.synced_as(path, None))
            commit_written(store, state, f"memsync: deleted {plural(deleted, 'file')} of {prefix}")
    return (
        f"deleted {plural(deleted, 'file')} of {folder} from the store; the next sync deletes them everywhere"
    )

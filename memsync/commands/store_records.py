"""The record files a store keeps for itself (the purge record, the review record): JSON Lines that only
grow, each new line appended and committed at once, so a peer receives it with the next push."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memsync.base.fsio import atomic_write
from memsync.config.file import Config, StoreConfig
from memsync.store.access import cycle_lock, open_store
from memsync.store.facade import Store
from memsync.store.written import commit_written
from memsync.sync.state import SyncState


def append_and_commit(store: Store, rel: str, line: bytes, message: str) -> None:
    """Append ``line`` (ending in a newline) to the store file ``rel`` (created if missing; a last line
    without its newline gets one first) and commit it with ``message``. The write is recorded before it
    is made, so a kill before the commit does not lose it. Raises ``MemsyncError``."""
    path = store.worktree / rel
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with SyncState(store.meta_dir) as state:
        state.note_written(rel)
        atomic_write(path, old + line)
        commit_written(store, state, message)


def append_record(
    config: Config, store_cfg: StoreConfig, rel: str, record: Mapping[str, Any], message: str
) -> None:
    """Append ``record`` as one JSON line to the store's record file ``rel`` and commit it, under the
    store's cycle lock (the next sync pushes it). Raises ``MemsyncError``."""
    line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    with cycle_lock(store_cfg, config=config.path):
        append_and_commit(open_store(config, store_cfg), rel, line, message)

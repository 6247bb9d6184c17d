"""`memsync resync`: adopt a remote's rewritten history (after a `memsync purge` there) and publish
local memory again on top, without the purged lines (DESIGN "One sync cycle" step 4: memsync never
force-pushes, so a rewritten remote is adopted only when the user asks)."""

from __future__ import annotations

from pathlib import Path

from memsync.base.wording import plural
from memsync.commands.purge import adopt_purge_records, reset_sync_state
from memsync.cycle.run import Cycle
from memsync.cycle.session import Session
from memsync.errors import MemsyncError
from memsync.store.access import cycle_lock, open_store
from memsync.store.written import commit_written
from memsync.sync.state import SyncState
from memsync.tracks.resolve import load_stores


def resync(path: Path, remote: str, store_name: str | None = None, *, adopt_unrelated: bool = False) -> str:
    """`memsync resync`: adopt ``remote``'s rewritten history in the store that has it (``store_name``
    when several do), reset the sync state (``purge.reset_sync_state``: live files are reconciled by
    content, whole files over their last synced version without the purged lines), and run a cycle.
    When the remote carries purge records (another machine ran `memsync purge`), the lines they list
    are first removed from the live files and the local history (``purge.adopt_purge_records``), so
    the purged text does not come back. A remote unrelated to the store (``storeid``: no commit in
    common, another store id) is refused before anything changes, unless ``adopt_unrelated``. Returns a
    one-line summary. Raises ``MemsyncError`` (unknown remote, ambiguous store, unreachable, unrelated)."""
    config = load_stores(path)
    candidates = [
        s
        for s in config.stores.values()
        if remote in s.remotes and (store_name is None or s.name == store_name)
    ]
    if not candidates:
        raise MemsyncError(
            f"cannot resync: no store{' ' + repr(store_name) if store_name else ''} has a "
            f"remote named {remote!r}. Check `memsync status`"
        )
    if len(candidates) > 1:
        raise MemsyncError(
            f"cannot resync: stores {', '.join(s.name for s in candidates)} all have a remote "
            f"named {remote!r}. Name one with --store"
        )
    store_cfg = candidates[0]
    with cycle_lock(store_cfg, config=path):
        store = open_store(config, store_cfg)
        with SyncState(store.meta_dir) as state:
            commit_written(store, state, "memsync: recovered local changes")
        unrelated = None if adopt_unrelated else store.unrelated(remote)
        if unrelated is not None:
            raise MemsyncError(f"cannot resync with {remote!r}: {unrelated}")
        purged = adopt_purge_records(store, remote)
        outcome = store.resync(remote, adopt_unrelated=adopt_unrelated)
        reset_sync_state(store)
    report = Cycle(config, store_cfg, Session()).run()
    removed = (
        f"; {plural(purged.live_lines, 'line')} purged there removed from "
        f"{plural(len(purged.live_files), 'live file')} here too"
        if purged.live_lines
        else ""
    )
    return (
        f"store {store_cfg.name}: adopted {remote}'s history ({outcome.message}){removed}; "
        f"{'everything pushed' if report.ok else 'not everything pushed yet'}"
    )

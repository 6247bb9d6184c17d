"""One sync cycle of one store (DESIGN "One sync cycle" steps 2-5).

A cycle: take the store's cycle lock (so the daemon's timers and events and a `memsync sync` from the CLI
never run git at the same time), open the store (recovery), reconcile and publish every track (the
secret scanner runs inside publish), commit once, exchange with the remotes, deliver every track, and
write ``status.json`` in the store's meta dir. Given the live paths that changed (the daemon's watcher),
publish and deliver visit only the files that changed here or in the exchange (``scope``). Local
changes are always committed before any fetch or merge, so local work is never lost to a merge.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from memsync.base.diskfull import ADVICE, is_full, named, nearly_full
from memsync.base.fsio import sweep_temps
from memsync.base.layout import IGNORED_DIRS
from memsync.base.paths import STATE_DB
from memsync.base.wording import plural
from memsync.config.file import Config, StoreConfig, Track
from memsync.cycle.legacy import first_folds, fold_legacy
from memsync.cycle.report import CycleReport, StoreChanges, delivered_lines, shorten_message
from memsync.cycle.scope import Scope
from memsync.cycle.session import Session
from memsync.cycle.status import read_status, write_status
from memsync.errors import MemsyncError
from memsync.recall.search import refresh
from memsync.store import refs
from memsync.store.access import LOCK_WAIT_S, cycle_lock, meta_dir
from memsync.store.commit import put_back_strays
from memsync.store.exchange import Progress
from memsync.store.facade import Store
from memsync.store.storeid import ensure_identity
from memsync.store.written import commit_written
from memsync.sync.passes import deliver, publish, reconcile
from memsync.sync.reports import PublishReport, describe_changes
from memsync.sync.state import SyncState

log = logging.getLogger(__name__)

GC_EVERY_CYCLES = 100


@dataclass(frozen=True)
class Cycle:
    """One sync cycle of store ``store_cfg`` (DESIGN "One sync cycle" steps 2-5), its inputs named.

    ``session``: this process's state across cycles (the stores it opened, the tracks it warned about).
    ``remotes``: the remotes to exchange with (default all; the daemon leaves out those backing off,
    and with none local changes are still committed and what the store has is delivered).
    ``full_reconcile`` opens the store anew (recovery, and whatever a failed git step left in the
    working tree put back) and settles the sync state with the store by content first (on start and
    after a failure; always, from the CLI); without it, a store this process opened before is reused.
    ``progress``: see ``Store.exchange``. ``stop``: once set, git is killed and ``git.Stopped``
    raised (what is cut short is recovered like after ``kill -9``). ``lock_wait_s`` bounds the wait for
    another cycle of the store (``cycle_lock``). ``changed``: the live paths changed since the last cycle
    (the watcher's); publish then visits only those, and deliver those, what the exchange changed and
    what the last cycle left waiting (``scope.Scope``). None (in doubt), or a ``full_reconcile``: every
    file of every track.
    """

    config: Config
    store_cfg: StoreConfig
    session: Session
    remotes: Collection[str] | None = None
    full_reconcile: bool = True
    progress: Progress | None = None
    stop: threading.Event | None = None
    lock_wait_s: float = LOCK_WAIT_S
    changed: Collection[Path] | None = None

    def run(self) -> CycleReport:
        """Run the cycle under the store's cycle lock, write its status and return its report. Raises
        ``MemsyncError`` when the store is missing or broken, or a disk is full ("disk full: PATH"); the
        status file then records the error. Remote problems are not exceptions: they are in the report's
        ``remotes``."""
        store_cfg = self.store_cfg
        with cycle_lock(store_cfg, self.lock_wait_s, config=self.config.path, stop=self.stop):
            started = time.time()
            try:
                report = self._sync()
            except MemsyncError as exc:
                self.session.forget(store_cfg)
                write_status(store_cfg, started, None, error=str(exc))
                raise
            except (OSError, sqlite3.Error) as exc:
                self.session.forget(store_cfg)
                error = _failure(store_cfg, exc)
                write_status(store_cfg, started, None, error=error)
                raise MemsyncError(error) from exc
            write_status(store_cfg, started, report)
            return report

    def _sync(self) -> CycleReport:
        store = self.session.store_for(self.config, self.store_cfg, self.full_reconcile, self.stop)
        started_at = self.session.heads.get(self.store_cfg.path) or refs.head(store.git_dir)
        if self.full_reconcile:
            sweep_stale_temps(self.store_cfg)
        names = [name for name in self.store_cfg.remotes if self.remotes is None or name in self.remotes]
        with SyncState(store.meta_dir) as state:
            if self.full_reconcile:
                # Before publish reads or appends to a store file: what a failed or killed git step left
                # half-written is put back (what publish wrote before a crash is kept, and committed below).
                put_back_strays(store.git, state.written())
            reports: list[PublishReport] = []
            back = [track for track in self.store_cfg.tracks if track.live in self.session.unreachable]
            reachable = [track for track in self.store_cfg.tracks if self.session.reachable(track)]
            waiting = first_folds(reachable, store)
            revisit = self.session.revisit.pop(self.store_cfg.path, frozenset())
            # Published in the fold, or reachable again: what changed meanwhile is unknown.
            whole = [*waiting, *(track for track in back if track in reachable)]
            scope = Scope(reachable, None if self.full_reconcile else self.changed, revisit, whole)
            for track in reachable:
                _forget_vanished_dir(track, store.worktree, state)
                if track in waiting:
                    continue  # published after its first fold, once the exchange brought peers' copies
                if self.full_reconcile:
                    reports.append(reconcile(track, store.worktree, state, notices=self.session.notices))
                reports.append(
                    publish(
                        track,
                        store.worktree,
                        state,
                        grace_s=self.config.partial_line_grace_s,
                        notices=self.session.notices,
                        labels=scope.publish(track),
                    )
                )
            message = shorten_message(describe_changes(reports)) or "memsync: recovered local changes"
            # Nothing written: no commit to make, and the store's own `git status` (a stat per file) is left
            # to the next cycle that writes or reconciles, which puts back what memsync did not write.
            commit = commit_written(store, state, message) if self.full_reconcile or state.written() else None
            if self.full_reconcile:
                ensure_identity(store.git)
            outcomes = tuple(store.exchange(names, self.progress)) if names else ()
            merged = any(outcome.merged for outcome in outcomes)
            folds, folded, again = fold_legacy(
                store,
                reachable,
                state,
                waiting=waiting,
                merged=merged,
                full=self.full_reconcile,
                remotes=names,
                grace_s=self.config.partial_line_grace_s,
                notices=self.session.notices,
            )
            if folded is not None:
                commit, message = folded, shorten_message(describe_changes([*reports, *folds]))
                outcomes += again
            ended_at = refs.head(store.git_dir)
            store_changes = _store_changes(store, started_at, ended_at)
            if store_changes is None:
                scope = Scope(reachable, None)
            else:
                scope.add_store_paths(store_changes)
            delivered = [
                deliver(
                    track,
                    store.worktree,
                    state,
                    grace_s=self.config.partial_line_grace_s,
                    notices=self.session.notices,
                    labels=scope.deliver(track),
                )
                for track in reachable
            ]
            held = tuple(state.held())
        # The search index follows what this cycle published and delivered: a stat per file of the store's
        # tracks, the memory that changed re-indexed (recall would otherwise do it on its next call).
        refresh(self.config, lambda source: source.store == self.store_cfg.name, holder=self.session.index)
        self.session.revisit[self.store_cfg.path] = frozenset(
            [rel for report in delivered for rel, _ in report.waiting]
            + [clash.path for report in delivered for clash in report.clashes]
        )
        self.session.heads[self.store_cfg.path] = ended_at
        if commit is not None and int(read_status(self.store_cfg).get("cycles", 0)) % GC_EVERY_CYCLES == 0:
            store.git.gc_auto()
        unpushed = max((self.session.unpushed(store, name) for name in self.store_cfg.remotes), default=0)
        return CycleReport(
            self.store_cfg.name,
            commit,
            message if commit else None,
            outcomes,
            tuple(line for report in delivered for line in delivered_lines(report)),
            unpushed,
            exchanged=len(names) == len(self.store_cfg.remotes),
            clashes=tuple(clash for report in delivered for clash in report.clashes),
            store_changes=StoreChanges(started_at, ended_at, store_changes),
            held=held,
        )


def _failure(store_cfg: StoreConfig, exc: OSError | sqlite3.Error) -> str:
    """The one line for a cycle that failed with ``exc``: a full disk named by its path."""
    state = meta_dir(store_cfg) / STATE_DB
    named_file = exc.filename if isinstance(exc, OSError) and exc.filename else None
    where = Path(named_file or (state if isinstance(exc, sqlite3.Error) else store_cfg.path))
    if is_full(exc) or nearly_full(where):
        return f"sync of store {store_cfg.name!r} stopped: {named(where)}. {ADVICE}"
    if isinstance(exc, OSError):
        return f"sync of store {store_cfg.name!r} failed: {exc}. Check the disk and the paths"
    return (
        f"sync of store {store_cfg.name!r} failed: {exc}. If it persists, delete {state} (a cache: "
        "memsync rebuilds it by comparing live files with the store)"
    )


def _store_changes(store: Store, old: str | None, new: str | None) -> dict[str, int | None] | None:
    """The store paths the cycle changed (its commits, the exchange's merges and fast-forwards, the
    legacy folds), with their sizes before (``Store.changes``); None when git cannot tell (no commit
    before, or the commit before is gone: a purge rewrote history)."""
    if old == new:
        return {}
    if old is None or new is None:
        return None
    try:
        return store.changes(old, new)
    except MemsyncError as exc:
        log.debug("store %s: no diff from %s: %s", store.cfg.name, old, exc)
        return None


def sweep_stale_temps(store_cfg: StoreConfig) -> int:
    """Delete the memsync temp files a killed write left (``fsio.sweep_temps``: older than
    ``fsio.STALE_TEMP_S``) in ``store_cfg``'s worktree and meta dir and in each tracked live directory (a
    tracked file: its directory's own files), logging the count; returns it. Called under the cycle lock
    on a full reconcile and by `memsync purge`: they hold memory text that nothing else ever removes."""
    removed = sweep_temps(store_cfg.path, skip_dirs=IGNORED_DIRS) + sweep_temps(
        meta_dir(store_cfg), recursive=False
    )
    for track in store_cfg.tracks:
        if track.live.is_dir():
            removed += sweep_temps(track.live, skip_dirs=IGNORED_DIRS)
        else:
            removed += sweep_temps(track.live.parent, recursive=False)
    if removed:
        log.info(
            "store %s: removed %s left by an interrupted write",
            store_cfg.name,
            plural(removed, "memsync temp file"),
        )
    return removed


def _forget_vanished_dir(track: Track, worktree: Path, state: SyncState) -> None:
    """A tracked directory whose live root is gone (renamed, moved, a project checkout without it) is
    not an agent deleting each file in it (DESIGN "Deletions", I1): forget what was synced there, so
    publish deletes nothing and deliver restores the files from the store, as for a deleted memory file.
    Paths with a pending publish keep their record: reconcile must settle a store write cut short."""
    if track.live.exists() or track.live.is_symlink() or not (worktree / track.store_path).is_dir():
        return
    forgotten = [
        path for path in state.paths(track.store_path.strip("/")) if state.pending_publish(path) is None
    ]
    for path in forgotten:
        state.forget(path)
    if forgotten:
        log.warning(
            "%s: the tracked directory is gone; its files stay in the store and on the peers and "
            "are restored here (`memsync untrack` it to stop syncing it)",
            track.live,
        )

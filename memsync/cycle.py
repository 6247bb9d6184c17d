"""One sync cycle of one store, and what the CLI reads back about it (DESIGN "One sync cycle" steps 2-5;
issue 4 "CLI": `status`, `log`, `resync`).

A cycle: take the store's cycle lock (so the daemon's timers and events and a `memsync sync` from the CLI
never run git at the same time), open the store (recovery), reconcile and publish every track (the
secret scanner runs inside publish), commit once, exchange with the remotes, deliver every track, and
write ``status.json`` in the store's meta dir. Local changes are always committed before any fetch or
merge, so local work is never lost to a merge.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memsync.clock import future_in_store
from memsync.config import Config, StoreConfig, Track, load_config
from memsync.diskfull import ADVICE, is_full, named, nearly_full
from memsync.errors import MemsyncError
from memsync.formats.jsonl import parse_record
from memsync.fsio import atomic_write, sweep_temps
from memsync.hosts.claude_code import oversized_indexes
from memsync.layout import IGNORED_DIRS, is_append_only, is_aside, is_store_meta
from memsync.legacy import first_folds, fold_legacy
from memsync.merge import BOTH_KEPT_NOTE_PREFIX
from memsync.paths import StoreLayout
from memsync.store.exchange import Progress, RemoteOutcome
from memsync.store.facade import Store
from memsync.store.locks import hold_cycle
from memsync.store.written import commit_written
from memsync.syncstate import SyncState
from memsync.track import Clash, DeliverReport, PublishReport, deliver, describe_changes, publish, reconcile
from memsync.track_listing import list_tracks, untracked_group
from memsync.wording import plural

log = logging.getLogger(__name__)

LOCK_WAIT_S = 600.0
STATUS_FILE = "status.json"
GC_EVERY_CYCLES = 100
MAX_MESSAGE_CHARS = 16_000
_BOTH_KEPT = BOTH_KEPT_NOTE_PREFIX.encode("utf-8")


@dataclass(frozen=True)
class CycleReport:
    """What one cycle did for store ``store``.

    ``commit``/``commit_message``: the commit made from local changes (None when nothing changed);
    ``remotes``: one outcome per remote exchanged with (empty when the exchange was skipped);
    ``delivered``: "<track>: <file> <action>" per live file written; ``unpushed``: the most commits any
    remote lacks after the cycle; ``exchanged``: whether an exchange was attempted; ``clashes``: live
    paths where a file meets a directory of the store, not synced until the user renames them.
    """

    store: str
    commit: str | None
    commit_message: str | None
    remotes: tuple[RemoteOutcome, ...]
    delivered: tuple[str, ...]
    unpushed: int
    exchanged: bool
    clashes: tuple[Clash, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every remote was reached and nothing is left to push."""
        return self.exchanged and self.unpushed == 0 and all(o.status == "ok" for o in self.remotes)


def remote_error(outcome: RemoteOutcome) -> str | None:
    """The one-line problem of ``outcome``, None when the exchange went well."""
    return None if outcome.status == "ok" else outcome.message


def meta_dir(store_cfg: StoreConfig) -> Path:
    """The store's memsync meta dir (``<store>/.git/memsync``): state, status file, cycle lock."""
    return StoreLayout(store_cfg.path).meta_dir


@contextmanager
def cycle_lock(
    store_cfg: StoreConfig,
    wait_s: float = LOCK_WAIT_S,
    *,
    config: Path | None = None,
    stop: threading.Event | None = None,
) -> Iterator[None]:
    """Hold the store's cycle lock (a file lock in its meta dir, recording this process and the config
    file ``config``); waits up to ``wait_s`` seconds for another cycle to finish, with a line naming its
    holder (``storelock.hold_cycle``). Raises ``MemsyncError`` if the store does not exist or the wait
    ends, ``gitrun.Stopped`` when ``stop`` is set while waiting."""
    if not StoreLayout(store_cfg.path).exists:
        raise MemsyncError(
            f"cannot sync store {store_cfg.name!r}: {store_cfg.path} is not a memsync store. "
            f"Run `memsync init`, or fix stores.{store_cfg.name}.path in the config"
        )
    meta_dir(store_cfg).mkdir(parents=True, exist_ok=True)
    with hold_cycle(meta_dir(store_cfg), store_cfg.name, wait_s, config=config, stop=stop):
        yield


def open_store(config: Config, store_cfg: StoreConfig, stop: threading.Event | None = None) -> Store:
    """Open ``store_cfg``'s store with ``config``'s host, identity and network timeout (recovery
    included); ``stop``: see ``Store``. Raises ``MemsyncError``."""
    return Store.open(
        store_cfg, config.host, config.identity(), network_timeout_s=config.network_timeout_s, stop=stop
    )


def ensure_store(config: Config, store_cfg: StoreConfig) -> Store:
    """Create (or clone from the first remote) ``store_cfg``'s store if it does not exist, then open it.
    Raises ``MemsyncError`` (e.g. the directory is not empty, the remote is unreachable)."""
    return Store.init_or_clone(
        store_cfg, config.identity(), config.host, network_timeout_s=config.network_timeout_s
    )


def run_cycle(
    config: Config,
    store_cfg: StoreConfig,
    *,
    remotes: Collection[str] | None = None,
    full_reconcile: bool = True,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    lock_wait_s: float = LOCK_WAIT_S,
) -> CycleReport:
    """Run one sync cycle of store ``store_cfg`` (DESIGN "One sync cycle" steps 2-5) and write its status.

    ``remotes``: the remotes to exchange with (default all; the daemon leaves out those backing off,
    and with none local changes are still committed and what the store has is delivered).
    ``full_reconcile`` opens the store anew (recovery, and whatever a failed git step left in the
    working tree put back) and settles the sync state with the store by content first (on start and
    after a failure; always, from the CLI); without it, a store this process opened before is reused.
    ``progress``: see ``Store.exchange``. ``stop``: once set, git is killed and ``gitrun.Stopped``
    raised (what is cut short is recovered like after ``kill -9``). ``lock_wait_s`` bounds the wait for
    another cycle of the store (``cycle_lock``). Raises ``MemsyncError`` when the store is missing or
    broken, or a disk is full ("disk full: PATH"); the status file then records the error. Remote
    problems are not exceptions: they are in the report's ``remotes``.
    """
    with cycle_lock(store_cfg, lock_wait_s, config=config.path, stop=stop):
        started = time.time()
        try:
            report = _cycle(config, store_cfg, remotes, full_reconcile, progress, stop)
        except MemsyncError as exc:
            _opened.pop(store_cfg.path, None)
            _write_status(store_cfg, started, None, error=str(exc))
            raise
        except (OSError, sqlite3.Error) as exc:
            _opened.pop(store_cfg.path, None)
            error = _failure(store_cfg, exc)
            _write_status(store_cfg, started, None, error=error)
            raise MemsyncError(error) from exc
        _write_status(store_cfg, started, report)
        return report


def _failure(store_cfg: StoreConfig, exc: OSError | sqlite3.Error) -> str:
    """The one line for a cycle that failed with ``exc``: a full disk named by its path."""
    state = meta_dir(store_cfg) / "state.sqlite"
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


# Stores opened by earlier cycles of this process: opening runs recovery and rewrites the store's git
# config (several git processes), which a long-running daemon needs on start and after a failure only.
_opened: dict[Path, tuple[object, Store]] = {}


def _store_for(config: Config, store_cfg: StoreConfig, reopen: bool, stop: threading.Event | None) -> Store:
    key = (store_cfg, config.host, config.author_name, config.author_email, config.network_timeout_s, stop)
    cached = _opened.pop(store_cfg.path, None)
    store = cached[1] if cached is not None and cached[0] == key and not reopen else None
    if store is None:
        store = open_store(config, store_cfg, stop)
    _opened[store_cfg.path] = (key, store)
    return store


def _cycle(
    config: Config,
    store_cfg: StoreConfig,
    remotes: Collection[str] | None,
    full_reconcile: bool,
    progress: Progress | None,
    stop: threading.Event | None,
) -> CycleReport:
    store = _store_for(config, store_cfg, full_reconcile, stop)
    if full_reconcile:
        sweep_stale_temps(store_cfg)
    names = [name for name in store_cfg.remotes if remotes is None or name in remotes]
    with SyncState(store.meta_dir) as state:
        if full_reconcile:
            # Before publish reads or appends to a store file: what a failed or killed git step left
            # half-written is put back (what publish wrote before a crash is kept, and committed below).
            store.restore(keep=state.written())
        reports: list[PublishReport] = []
        reachable = [track for track in store_cfg.tracks if _reachable(track)]
        waiting = first_folds(reachable, store)
        for track in reachable:
            _forget_vanished_dir(track, store.worktree, state)
            if track in waiting:
                continue  # published after its first fold, once the exchange brought peers' copies
            if full_reconcile:
                reports.append(reconcile(track, store.worktree, state))
            reports.append(publish(track, store.worktree, state, grace_s=config.partial_line_grace_s))
        message = _shorten(describe_changes(reports)) or "memsync: recovered local changes"
        commit = commit_written(store, state, message)
        if full_reconcile:
            store.ensure_identity()
        outcomes = tuple(store.exchange(names, progress)) if names else ()
        merged = any(outcome.merged for outcome in outcomes)
        folds, folded, again = fold_legacy(
            store,
            reachable,
            state,
            waiting=waiting,
            merged=merged,
            full=full_reconcile,
            remotes=names,
            grace_s=config.partial_line_grace_s,
        )
        if folded is not None:
            commit, message = folded, _shorten(describe_changes([*reports, *folds]))
            outcomes += again
        delivered = [
            deliver(track, store.worktree, state, grace_s=config.partial_line_grace_s) for track in reachable
        ]
    if commit is not None and int(_read_status(store_cfg).get("cycles", 0)) % GC_EVERY_CYCLES == 0:
        store.gc_auto()
    unpushed = max((store.unpushed_count(name) for name in store_cfg.remotes), default=0)
    return CycleReport(
        store_cfg.name,
        commit,
        message if commit else None,
        outcomes,
        tuple(line for report in delivered for line in _delivered(report)),
        unpushed,
        exchanged=len(names) == len(store_cfg.remotes),
        clashes=tuple(clash for report in delivered for clash in report.clashes),
    )


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


# Tracked paths found behind a dangling symlink, warned about once until they are reachable again.
_unreachable: set[Path] = set()


def _reachable(track: Track) -> bool:
    """False while the live path or a directory above it is a symlink to nothing (a drive not mounted):
    that track is neither published (its files would read as deleted, I1) nor delivered (nothing is
    created in the symlink's place) until the target is back; the other tracks sync on."""
    dangling = next((p for p in (track.live, *track.live.parents) if p.is_symlink() and not p.exists()), None)
    if dangling is None:
        _unreachable.discard(track.live)
        return True
    if track.live not in _unreachable:
        _unreachable.add(track.live)
        log.warning(
            "%s: not synced while the symlink %s points to nothing (a drive not mounted?); its files "
            "stay in the store and on the peers",
            track.live,
            dangling,
        )
    return False


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


def _shorten(message: str) -> str:
    """``message`` cut to MAX_MESSAGE_CHARS at a list boundary: git gets it as one argument, which the
    OS caps (128 KiB on Linux), and thousands of changed files would pass that."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    kept = message[:MAX_MESSAGE_CHARS].rsplit(", ", 1)[0]
    return f"{kept}, ... (message shortened: {len(message) - len(kept)} more characters)"


def _delivered(report: DeliverReport) -> list[str]:
    return [
        f"{report.name}: {c.label or c.path} {c.action}"
        + (f" (+{plural(c.lines, 'line')})" if c.lines else "")
        for c in report.changes
    ]


# --- status --------------------------------------------------------------------------------------


def _now_iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def _read_status(store_cfg: StoreConfig) -> dict[str, Any]:
    try:
        data = json.loads((meta_dir(store_cfg) / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_status(
    store_cfg: StoreConfig, started: float, report: CycleReport | None, error: str | None = None
) -> None:
    """Merge this cycle's facts into ``status.json`` (earlier per-remote successes are kept). Never
    creates the meta dir: a store that vanished gets no status file in its place."""
    if not meta_dir(store_cfg).is_dir():
        return
    try:
        _update_status(store_cfg, started, report, error)
    except (OSError, sqlite3.Error) as exc:  # e.g. disk full: the cycle's own outcome matters more
        log.log(
            logging.DEBUG if error else logging.WARNING,
            "store %s: could not write %s: %s",
            store_cfg.name,
            STATUS_FILE,
            exc,
        )


def _update_status(
    store_cfg: StoreConfig, started: float, report: CycleReport | None, error: str | None
) -> None:
    old = _read_status(store_cfg)
    old_remotes = old.get("remotes", {}) if isinstance(old.get("remotes"), dict) else {}
    remotes: dict[str, Any] = {}
    for name, url in store_cfg.remotes.items():
        entry = dict(old_remotes.get(name, {}))
        entry["url"] = url
        remotes[name] = entry
    cycles = int(old.get("cycles", 0)) + 1
    status: dict[str, Any] = {
        "store": store_cfg.name,
        "path": str(store_cfg.path),
        "branch": store_cfg.branch,
        "last_cycle": _now_iso(started),
        "last_cycle_error": error,
        "cycles": cycles,
        "unpushed": old.get("unpushed", 0),
        "remotes": remotes,
        "clashes": old.get("clashes", []),
    }
    if report is not None:
        status["clashes"] = [
            {"file": str(clash.live), "store_path": clash.path, "here": clash.here, "advice": clash.advice()}
            for clash in report.clashes
        ]
        for outcome in report.remotes:
            entry = remotes.setdefault(outcome.remote, {})
            entry["status"] = outcome.status
            entry["last_error"] = remote_error(outcome)
            if outcome.status == "ok":
                entry["last_success"] = _now_iso(time.time())
        status["unpushed"] = report.unpushed
    changed = report is None or report.commit or report.delivered or any(o.merged for o in report.remotes)
    if changed or "size_bytes" not in old:
        status.update(_store_facts(store_cfg))
    else:  # an idle cycle: the store's files are as the last walk found them; only held lines may move
        status.update({key: old.get(key) for key in ("both_kept", "set_aside", "untracked", "size_bytes")})
        status["held_back_secrets"] = _held(store_cfg)
    atomic_write(
        meta_dir(store_cfg) / STATUS_FILE,
        json.dumps(status, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8"),
    )


def _store_facts(store_cfg: StoreConfig) -> dict[str, Any]:
    """What `status` lists that is read from the store itself: held-back secrets, both-kept files, files
    moved aside for a directory, store content no track maps here, and the store's size in bytes."""
    held = _held(store_cfg)
    both_kept: list[str] = []
    set_aside: list[str] = []
    untracked: set[str] = set()
    size = 0
    root = store_cfg.path
    git_dir = StoreLayout(root).git_dir
    # Legacy store paths still hold what machines not upgraded yet sync there; they are folded, not lost.
    folded = tuple(old for track in store_cfg.tracks for old in track.legacy)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        in_git = here.is_relative_to(git_dir)  # once per directory: thousands of files share one
        for name in filenames:
            path = here / name
            try:
                size += path.lstat().st_size
            except OSError:
                continue
            if in_git:
                continue
            rel = path.relative_to(root).as_posix()
            if is_store_meta(rel):
                continue
            if _live_path(store_cfg.tracks, rel) is None and not any(
                rel.startswith(old + "/") or rel == old for old in folded
            ):
                untracked.add(untracked_group(rel, store_cfg.tracks))
            if not is_append_only(rel) and _has_both_kept(path):
                both_kept.append(str(_live_path(store_cfg.tracks, rel) or rel))
            if is_aside(rel):
                set_aside.append(str(_live_path(store_cfg.tracks, rel) or rel))
        dirnames.sort()
    return {
        "held_back_secrets": held,
        "both_kept": sorted(both_kept),
        "set_aside": sorted(set_aside),
        "untracked": sorted(untracked),
        "size_bytes": size,
    }


def _held(store_cfg: StoreConfig) -> list[dict[str, Any]]:
    """The lines the secret scanner keeps on this machine: live file, store path, line, detector."""
    if not (meta_dir(store_cfg) / "state.sqlite").exists():
        return []
    with SyncState(meta_dir(store_cfg)) as state:
        return [
            {
                "file": str(_live_path(store_cfg.tracks, rel) or rel),
                "store_path": rel,
                "line": line.line,
                "detector": line.detector,
            }
            for rel, line in state.held()
        ]


def _has_both_kept(path: Path) -> bool:
    try:
        return _BOTH_KEPT in path.read_bytes()
    except OSError:
        return False


def _live_path(tracks: tuple[Track, ...], rel: str) -> Path | None:
    """The live path of store path ``rel`` on this machine, None when no track maps it (or the track
    leaves it out: ``Track.excludes``)."""
    for track in tracks:
        prefix = track.store_path.strip("/")
        if rel == prefix:
            return track.live
        if rel.startswith(prefix + "/"):
            live = track.live / rel[len(prefix) + 1 :]
            return None if any(live.is_relative_to(p) for p in track.excludes) else live
    return None


def collect_status(path: Path) -> dict[str, Any]:
    """Everything `memsync status` shows, for the config file ``path``, as plain JSON data.

    ``{"config": str, "host": str, "daemon": {"running": bool, "pid": int|None}, "stores": {name: {...}}}``
    where each store has path, branch, tracks (``track_listing.list_tracks``: path, store_path, files,
    exists, excludes), last_cycle, last_cycle_error, remotes (url, status, last_success, last_error),
    unpushed, held_back_secrets (file, line, detector), future_entries (file, store_path, id, created_at,
    host, advice: entries dated beyond ``clock.TOLERANCE_S`` in this clock's future), both_kept,
    set_aside (files a merge moved out of a directory's way), clashes (file, store_path, here:
    "file"/"directory", advice: a file meeting a directory, not synced until renamed), untracked,
    size_bytes, partly_loaded (file, lines, bytes: a synced ``MEMORY.md`` longer than Claude Code
    loads). Reads the status file the last cycle
    wrote (facts read from the store itself are refreshed). Raises ``MemsyncError`` for a bad config.
    """
    from memsync.instance import running_daemon_pid

    config = load_config(path)
    pid = running_daemon_pid(path)
    stores: dict[str, Any] = {}
    for name, store_cfg in config.stores.items():
        status = _read_status(store_cfg)
        remotes = status.get("remotes") if isinstance(status.get("remotes"), dict) else {}
        assert isinstance(remotes, dict)
        stores[name] = {
            "path": str(store_cfg.path),
            "branch": store_cfg.branch,
            "last_cycle": status.get("last_cycle"),
            "last_cycle_error": status.get("last_cycle_error"),
            "remotes": {
                r: {
                    "url": url,
                    "status": remotes.get(r, {}).get("status"),
                    "last_success": remotes.get(r, {}).get("last_success"),
                    "last_error": remotes.get(r, {}).get("last_error"),
                }
                for r, url in store_cfg.remotes.items()
            },
            "unpushed": status.get("unpushed", 0),
            "clashes": status.get("clashes", []),
            "exists": StoreLayout(store_cfg.path).exists,
            "tracks": list_tracks(store_cfg),
            "partly_loaded": [
                {"file": str(index), "lines": lines, "bytes": size}
                for index, lines, size in oversized_indexes(track.live for track in store_cfg.tracks)
            ],
        }
        facts = (
            _store_facts(store_cfg)
            if stores[name]["exists"]
            else {"held_back_secrets": [], "both_kept": [], "set_aside": [], "untracked": [], "size_bytes": 0}
        )
        stores[name].update(facts)
        stores[name]["future_entries"] = [
            {
                "file": str(_live_path(store_cfg.tracks, entry.file) or entry.file),
                "store_path": entry.file,
                "id": entry.entry_id,
                "created_at": entry.created_at,
                "host": entry.host,
                "advice": entry.advice(),
            }
            for entry in (future_in_store(store_cfg.path) if stores[name]["exists"] else [])
        ]
    return {
        "config": str(path),
        "host": config.host,
        "daemon": {"running": pid is not None, "pid": pid},
        "stores": stores,
    }


# --- log and resync ------------------------------------------------------------------------------


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
    config = load_config(path)
    lines: list[str] = []
    for store_cfg in config.stores.values():
        store = Store(store_cfg, config.host, config.identity())
        if not StoreLayout(store_cfg.path).exists:
            continue
        for selector in _selectors(store_cfg, target):
            entry_id = selector if selector and not (store_cfg.path / selector).exists() else None
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


def resync(path: Path, remote: str, store_name: str | None = None, *, adopt_unrelated: bool = False) -> str:
    """`memsync resync`: adopt ``remote``'s rewritten history in the store that has it (``store_name``
    when several do), reset the sync state (``purge.reset_sync_state``: live files are reconciled by
    content, whole files over their last synced version without the purged lines), and run a cycle.
    When the remote carries purge records (another machine ran `memsync purge`), the lines they list
    are first removed from the live files and the local history (``purge.adopt_purge_records``), so
    the purged text does not come back. A remote unrelated to the store (``storeid``: no commit in
    common, another store id) is refused before anything changes, unless ``adopt_unrelated``. Returns a
    one-line summary. Raises ``MemsyncError`` (unknown remote, ambiguous store, unreachable, unrelated)."""
    from memsync.purge import adopt_purge_records, reset_sync_state  # purge imports this module

    config = load_config(path)
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
    report = run_cycle(config, store_cfg)
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

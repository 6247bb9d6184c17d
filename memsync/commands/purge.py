"""Purge: remove a secret or a wrong entry from the live files and from a store's whole history (DESIGN
I6).

What it does, for each selected store, under the store's cycle lock:

1. Exchange with every remote first (fetch, merge, push), so the rewritten history contains every peer's
   work and the one force push drops nothing. A remote that cannot be reached stops the purge before
   anything changed: a remote left with the old history would merge the text back later. A remote whose
   history was rewritten (most likely by another machine's purge) is adopted first, as `memsync resync`
   does (:func:`adopt_purge_records`, then ``Store.resync``): this purge then rewrites that history, so
   it keeps the other purge and its record instead of force-pushing it away.
2. Remove every matching line from this machine's tracked live files (atomic replace, under the writer
   lock): a line holding TEXT, or (``--entry ID``) every memory-file line whose ``id`` is ID. Temp files
   a killed memsync write left behind (whole copies of memory text) are deleted first
   (``cycle.sweep_stale_temps``).
3. Rewrite every ref of the store (``git fast-export --all`` -> drop the matching lines from every blob
   and message -> ``git fast-import --force``), then expire the reflogs and prune, so no object holding
   the text is left. The rewrite is deterministic: two machines purging the same text from the same
   commits get the same new commits, so their histories still join.
4. Push the rewritten history to each remote that still has the old one: a force push with a lease on
   the head just fetched. It is the only force push memsync ever makes, and only when the user asks.
   A remote that already has the rewritten history (the same purge made on another machine) is adopted
   instead (``Store.resync``), after checking it no longer holds the text.
5. Reset the sync state (:func:`reset_sync_state`), so the next cycle reconciles the cleaned live files
   with the cleaned store: by content, and for whole files over their last synced version without the
   purged lines.

Between steps 3 and 4 the purge commits a *purge record*: one line appended to ``.memsync/purged.jsonl``
in the store, holding the SHA-256 of every line it removed (live files, blobs and messages), never the
text. Every other machine with the store sees the remote as rewritten (``status``) and runs either the
same ``memsync purge`` or ``memsync resync``; both first remove the recorded lines from that machine's
live files and from its own whole history, by hash, with the same filter (:func:`adopt_purge_records`).
The rewrite is deterministic, so that machine's old commits become exactly the remote's rewritten ones:
nothing of the old history is re-applied, and work made there since the purge is kept and pushed.
The record file is merged as JSON Lines (union), so records made on several machines all survive.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memsync.base.fsio import atomic_write, writer_lock
from memsync.base.layout import STORE_META_DIR, is_ignored
from memsync.base.wording import plural
from memsync.commands.needle import RECORD_PREFIX, Needle
from memsync.commands.store_records import append_and_commit
from memsync.config.file import Config, StoreConfig, Track
from memsync.cycle.run import sweep_stale_temps
from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import parse_record
from memsync.store.access import cycle_lock, open_store
from memsync.store.facade import Store
from memsync.store.rewrite import Rewriter, line_hash
from memsync.store.written import commit_written
from memsync.sync.state import SyncState
from memsync.tracks.resolve import load_stores

log = logging.getLogger(__name__)

PURGE_RECORD = f"{STORE_META_DIR}/purged.jsonl"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class PurgeReport:
    """What purge did to one store.

    ``live_lines``: lines removed from live files; ``live_files``: those files; ``objects_changed``: blobs
    and messages rewritten in the history; ``remotes``: one line per remote saying what happened there.
    """

    store: str
    live_lines: int
    live_files: tuple[Path, ...]
    objects_changed: int
    remotes: tuple[str, ...]

    @property
    def found(self) -> bool:
        """True when the text was anywhere (live files or history)."""
        return bool(self.live_lines or self.objects_changed)


def purge(path: Path, needle: Needle, store_name: str | None = None) -> list[PurgeReport]:
    """`memsync purge` for the config file ``path``: see the module docstring. ``store_name`` limits it to
    one store (default: every store). Returns one report per store. Raises ``MemsyncError`` (unknown
    store, a remote unreachable or moving, a remote rewritten by someone else that still holds the text,
    git failing), in which case nothing was force-pushed."""
    config = load_stores(path)
    if store_name is not None and store_name not in config.stores:
        raise MemsyncError(
            f"cannot purge: no store named {store_name!r} in {path}. "
            f"Stores: {', '.join(config.stores) or 'none'}"
        )
    names = [store_name] if store_name is not None else list(config.stores)
    return [_purge_store(config, config.stores[name], needle) for name in names]


def _purge_store(config: Config, store_cfg: StoreConfig, needle: Needle) -> PurgeReport:
    with cycle_lock(store_cfg, config=config.path):
        store = open_store(config, store_cfg)
        with SyncState(store.meta_dir) as state:
            commit_written(store, state, "memsync: recovered local changes")
        diverged: set[str] = set()
        for outcome in store.exchange():
            if outcome.status == "diverged":
                diverged.add(outcome.remote)  # rewritten, most likely by another machine's purge
            elif outcome.status != "ok":
                raise MemsyncError(
                    f"cannot purge store {store_cfg.name!r}: remote {outcome.remote}: "
                    f"{outcome.message}. Purge rewrites every remote, so all must be "
                    "reachable; retry when they are (nothing was changed)"
                )
        # Force-pushing this machine's rewrite over a rewritten remote would drop that rewrite's purge
        # record and bring its text back: adopt the remote first, and purge on top of its history.
        adopted = []
        for name in store_cfg.remotes:
            if name in diverged:
                adopted.append(adopt_purge_records(store, name))
                store.resync(name)
        git = Rewriter(store.git)
        before = {
            name: store.git.rev(f"refs/remotes/{name}/{store_cfg.branch}") for name in store_cfg.remotes
        }
        # This purge removes the lines of every record the history holds too, so no machine's earlier
        # purge is undone by this rewrite.
        known = _recorded_hashes(git, ["HEAD"])
        needle = dataclasses.replace(needle, line_hashes=needle.line_hashes | known)
        # A killed write's temp files hold whole copies of memory text that no scan below would clean.
        sweep_stale_temps(store_cfg)
        live_lines, live_files, live_dropped = _clean_live(store_cfg.tracks, needle)
        changed, history_dropped = git.rewrite(needle)
        if changed:
            _add_record(store, (live_dropped | history_dropped) - known)
        remotes = [
            _publish_rewrite(store, git, name, before[name], needle, name in diverged)
            for name in store_cfg.remotes
        ]
        reset_sync_state(store, needle)
    for done in adopted:
        live_lines += done.live_lines
        live_files += [path for path in done.live_files if path not in live_files]
        changed += done.objects_changed
    report = PurgeReport(store_cfg.name, live_lines, tuple(live_files), changed, tuple(remotes))
    log.debug(
        "store %s: purged %s: %d live lines, %d objects rewritten",
        store_cfg.name,
        needle.describe(),
        live_lines,
        changed,
    )
    return report


# --- live files ----------------------------------------------------------------------------------


def _live_files(track: Track) -> Iterator[Path]:
    """The regular files of a tracked path (a file, or a directory walked without following symlinks)."""
    if track.live.is_file() and not track.live.is_symlink():
        yield track.live
        return
    for dirpath, dirnames, filenames in os.walk(track.live):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not is_ignored(d)]
        for name in filenames:
            path = here / name
            if (
                not is_ignored(path.relative_to(track.live).as_posix())
                and path.is_file()
                and not path.is_symlink()
            ):
                yield path


def _clean_live(tracks: tuple[Track, ...], needle: Needle) -> tuple[int, list[Path], frozenset[str]]:
    """Drop the matching lines from every live file of ``tracks`` (atomic replace under the writer
    lock): returns how many lines went, from which files, and their :func:`line_hash` values."""
    removed, files = 0, []
    hashes: set[str] = set()
    for track in tracks:
        for path in _live_files(track):
            try:
                with writer_lock(path):
                    data = path.read_bytes()
                    kept, dropped = needle.drop_lines(data)
                    if dropped:
                        atomic_write(path, kept)
            except OSError as exc:
                raise MemsyncError(
                    f"cannot purge {path}: {exc.strerror or exc}. Fix its permissions and run the purge again"
                ) from exc
            if dropped:
                removed += len(dropped)
                files.append(path)
                hashes.update(line_hash(line) for line in dropped)
    return removed, files, frozenset(hashes)


# --- purge records -------------------------------------------------------------------------------


def record_line(hashes: Iterable[str], host: str, at: datetime) -> bytes:
    """One purge record (a JSON line starting with ``RECORD_PREFIX``): the sorted line hashes, the
    host and UTC time of the purge, and an id derived from the hashes. Holds no purged text."""
    lines = sorted(set(hashes))
    record = {
        "memsync_purge": 1,
        "created_at": at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "id": "purge-" + hashlib.sha256("".join(lines).encode()).hexdigest()[:16],
        "host": host,
        "lines": lines,
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def recorded_hashes(data: bytes) -> frozenset[str]:
    """Every line hash the purge records in ``data`` (a purge record file) list. Lines that are not
    records and values that are not SHA-256 hex digests are skipped: the file is peer content (I8)."""
    found: set[str] = set()
    for raw in data.splitlines():
        record = parse_record(raw) if raw.startswith(RECORD_PREFIX) else None
        listed = record.get("lines") if record is not None else None
        if isinstance(listed, list):
            found.update(h for h in listed if isinstance(h, str) and _SHA256_HEX.fullmatch(h))
    return frozenset(found)


def _recorded_hashes(git: Rewriter, commits: Iterable[str]) -> frozenset[str]:
    """The line hashes listed by the purge record file of each of ``commits`` (a ref or sha; one without
    a record file, or a ref that does not exist, lists none)."""
    found: set[str] = set()
    for commit in commits:
        shown = git.show(commit, PURGE_RECORD)
        if shown is not None:
            found |= recorded_hashes(shown)
    return frozenset(found)


def _add_record(store: Store, hashes: frozenset[str]) -> None:
    """Append a record of ``hashes`` to the store's purge record file and commit it (nothing to do when
    ``hashes`` is empty: every removed line was recorded already)."""
    if not hashes:
        return
    append_and_commit(
        store,
        PURGE_RECORD,
        record_line(hashes, store.host, datetime.now(UTC)),
        f"memsync: purge record ({len(hashes)} removed line(s), by hash; no text)",
    )


def adopt_purge_records(store: Store, remote: str) -> PurgeReport:
    """Honour the purge records ``remote`` carries before `memsync resync` adopts its history (call under
    the store's cycle lock): fetch the remote; remove every line its record file lists (by
    :func:`line_hash`) from this machine's tracked live files and from the store's whole history, with
    the purge's own filter. The rewrite is deterministic, so this machine's commits from before the
    purge become the remote's rewritten ones and ``Store.resync`` re-applies only what was committed here
    since, without the recorded lines; lines no record lists are kept. Commit first
    (``cycle.commit_written``): only history is filtered. Returns what was removed (all zero when the
    remote has no record, or this machine already removed its lines). Raises ``MemsyncError`` when the
    remote cannot be fetched or git fails."""
    head = store.fetch(remote)
    git = Rewriter(store.git)
    hashes = _recorded_hashes(git, [head] if head is not None else [])
    if not hashes:
        return PurgeReport(store.cfg.name, 0, (), 0, ())
    needle = Needle(line_hashes=hashes)
    live_lines, live_files, _ = _clean_live(store.cfg.tracks, needle)
    changed, _ = git.rewrite(needle)
    if live_lines or changed:
        log.info(
            "store %s: honoured %s's purge records: %s removed, %s rewritten",
            store.cfg.name,
            remote,
            plural(live_lines, "live line"),
            plural(changed, "object"),
        )
    return PurgeReport(store.cfg.name, live_lines, tuple(live_files), changed, ())


def reset_sync_state(store: Store, needle: Needle | None = None) -> None:
    """Reset the sync state of ``store`` after a purge or `memsync resync` gave it another history.

    Every pending write is forgotten and every append-only file's offset becomes unknown (the live file
    may have lost lines), so the next cycle settles those by content (DESIGN "sync state"). Each whole
    file keeps its last synced version (and bytes kept from a delivery) without the lines ``needle``
    matches (default: every line the purge records at the store's head list): the three-way merge of a
    whole file edited here since then has the base the purged store copy was made from, so the edit
    merges instead of being kept beside it as a second version. Raises ``MemsyncError`` when git fails."""
    if needle is None:
        hashes = _recorded_hashes(Rewriter(store.git), ["HEAD"])
        needle = Needle(line_hashes=hashes) if hashes else None

    def clean(data: bytes | None) -> bytes | None:
        return data if data is None or needle is None else needle.drop_lines(data)[0]

    # Row by row, never cleared: each file keeps a row, so publish does not take an append-only file in a
    # track it knows for a new one (and publish all its lines again). One transaction; were it lost, each
    # file's old row is settled by the next cycle as well: an old offset no longer matches a live file
    # the purge shortened (by content), and an old base merges the purged lines out (both sides lost them).
    with SyncState(store.meta_dir) as state:
        with state.batch():
            for path in state.paths():
                old = state.get(path)
                if old is not None:
                    state.put(old.purged(clean))
                state.drop_publish(path)
                state.drop_delivery(path)
        state.scrub()


def _publish_rewrite(
    store: Store, git: Rewriter, remote: str, before: str | None, needle: Needle, diverged: bool
) -> str:
    """Bring ``remote`` to the rewritten history; return what was done, in one line.

    ``before`` is the remote head merged before the rewrite. If the remote still has exactly that head and
    it was rewritten away here, the remote holds the old history: force push. A head this store has (the
    remote already purged, by this or another machine) is adopted; a head never seen is fetched and
    adopted only if it does not hold the text."""
    head = git.remote_head(remote)
    local = store.head()
    if head is None or local is None:
        store.resync(remote)  # an empty remote: pushed; the recorded head is refreshed either way
        return f"{remote}: pushed"
    known = git.has_commit(head)
    if not known and head == before:
        # The one force push memsync makes, with a lease on the head this purge started from.
        git.force_push(remote, head)
        store.resync(remote)  # trust the remote's new head (it is this store's own)
        return f"{remote}: force-pushed the rewritten history (the only force push memsync makes)"
    if not known:
        git.fetch(remote)
        if git.holds(head, needle):
            raise MemsyncError(
                f"cannot purge store {store.cfg.name!r}: remote {remote} has a history this "
                f"machine never had and it still holds {needle.describe()}. Run `memsync "
                f"resync {remote}`, then purge again"
            )
    adopted = diverged or not git.is_ancestor(head, local)
    # resync also refreshes the remote head memsync recorded, which the rewrite may have pruned.
    outcome = store.resync(remote)
    return f"{remote}: adopted its purged history ({outcome.message})" if adopted else f"{remote}: pushed"

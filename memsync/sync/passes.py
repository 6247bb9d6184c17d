"""Publish (live -> store worktree), reconcile (settle by content) and deliver (store worktree -> live)
for one tracked path: the passes of DESIGN "One sync cycle" steps 2 and 5, with invariants I1 (no line
lost), I2 (no torn line), I5 (safe writes), I6 (no secret leaves the machine) and I7 (crash safety).

File-system operations only: the store worktree is a plain directory here; committing and exchanging are
the cycle's job. Each pass visits every file of the track (``memsync.sync.files``), or those the cycle
names (what changed), once, by kind:
append-only files by byte offset (``appendonly``, ``appendonly_delivery``), whole files by three-way
merge (``wholefile``, ``wholefile_delivery``). Its writes are applied in groups (``writes``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Collection
from pathlib import Path

from memsync.base.layout import is_append_only, kind_of
from memsync.config.file import Track
from memsync.secrets.allowed import allowed_in
from memsync.secrets.files import scan_name
from memsync.sync.appendonly import publish_append
from memsync.sync.appendonly_delivery import deliver_append
from memsync.sync.clashes import clash_of, store_in_the_way
from memsync.sync.collector import Collector, PublishMode
from memsync.sync.files import Emptied, TrackFile, emptied_advice, track_files, unavailable
from memsync.sync.notices import Notices
from memsync.sync.records import HeldLine, kind_of_record
from memsync.sync.reports import DeliverReport, PublishReport, track_name
from memsync.sync.state import SyncState
from memsync.sync.wholefile import publish_whole
from memsync.sync.wholefile_delivery import deliver_whole, give_way


def publish(
    track: Track,
    worktree: Path,
    state: SyncState,
    now: float | None = None,
    *,
    grace_s: float = 300.0,
    notices: Notices | None = None,
    labels: Collection[str] | None = None,
) -> PublishReport:
    """Publish the live files of ``track`` into the store worktree ``worktree`` (DESIGN step 2).

    Append-only files: the complete lines after the state's offset, in order, repeated lines included,
    minus the lines memsync delivered itself, appended to the store copy in one write. An unfinished last
    line is withheld; once it has stood unchanged for ``grace_s`` seconds (by the clock ``now``, seconds
    since the epoch, default ``time.time()``) memsync appends a newline to the live file, warns, and
    publishes it. A rewritten file (prefix hash mismatch) is settled by content (a union).
    Whole files: three-way merge of (last synced, store, live) written atomically to the store; deletion
    by the agent deletes the store copy when the store still has the last synced version.
    The secret scanner (:mod:`memsync.secrets.files`) runs first: flagged lines (whole-file versions, files
    whose name it flags) stay on this machine and are listed in the report's ``held``. A live file where
    the store has a directory (or a file above it) is not published (deliver reports the clash), nor is
    anything of a file unavailable here (``files.unavailable``: under a directory replaced by a file or a
    dangling symlink, itself a dangling symlink): its absence is no deletion, here or on a peer.
    ``notices``: what this process warned about already (default: nothing). ``labels``: only the files at
    these paths relative to the track (what changed since the last cycle; ``files.track_files``); None:
    every file. Raises ``OSError`` from the file system.
    """
    mode = PublishMode.publish(time.time() if now is None else now, grace_s)
    return _publish_pass(track, worktree, state, mode, notices or Notices(), labels)


def reconcile(
    track: Track, worktree: Path, state: SyncState, *, notices: Notices | None = None
) -> PublishReport:
    """Settle the sync state of ``track`` with its live files and the store copy by content (DESIGN "sync
    state", I7).

    Run on start and whenever state and store may disagree (after a crash). A recorded publish is applied
    when the store file has its "after" form, dropped when it has its "before" form (a torn append to the
    store is cut back to "before"), and otherwise the file is settled by content. A recorded delivery is
    applied when its bytes are in the live file at the expected offset, dropped when they are absent. An
    append-only file with no state, in a track the state knows nothing about (first run, cleared state),
    publishes the lines of the live file the store lacks (matched by content, see ``appendonly``; live
    order; secrets held back) and its offset becomes the end of its last complete line; a new file in a
    known track is left to ``publish``, which publishes all its lines. A whole file with no state is
    added, or merged over an empty base, or recorded as synced when equal. Nothing is published twice
    or lost. Returns what was published; raises ``OSError`` from the file system.
    """
    mode = PublishMode.reconcile(time.time())
    return _publish_pass(track, worktree, state, mode, notices or Notices(), None)


def deliver(
    track: Track,
    worktree: Path,
    state: SyncState,
    now: float | None = None,
    *,
    grace_s: float = 300.0,
    notices: Notices | None = None,
    labels: Collection[str] | None = None,
) -> DeliverReport:
    """Bring what the store worktree has into the live files of ``track`` (DESIGN step 5).

    Append-only files: the complete lines the store copy has and the live file lacks (multiset
    difference, store order) in one ``O_APPEND`` write, only when the live file holds exactly the
    accounted bytes (nothing unpublished, no unfinished line; otherwise it waits for the next publish).
    Nothing is appended while a process holds the live file open for writing without ``O_APPEND``
    (``memsync.base.writers``): it would overwrite the appended lines from its own file position. Where the
    platform cannot tell, a file publish found shrunk (an agent rewriting it in place) waits ``grace_s``
    seconds by the clock ``now`` (seconds since the epoch, default ``time.time()``).
    A missing live file is created with the store's complete lines (never over a file that appeared).
    Whole files: replaced atomically when the live file still equals the last synced version; bytes an
    agent wrote in the instant between check and swap are kept and published next cycle; a store file
    deleted by a peer deletes the live file only when it equals the last synced version.
    A live whole file the store now has as a directory gives way (is deleted as above, then the directory
    arrives) when it still equals the last synced version: a peer replaced it, and a version written here
    meanwhile is in the store beside the directory (``layout.aside_name``). Any other file meeting a
    directory of the same name (an edited live file, a live directory where the store has a file) is left
    alone on both sides and reported in ``clashes``, logged once per process in ``notices``. Store
    content that no track maps is not touched. ``labels``: only the files at these paths relative to the
    track (``files.track_files``); None: every file. Raises ``OSError`` from the file system.
    """
    out = Collector(state, notices or Notices())
    clock = time.time() if now is None else now
    emptied = Emptied(track, state)
    with state.batch():
        for f in track_files(track, worktree, state, labels):
            clash = clash_of(f)
            if clash is not None:
                if not give_way(f, clash, out):
                    out.report_clash(clash)
            elif (away := unavailable(f)) is not None:
                if out.notices.first(("unavailable", away)):
                    out.warn(
                        f"{away} is not the directory or file memsync syncs there: nothing under it syncs "
                        "or is deleted until it is one again (then the store's files arrive)"
                    )
            elif (held := emptied.folder(f)) is not None:
                _warn_emptied(*held, out)
            elif is_append_only(f.rel):
                deliver_append(f, clock, grace_s, out)
            else:
                deliver_whole(f, out)
            out.writes.flush(when_full=True)
        out.writes.flush()
    return DeliverReport(
        track_name(track), tuple(out.changes), tuple(out.waiting), tuple(out.warnings), tuple(out.clashes)
    )


def _publish_pass(
    track: Track,
    worktree: Path,
    state: SyncState,
    mode: PublishMode,
    notices: Notices,
    labels: Collection[str] | None,
) -> PublishReport:
    out = Collector(state, notices, allowed_in(worktree))
    # Whether the state knows the track: a file with a record answers it; else one query (every path).
    known_track = functools.cache(lambda: bool(state.paths(track.store_path.strip("/"))))
    emptied = Emptied(track, state)

    def publish_one(f: TrackFile) -> None:
        named = scan_name(f.rel)
        if unavailable(f) is not None:
            _set_aside(f, state)
        elif (held := emptied.folder(f)) is not None:
            _warn_emptied(*held, out)
        elif named is not None:
            _hold_named(f, named, out)
        elif is_append_only(f.rel):
            publish_append(f, mode, state.get(f.rel) is not None or known_track(), out)
        else:
            publish_whole(f, mode.incremental, out)
        out.writes.flush(when_full=True)

    with state.batch():
        blocked, indexes = [], []
        for f in track_files(track, worktree, state, _with_indexes(labels)):
            if store_in_the_way(f):
                blocked.append(f)
            elif kind_of(f.rel) == "index":
                indexes.append(f)
            else:
                publish_one(f)
        out.writes.flush()
        # An agent turned a file into a directory: the loop (the file sorts before the paths under it)
        # deleted the store's file since. (A file where the store has a directory stays blocked: the
        # files under it are unavailable here, never deleted; deliver reports the clash.)
        for f in blocked:
            if not store_in_the_way(f):
                publish_one(f)
        out.writes.flush()
        # Indexes last: their lines for the files held back above stay here (``withheld``).
        for f in indexes:
            publish_one(f)
        out.writes.flush()
    return PublishReport(track_name(track), tuple(out.changes), tuple(out.held), tuple(out.warnings))


def _with_indexes(labels: Collection[str] | None) -> Collection[str] | None:
    """``labels`` and the ``MEMORY.md`` beside each of them: an entry held back or published changes which
    of its index's lines may leave this machine (``withheld``)."""
    if labels is None:
        return None
    dirs = {label.rpartition("/")[0] for label in labels if label and kind_of(label) == "entry"}
    return {*labels, *(f"{d}/MEMORY.md" if d else "MEMORY.md" for d in dirs)}


def _set_aside(f: TrackFile, state: SyncState) -> None:
    """Publish nothing of ``f``, which is unavailable here (``files.unavailable``): its missing bytes are
    no deletion. The last synced version of a whole file is forgotten, so that when its directory comes
    back (empty, say) the store's version is delivered, not its deletion published; an append-only
    file's offset stays (the same bytes back are no new lines). A record with work in flight stays."""
    current = state.get_whole(f.rel)
    if (
        current is not None
        and current.in_sync
        and not is_append_only(f.rel)
        and state.pending_publish(f.rel) is None
        and state.pending_delivery(f.rel) is None
    ):
        state.forget(f.rel)


def _warn_emptied(folder: Path, count: int, out: Collector) -> None:
    if out.notices.first(("emptied", folder)):
        out.warn(emptied_advice(folder, count))


def _hold_named(f: TrackFile, detector: str, out: Collector) -> None:
    """Keep ``f``, whose path the scanner flags, on this machine: nothing of it enters the store (or a
    commit message); it is held at line 0 (the name) while the live file exists, reported once."""
    state = out.state
    current = state.get(f.rel)
    held = (HeldLine(0, detector),) if f.live.exists() else ()
    if current is None and not held:
        return
    if current is not None and not held and current.only_held:
        state.forget(f.rel)  # renamed or deleted: nothing but the hold was ever recorded for it
    elif current is None or current.held != held:
        state.put((current or kind_of_record(f.rel)(f.rel)).holding(held))
        out.report_held(f, held)

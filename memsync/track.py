"""Publish (live -> store worktree) and deliver (store worktree -> live) for one tracked path.

Implements DESIGN "One sync cycle" steps 2 (Publish) and 5 (Deliver), the reconcile-by-content of issue 4
"Sync state", and invariants I1 (no line lost), I2 (no torn line), I5 (safe writes), I6 (no secret
leaves the machine) and I7 (crash safety). File-system operations only: the store worktree is a plain
directory here; committing and exchanging are memsync.cycle's job.

Append-only files (memory files, daily logs) are synced by byte offset: the state records how many bytes
of the live file are accounted for and a hash of that prefix. Publish appends the complete lines after
the offset to the store copy; deliver appends the lines the store copy has and the live file lacks
(multiset difference, so a repeated line arrives as often as the store has it). Every write is preceded
by a record of the intended write in the sync state, so that after ``kill -9`` memsync can tell by content
whether the write happened (see ``reconcile``).

Content reconcile (no state, a rewritten live file, a store that moved under a pending publish) is a
union: the lines of the live file that the store lacks are appended to the store (``_present_in``: runs
of lines shared in the same order are the same lines; other non-blank lines count as present as often as
the store has them, since merges reorder memory files). Nothing is lost; a line edited in place is kept
in both its old and its new form. The ambiguity left: a non-blank line repeated outside any shared run
that the store already has from another writer is taken as the same line.

Whole files are synced by a three-way merge of (last synced, store, live) with the file's merge driver.
"""

from __future__ import annotations

import ctypes
import difflib
import errno
import functools
import hashlib
import logging
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from memsync.config import Track
from memsync.formats.jsonl.records import is_header, parse_record
from memsync.fsio import (
    TEMP_PREFIX,
    WriteBatch,
    WriteOp,
    append_once,
    atomic_write,
    fsync_dir,
    libc,
    temp_beside,
    writer_lock,
)
from memsync.layout import Kind, is_append_only, is_ignored, kind_of
from memsync.merge.kinds import merge_for_path
from memsync.merge.prefix import is_conflict_marker
from memsync.secrets.files import scan_appended, scan_name, scan_whole
from memsync.syncstate import FileState, HeldLine, PendingDelivery, PendingPublish, SyncState, digest
from memsync.writers import positional_writers

log = logging.getLogger(__name__)

Action = Literal["appended", "added", "changed", "deleted", "created", "replaced"]

_ABSENT = "absent"  # the digest of a file that does not exist
# Lines before an append that the secret scanner sees with it: a PEM key block is up to ~50 lines, and
# its BEGIN line may have been published (held back) in an earlier cycle than its body.
SCAN_CONTEXT_LINES = 100

# A pass applies its staged writes once this many files or bytes wait (see _Writes): few commits and
# syncs for thousands of files, bounded memory, and at most this many temp files left by a kill -9.
BATCH_FILES = 500
BATCH_BYTES = 16 << 20

# Every cycle checks every label of every track against the ignore patterns, twice (live and store walk):
# the labels repeat, and the patterns cost ~15 µs per label.
_is_ignored = functools.lru_cache(maxsize=1 << 16)(is_ignored)


@dataclass(frozen=True)
class FileChange:
    """One file changed by publish or deliver.

    ``path`` is the store path, ``label`` the path within the tracked directory ("" for a tracked file).
    Appends count ``lines``; for memory files also ``entries`` and ``tombstones`` among them.
    """

    path: str
    label: str
    kind: Kind
    action: Action
    lines: int = 0
    entries: int = 0
    tombstones: int = 0


@dataclass(frozen=True)
class HeldBack:
    """A line (append-only file) or version (whole file, ``line`` of the first finding) held back."""

    path: str
    line: int
    detector: str


@dataclass(frozen=True)
class PublishReport:
    """What publish (or reconcile) put into the store for one track: changes, held-back secrets, warnings.

    ``name`` is the track's short name (role or memory file stem) used in commit messages.
    """

    name: str
    changes: tuple[FileChange, ...] = ()
    held: tuple[HeldBack, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clash:
    """A file meeting a directory of the same name: the live files have one where the store has the other
    (a peer made it so; the store's merge settles such a clash between peers, see ``store``, but cannot
    rename a live file). ``path`` is the store path, ``live`` the live path here, ``here`` what the live
    path is. Nothing under ``path`` syncs here, and nothing is deleted, until the user renames it."""

    path: str
    live: Path
    here: Literal["file", "directory"]

    def advice(self) -> str:
        """One line for the user: what meets what, and what to rename."""
        there = "directory" if self.here == "file" else "file"
        return (
            f"{self.live} is a {self.here} here but a {there} in the store ({self.path}): nothing there "
            f"syncs until you rename {self.live} or move it away (then the store's {there} arrives, and "
            f"your {self.here} syncs under its new name)"
        )


@dataclass(frozen=True)
class DeliverReport:
    """What deliver wrote into the live files of one track, the files left waiting (path, reason), and the
    clashes of a file with a directory that keep paths from syncing here."""

    name: str
    changes: tuple[FileChange, ...] = ()
    waiting: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    clashes: tuple[Clash, ...] = ()


class _Writes:
    """The store (publish) or live (deliver) file writes of one pass, applied in groups (DESIGN I5, I7).

    A group's recorded intents are committed first (``SyncState.commit``), then its writes are made
    together with one sync (``fsio.WriteBatch``), then each write's ``then`` records the outcome,
    committed at once. A sync state transaction and two fsyncs per file made the first sync of 10,000
    files take ~50 s. Crash safety is that of a single write: a kill before the first commit loses the
    group's intents and its writes alike (the state is a cache, settled again by content); after it, the
    committed intents settle each write by content (``reconcile``), and a write made without an intent
    (first sight of a file, see ``_write_whole``) is settled as a rerun of that first sight. A staged
    file is not read again in the pass (each file is visited once), so its write may wait for the group.
    """

    def __init__(self, state: SyncState) -> None:
        self._state = state
        self._batch = WriteBatch()
        self._then: list[Callable[[bool], None]] = []

    def add(self, op: WriteOp, path: Path, data: bytes, then: Callable[[bool], None]) -> None:
        """Stage ``op`` (see ``WriteBatch.add``); ``then(done)`` runs once it is applied."""
        self._batch.add(op, path, data)
        self._then.append(then)

    def flush(self, *, when_full: bool = False) -> None:
        """Apply the staged writes (``when_full``: only once BATCH_FILES or BATCH_BYTES wait)."""
        full = len(self._batch) >= BATCH_FILES or self._batch.size >= BATCH_BYTES
        if not self._then or (when_full and not full):
            return
        then, self._then = self._then, []
        self._state.commit()
        for call, done in zip(then, self._batch.apply(), strict=True):
            call(done)
        self._state.commit()


@dataclass
class _Collect:
    """Mutable collector behind the frozen reports, with the pass's staged writes."""

    writes: _Writes
    changes: list[FileChange] = field(default_factory=list)
    held: list[HeldBack] = field(default_factory=list)
    waiting: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    clashes: list[Clash] = field(default_factory=list)
    # Files held open by positional writers (memsync.writers), looked up once per pass when first needed.
    writers: Callable[[], frozenset[str] | None] = field(
        default_factory=lambda: functools.cache(positional_writers)
    )

    def warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)


@dataclass(frozen=True)
class _Partial:
    """An unfinished last line to record: start offset, sha256 hex, first seen (seconds); None: none."""

    partial_at: int | None = None
    partial_hash: str | None = None
    partial_since: float | None = None


@dataclass(frozen=True)
class _File:
    """One tracked file: store path, live path, store worktree path, label within the track."""

    rel: str
    live: Path
    store: Path
    label: str


def track_name(track: Track) -> str:
    """The short name of ``track`` for commit messages: the role directory name or the file's stem."""
    name = PurePosixPath(track.store_path.rstrip("/")).name
    return name.removesuffix(".jsonl")


def publish(
    track: Track,
    worktree: Path,
    state: SyncState,
    now: float | None = None,
    *,
    grace_s: float = 300.0,
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
    the store has a directory (or a file above it) is not published (deliver reports the clash). Raises
    ``OSError`` from the file system.
    """
    return _run_publish(track, worktree, state, time.time() if now is None else now, grace_s, True)


def reconcile(track: Track, worktree: Path, state: SyncState) -> PublishReport:
    """Settle the sync state of ``track`` with its live files and the store copy by content (issue 4).

    Run on start and whenever state and store may disagree (after a crash). A recorded publish is applied
    when the store file has its "after" form, dropped when it has its "before" form (a torn append to the
    store is cut back to "before"), and otherwise the file is settled by content. A recorded delivery is
    applied when its bytes are in the live file at the expected offset, dropped when they are absent. An
    append-only file with no state, in a track the state knows nothing about (first run, cleared state),
    publishes the lines of the live file the store lacks (matched by content, see the module docstring;
    live order; secrets held back) and its offset becomes the end of its last complete line; a new file
    in a known track is left to ``publish``, which publishes all its lines. A whole file with no state is
    added, or merged over an empty base, or recorded as synced when equal. Nothing is published twice
    or lost. Returns what was published; raises ``OSError`` from the file system.
    """
    return _run_publish(track, worktree, state, time.time(), float("inf"), False)


def deliver(
    track: Track, worktree: Path, state: SyncState, now: float | None = None, *, grace_s: float = 300.0
) -> DeliverReport:
    """Bring what the store worktree has into the live files of ``track`` (DESIGN step 5).

    Append-only files: the complete lines the store copy has and the live file lacks (multiset
    difference, store order) in one ``O_APPEND`` write, only when the live file holds exactly the
    accounted bytes (nothing unpublished, no unfinished line; otherwise it waits for the next publish).
    Nothing is appended while a process holds the live file open for writing without ``O_APPEND``
    (``memsync.writers``): it would overwrite the appended lines from its own file position. Where the
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
    alone on both sides and reported in ``clashes``. Store content that no track maps is not touched.
    Raises ``OSError`` from the file system.
    """
    out = _Collect(_Writes(state))
    clock = time.time() if now is None else now
    with state.batch():
        for f in _files(track, worktree, state):
            clash = _clash(f)
            if clash is not None:
                if not _give_way(f, clash, state, out):
                    _report_clash(clash, out)
            elif is_append_only(f.rel):
                _deliver_append(f, state, clock, grace_s, out)
            else:
                _deliver_whole(f, state, out)
            out.writes.flush(when_full=True)
        out.writes.flush()
    return DeliverReport(
        track_name(track), tuple(out.changes), tuple(out.waiting), tuple(out.warnings), tuple(out.clashes)
    )


def describe_changes(reports: Iterable[PublishReport]) -> str:
    """A commit message for the published ``reports``, "" when nothing changed (issue 4 "Commit").

    One group per role or memory file, e.g. ``qa-engineer: +3 entries, 1 tombstone; scout:
    daily/2026-11-30.md +2 lines``. When the subject would pass 150 characters it names the groups only
    and the body lists every group.
    """
    groups: dict[str, list[str]] = {}
    for report in reports:
        for change in report.changes:
            name, label = _subject(report.name, change)
            groups.setdefault(name, []).append(_describe(replace(change, label=label)))
    lines = [f"{name}: {', '.join(parts)}" for name, parts in groups.items()]
    subject = "; ".join(lines)
    if len(subject) <= 150:
        return subject
    count = sum(len(parts) for parts in groups.values())
    return f"{count} changes in {', '.join(groups)}"[:150] + "\n\n" + "\n".join(lines)


def _subject(track: str, change: FileChange) -> tuple[str, str]:
    """Who a change is about and the label within it: the role or memory file its store path names
    (DESIGN's ``roles/<role>/``, ``projects/<project>/<role>/``, ``memory/<name>.jsonl``), so a folder
    track's commits read ``python-dev: daily/...``; else the track's name and the change's own label."""
    parts = PurePosixPath(change.path).parts
    if len(parts) > 2 and parts[0] == "roles":
        return parts[1], "/".join(parts[2:])
    if len(parts) > 3 and parts[0] == "projects":
        return f"{parts[1]}/{parts[2]}", "/".join(parts[3:])
    if len(parts) == 2 and parts[0] == "memory" and change.kind == "jsonl":
        return parts[1].removesuffix(".jsonl"), ""
    return track, change.label


def _describe(change: FileChange) -> str:
    """``+3 entries, 1 tombstone`` / ``daily/x.md +2 lines`` / ``MEMORY.md changed``."""
    what: str
    if change.action != "appended":
        what = change.action
    elif change.kind == "jsonl" and (change.entries or change.tombstones):
        counts = []
        if change.entries:
            counts.append(f"+{change.entries} {'entry' if change.entries == 1 else 'entries'}")
        if change.tombstones:
            counts.append(f"{change.tombstones} tombstone{'' if change.tombstones == 1 else 's'}")
        what = ", ".join(counts)
    else:
        what = f"+{change.lines} line{'' if change.lines == 1 else 's'}"
    return f"{change.label} {what}" if change.label else what


# --- enumerating files ---------------------------------------------------------------------------


def _is_file_track(track: Track, worktree: Path) -> bool:
    """A tracked file (True) or a tracked directory (False), from the live path, else the store copy."""
    if track.live.is_dir():
        return False
    if track.live.exists():
        return True
    store = worktree / track.store_path
    if store.is_dir():
        return False
    return store.is_file() or PurePosixPath(track.store_path).suffix != ""


def _files(track: Track, worktree: Path, state: SyncState) -> list[_File]:
    """Every file of ``track``: in the live directory, in the store copy, or known to the state; not
    those under ``track.excludes`` (another store's track owns them, live and store side alike)."""
    prefix = track.store_path.strip("/")
    store_root = worktree / prefix
    if _is_file_track(track, worktree):
        return [_File(prefix, track.live, store_root, "")]
    labels = _walk(track.live, follow_inside=True) | _walk(store_root, follow_inside=False)
    # _walk skipped the ignored paths already; only those known to the state alone need the check.
    labels |= {
        label
        for p in state.paths(prefix)
        if p != prefix
        if (label := p[len(prefix) + 1 :]) not in labels and not _is_ignored(label)
    }
    # Thousands of files share a few directories: check each directory for symlinks once.
    through_symlink = functools.cache(functools.partial(_through_symlink, track.live))
    return [
        _File(f"{prefix}/{label}", track.live / label, store_root / label, label)
        for label in sorted(labels)
        if ".." not in label.split("/")
        and not through_symlink(label.rpartition("/")[0])
        and not any((track.live / label).is_relative_to(owned) for owned in track.excludes)
    ]


def _through_symlink(root: Path, directory: str) -> bool:
    """True when ``directory`` (relative to ``root``, "" for root itself) or a directory on the way to it
    is a symlink: nothing is written through one."""
    here = root
    for part in PurePosixPath(directory).parts:
        here = here / part
        if here.is_symlink():
            return True
    return False


def _obstacle(path: Path, label: str) -> int | None:
    """What keeps a regular file from being at ``path``, the file ``label`` of a track ("" for a tracked
    file): how many levels above ``path`` a non-directory stands (the track's root included), 0 when
    ``path`` itself is a directory; None when nothing does."""
    for up in range(label.count("/") + 1 if label else 0, 0, -1):
        try:
            mode = path.parents[up - 1].stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISDIR(mode):
            return up
    return 0 if path.is_dir() else None


def _clash(f: _File) -> Clash | None:
    """The file meeting a directory that keeps ``f`` from syncing here (see ``Clash``), else None: one
    side has ``f`` as a file and the other a directory at its path or a file above it."""
    live_file = f.live.is_file()
    if live_file == f.store.is_file():
        return None
    up = _obstacle(f.store, f.label) if live_file else _obstacle(f.live, f.label)
    if up is None:
        return None
    # Above ``f`` the side holding the file has a directory; at ``f`` itself, the file.
    here: Literal["file", "directory"] = "directory" if (up > 0) == live_file else "file"
    if up == 0:
        return Clash(f.rel, f.live, here)
    return Clash(f.rel.rsplit("/", up)[0], f.live.parents[up - 1], here)


def _give_way(f: _File, clash: Clash, state: SyncState, out: _Collect) -> bool:
    """Delete the live whole file ``f`` that ``clash`` names when it still equals its last synced version
    (a peer turned it into a directory: a deletion that syncs, DESIGN "Deletions"); True when it is gone."""
    if clash.here != "file" or clash.path != f.rel or is_append_only(f.rel) or f.live.is_symlink():
        return False
    current = state.get(f.rel)
    if (
        current is None
        or not current.synced_known
        or current.kept_present
        or state.pending_delivery(f.rel) is not None
        or _read(f.live) != current.synced
    ):
        return False
    _deliver_remove(f, state, current, out)
    return not f.live.exists()


_CLASHES_WARNED: set[Clash] = set()


def _report_clash(clash: Clash, out: _Collect) -> None:
    """Add ``clash`` to the report once; log it once per process (it stays in every cycle's report)."""
    if clash not in out.clashes:
        out.clashes.append(clash)
    if clash not in _CLASHES_WARNED:
        _CLASHES_WARNED.add(clash)
        log.warning("%s", clash.advice())


def _store_in_the_way(f: _File) -> bool:
    """True when the live file ``f`` cannot be published because the store has a directory at its path or
    a file above it (a ``Clash``). An empty store directory in the way (git keeps no directories: one is
    left when a peer deletes the files in it) is removed instead."""
    if not f.live.is_file() or f.store.is_file():
        return False
    up = _obstacle(f.store, f.label)
    return up is not None and not (up == 0 and _remove_empty_dirs(f.store))


def _remove_empty_dirs(root: Path) -> bool:
    """Remove the store directory ``root`` when it holds nothing but directories; True when it is gone."""
    for here, _dirs, files in os.walk(root, topdown=False):
        if files:
            return False
        try:
            os.rmdir(here)
        except OSError:
            return False
    return not root.exists()


def _walk(root: Path, *, follow_inside: bool) -> set[str]:
    """Relative POSIX paths of the regular files under ``root``, skipping ignored paths.

    Symlinks are skipped, except (``follow_inside``) a symlink to a regular file inside ``root``.
    Symlinked directories are never entered. Unreadable directories and symlink loops are skipped.
    """
    found: set[str] = set()
    if not root.is_dir():
        return found
    real_root = root.resolve()
    # os.scandir's entries know their type from the directory listing: no stat per file.
    pending = [("", os.fspath(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            label = prefix + entry.name
            if _is_ignored(label):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append((label + "/", entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.add(label)
            elif follow_inside and entry.is_symlink():
                try:
                    target = Path(entry.path).resolve()
                except (OSError, RuntimeError):  # a symlink loop: Python 3.11 raises RuntimeError
                    continue
                if target.is_relative_to(real_root) and target.is_file():
                    found.add(label)
    return found


def _run_publish(
    track: Track,
    worktree: Path,
    state: SyncState,
    now: float,
    grace_s: float,
    incremental: bool,
) -> PublishReport:
    out = _Collect(_Writes(state))
    known_track = bool(state.paths(track.store_path.strip("/")))

    def publish_one(f: _File) -> None:
        named = scan_name(f.rel)
        if named is not None:
            _hold_named(f, state, named, out)
        elif is_append_only(f.rel):
            _publish_append(f, state, now, grace_s, incremental, known_track, out)
        else:
            _publish_whole(f, state, incremental, out)
        out.writes.flush(when_full=True)

    with state.batch():
        blocked = []
        for f in _files(track, worktree, state):
            if _store_in_the_way(f):
                blocked.append(f)
            else:
                publish_one(f)
        out.writes.flush()
        # An agent turned a directory into a file: the loop (paths under it sort after it) emptied it since.
        for f in blocked:
            if not _store_in_the_way(f):
                publish_one(f)
        out.writes.flush()
    return PublishReport(track_name(track), tuple(out.changes), tuple(out.held), tuple(out.warnings))


# --- small helpers -------------------------------------------------------------------------------

_NOT_REGULAR_WARNED: set[Path] = set()


def _read(path: Path) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist or is not a regular file (a FIFO or device
    in place of a memory file must not block the cycle: it is opened non-blocking and left alone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if not stat.S_ISDIR(mode) and path not in _NOT_REGULAR_WARNED:  # once per path and process
            _NOT_REGULAR_WARNED.add(path)
            log.warning("%s is not a regular file: memsync leaves it alone", path)
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _digest(data: bytes | None) -> str:
    return _ABSENT if data is None else digest(data)


_TAIL = 65536  # bytes: the end of an append-only store copy that identifies its before/after forms


def _size(path: Path) -> int:
    """The size of ``path`` in bytes, -1 when it does not exist."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


def _tail_mark(path: Path, size: int) -> str:
    """sha256 hex of the last ``_TAIL`` bytes of ``path``'s first ``size`` bytes; "absent" for size -1.

    An append-only store copy only grows while memsync holds the store, so its size and this digest tell
    its "before" form from its "after" form without reading a file of many megabytes.
    """
    return _ABSENT if size < 0 else digest(_tail_bytes(path, size, _TAIL))


def _tail_bytes(path: Path, size: int, count: int) -> bytes:
    """The last ``count`` bytes of the first ``size`` bytes of ``path`` (b"" when ``size`` <= 0)."""
    if size <= 0:
        return b""
    with path.open("rb") as handle:
        handle.seek(max(0, size - count))
        return handle.read(min(size, count))


def _stat_key(path: Path) -> str | None:
    """size:mtime_ns:inode of ``path``, None when it does not exist: changes whenever its content can."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"


def _split(data: bytes) -> list[bytes]:
    """The complete lines of ``data`` (each with its newline); an unfinished last line is left out."""
    return [line + b"\n" for line in data.split(b"\n")[:-1]]


def _lines(data: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """The lines of ``data[start:end]`` (``end`` just after a newline) with their start offsets."""
    found: list[tuple[int, bytes]] = []
    pos = start
    for line in _split(data[start:end]):
        found.append((pos, line))
        pos += len(line)
    return found


def _complete(data: bytes) -> bytes:
    """``data`` up to and including its last newline."""
    return data[: data.rfind(b"\n") + 1]


def _find_block(live: bytes, block: bytes, start: int, end: int) -> int | None:
    """Where ``block`` (whole lines) sits in ``live[start:end]`` at a line boundary, or None."""
    pos = live.find(block, start, end)
    while pos != -1:
        if pos == 0 or live[pos - 1 : pos] == b"\n":
            return pos
        pos = live.find(block, pos + 1, end)
    return None


def _lines_before(data: bytes, offset: int, count: int = SCAN_CONTEXT_LINES) -> list[bytes]:
    """The last ``count`` complete lines of ``data[:offset]`` (``offset`` at a line boundary)."""
    start = offset
    for _ in range(count):
        if start == 0:
            break
        start = data.rfind(b"\n", 0, start - 1) + 1
    return data[start:offset].splitlines(keepends=True)


def _jsonl_counts(lines: Iterable[bytes]) -> tuple[int, int]:
    """(entries, tombstones) among appended memory-file lines; headers and malformed lines not counted."""
    entries = tombstones = 0
    for line in lines:
        obj = parse_record(line.rstrip(b"\r\n"))
        if obj is None or is_header(obj):
            continue
        if obj.get("deleted") is True:
            tombstones += 1
        else:
            entries += 1
    return entries, tombstones


# --- settling recorded writes (crash recovery, DESIGN I7) ----------------------------------------


def _settle_publish(f: _File, state: SyncState) -> bool:
    """Settle a recorded publish of ``f``; False when the file must be settled by content."""
    pending = state.pending_publish(f.rel)
    if pending is None:
        return True
    if is_append_only(f.rel):
        size = _size(f.store)
        if size == pending.after_size and _tail_mark(f.store, size) == pending.after_hash:
            state.finish_publish(f.rel)
            return True
        if size == pending.before_size and _tail_mark(f.store, size) == pending.before_hash:
            state.drop_publish(f.rel)
            return True
        if (
            max(pending.before_size, 0) < size < pending.after_size
            and _tail_mark(f.store, pending.before_size) == pending.before_hash
        ):
            # Killed inside the append: cut the store copy (memsync's own file) back to "before".
            os.truncate(f.store, max(pending.before_size, 0))
            state.drop_publish(f.rel)
            return True
    else:
        digest = _digest(_read(f.store))
        if digest == pending.after_hash:
            state.finish_publish(f.rel)
            return True
        if digest == pending.before_hash:
            state.drop_publish(f.rel)
            return True
    state.drop_publish(f.rel)
    return False


def _settle_delivery_append(f: _File, state: SyncState, live: bytes | None) -> tuple[int, int] | None:
    """Settle a recorded append delivery of ``f``; returns the byte range it occupies when it landed
    after lines not yet published (publish then skips it), else None."""
    pending = state.pending_delivery(f.rel)
    if pending is None or pending.at_offset is None:
        return None
    current = state.get(f.rel)
    end = len(_complete(live)) if live is not None else 0
    pos = None if live is None else _find_block(live, pending.data, pending.at_offset, end)
    if pos is None:
        state.drop_delivery(f.rel)
        return None
    accounted = 0 if current is None or current.offset is None else current.offset
    if pos == pending.at_offset and accounted == pending.at_offset:
        state.finish_delivery(f.rel)
        return None
    return pos, pos + len(pending.data)


def _settle_delivery_whole(f: _File, state: SyncState) -> None:
    """Settle a recorded whole-file delivery: applied when the live file shows it, else dropped."""
    pending = state.pending_delivery(f.rel)
    if pending is None or pending.at_offset is not None:
        return
    live = _read(f.live)
    done = live is None if pending.remove else live == pending.data
    if done:
        state.finish_delivery(f.rel)
    else:
        state.drop_delivery(f.rel)


# --- publish: append-only files ------------------------------------------------------------------


def _publish_append(
    f: _File,
    state: SyncState,
    now: float,
    grace_s: float,
    incremental: bool,
    known_track: bool,
    out: _Collect,
) -> None:
    settled = _settle_publish(f, state)
    live = _read(f.live)
    if live is None:
        return
    skip = _settle_delivery_append(f, state, live)
    current = state.get(f.rel)
    if current is None and known_track:
        # A file new in a track memsync already syncs (not one it delivered: that has a state): every
        # line in it was written here, so all of them are published, even lines the store has from peers.
        current = FileState(f.rel, offset=0, prefix_hash=digest(b""))
    prefix = hashlib.sha256(memoryview(live)[: current.offset or 0] if current is not None else b"")
    shrunk = None if current is None else current.rewritten_since
    if not settled and current is not None and current.offset is not None:
        out.warn(f"{f.live}: the store copy changed under an unfinished publish; settling by content")
        current = None
    elif (
        current is not None
        and current.offset is not None
        and (len(live) < current.offset or prefix.hexdigest() != current.prefix_hash)
    ):
        out.warn(f"{f.live}: rewritten, not appended to; publishing the lines the store lacks (nothing lost)")
        if len(live) < current.offset:
            # Truncated, perhaps by an agent about to write from its own file position (not O_APPEND):
            # lines delivered now could be overwritten into a torn line, so deliver waits (I2, I5).
            shrunk = now
        current = None
    elif current is not None and current.offset and not f.store.exists():
        # Published before, yet the store has no copy (a store that adopted another history): by content.
        out.warn(f"{f.live}: the store lost its copy; publishing the file again")
        current = None
    if current is None or current.offset is None:
        _publish_by_content(f, state, current, live, now, grace_s, out, shrunk)
        return
    if not incremental:
        return
    live, partial, completed = _finish_partial(f, current, live, now, grace_s, out)
    end = max(len(_complete(live)), current.offset)
    # Neither memsync's own delivery nor a line it completed from the store is published back.
    pieces = [
        (pos, line)
        for pos, line in _lines(live, current.offset, end)
        if not any(r[0] <= pos < r[1] for r in (skip, completed) if r is not None)
    ]
    flagged = scan_appended(f.rel, [line for _, line in pieces], _lines_before(live, current.offset))
    held = tuple(
        HeldLine(live.count(b"\n", 0, pieces[i][0]) + 1, detector) for i, detector in sorted(flagged.items())
    )
    publish_lines = [line for i, (_, line) in enumerate(pieces) if i not in flagged]
    prefix.update(memoryview(live)[current.offset : end])
    then = replace(
        current,
        offset=end,
        prefix_hash=prefix.hexdigest(),
        held=current.held + held,
        partial_at=partial.partial_at,
        partial_hash=partial.partial_hash,
        partial_since=partial.partial_since,
    )
    _append_to_store(f, state, publish_lines, then, out, drop_delivery=skip is not None)
    _report_held(f, held, out)


def _publish_by_content(
    f: _File,
    state: SyncState,
    current: FileState | None,
    live: bytes,
    now: float,
    grace_s: float,
    out: _Collect,
    shrunk: float | None,
) -> None:
    """Union: append the live lines the store copy lacks (multiset difference, live order).

    ``shrunk`` (seconds) is recorded as the state's ``rewritten_since``.
    """
    if current is not None and current.offset is not None:
        # Record the doubt first: a crash from here on settles by content again, which is idempotent.
        state.put(replace(current, offset=None, prefix_hash=None))
    state.drop_delivery(f.rel)
    live, partial, _completed = _finish_partial(f, current, live, now, grace_s, out)
    end = len(_complete(live))
    store = _read(f.store) or b""
    if store and not store.endswith(b"\n"):
        store += b"\n"  # an unfinished store line still counts as that line
    live_lines = _lines(live, 0, end)
    present = _present_in(live_lines, _split(store))
    missing = [item for i, item in enumerate(live_lines) if i not in present]
    flagged = scan_appended(f.rel, [line for _, line in missing])
    held = tuple(
        HeldLine(live.count(b"\n", 0, missing[i][0]) + 1, detector) for i, detector in sorted(flagged.items())
    )
    publish_lines = [line for i, (_, line) in enumerate(missing) if i not in flagged]
    then = FileState(
        f.rel,
        offset=end,
        prefix_hash=digest(live[:end]),
        held=held,
        partial_at=partial.partial_at,
        partial_hash=partial.partial_hash,
        partial_since=partial.partial_since,
        rewritten_since=shrunk,
    )
    _append_to_store(f, state, publish_lines, then, out)
    _report_held(f, held, out)


def _present_in(live_lines: Sequence[tuple[int, bytes]], store_lines: Sequence[bytes]) -> set[int]:
    """Indexes of the live lines that the store copy already has, matched by content in context.

    Runs of lines the two files share in the same order are the same lines (leading lines first, then
    difflib's longest matching blocks), except a lone blank line, which says nothing about where it came
    from. Among the rest a non-blank line counts as present as often as the unmatched store lines have it
    (a memory file's lines may be reordered by merges); an unmatched blank line is published.
    """
    lines = [line for _, line in live_lines]
    same = 0
    while same < min(len(lines), len(store_lines)) and lines[same] == store_lines[same]:
        same += 1
    present = set(range(same))
    store_used: set[int] = set(range(same))
    matcher = difflib.SequenceMatcher(None, store_lines[same:], lines[same:], autojunk=False)
    for block in matcher.get_matching_blocks():
        if block.size >= 2 or (block.size == 1 and lines[same + block.b].strip()):
            present.update(range(same + block.b, same + block.b + block.size))
            store_used.update(range(same + block.a, same + block.a + block.size))
    have = Counter(line for j, line in enumerate(store_lines) if j not in store_used and line.strip())
    for i, line in enumerate(lines):
        if i not in present and have[line]:
            have[line] -= 1
            present.add(i)
    return present


def _finish_partial(
    f: _File, current: FileState | None, live: bytes, now: float, grace_s: float, out: _Collect
) -> tuple[bytes, _Partial, tuple[int, int] | None]:
    """Withhold an unfinished last line; past the grace period end it with a newline in the live file.
    In a file truncated in place, a last line that begins a line of the store copy is what the
    truncation cut: it is ended with the rest of that line instead, so no fragment becomes a line.

    Returns the live bytes to publish from, the ``partial_*`` state fields to record, and the byte range
    of a line completed from the store (None for none), which the store has already.
    """
    end = len(_complete(live))
    partial = live[end:]
    if not partial:
        return live, _Partial(), None
    partial_hash = digest(partial)
    same = current is not None and current.partial_at == end and current.partial_hash == partial_hash
    since = now
    if same and current is not None and current.partial_since is not None:
        since = current.partial_since
    if now - since < grace_s:
        return live, _Partial(end, partial_hash, since), None
    ending = b"\n"
    if current is not None and current.rewritten_since is not None:
        # Only a file truncated in place can end in a cut line: only then is the store copy read.
        ending = next(
            (
                line[len(partial) :]
                for line in _split(_read(f.store) or b"")
                if line.startswith(partial) and line.endswith(b"\n")
            ),
            b"\n",
        )
    with writer_lock(f.live):
        now_bytes = _read(f.live)
        # Only if nobody finished or extended the line meanwhile.
        if now_bytes is None or len(now_bytes) != len(live) or now_bytes[end:] != partial:
            return live, _Partial(end, partial_hash, since), None
        append_once(f.live, ending)
    line_no = live.count(b"\n") + 1
    if ending == b"\n":
        out.warn(
            f"{f.live}: line {line_no} had no newline for {grace_s:g} s; memsync ended it "
            "and published it as it is (a malformed line if it is incomplete)"
        )
        return live + ending, _Partial(), None
    out.warn(f"{f.live}: line {line_no} was cut by a truncation; memsync completed it from the store")
    return live + ending, _Partial(), (end, len(live) + len(ending))


def _append_to_store(
    f: _File,
    state: SyncState,
    lines: Sequence[bytes],
    then: FileState,
    out: _Collect,
    *,
    drop_delivery: bool = False,
) -> None:
    """Append ``lines`` to the store copy in one write (staged), recording the intent first; then apply
    ``then`` and, with ``drop_delivery``, drop the recorded delivery whose bytes ``then`` accounts for."""
    if not lines:
        if state.get(f.rel) != then:
            state.put(then)
        if drop_delivery:
            state.drop_delivery(f.rel)
        return
    data = b"".join(lines)
    size = _size(f.store)
    tail = _tail_bytes(f.store, size, _TAIL)
    if tail and not tail.endswith(b"\n"):
        data = b"\n" + data  # never glue a line onto an unfinished store line
    before_mark = _ABSENT if size < 0 else digest(tail)
    after_mark = digest((tail + data)[-_TAIL:])
    state.begin_publish(
        f.rel, PendingPublish(before_mark, size, after_mark, max(size, 0) + len(data), then), durable=False
    )
    seen_before = _stat_key(f.store)

    def appended(_: bool) -> None:
        state.finish_publish(f.rel)
        if then.store_seen is not None and then.store_seen == seen_before:
            # The store copy was wholly in the live file and only gained lines from it: still so, and the
            # next deliver need not read either file.
            state.put(replace(then, store_seen=_stat_key(f.store)))
        if drop_delivery:
            state.drop_delivery(f.rel)

    out.writes.add("append", f.store, data, appended)
    entries, tombstones = _jsonl_counts(lines) if kind_of(f.rel) == "jsonl" else (0, 0)
    out.changes.append(
        FileChange(f.rel, f.label, kind_of(f.rel), "appended", len(lines), entries, tombstones)
    )


def _report_held(f: _File, held: Sequence[HeldLine], out: _Collect) -> None:
    for item in held:
        out.held.append(HeldBack(f.rel, item.line, item.detector))
        out.warn(f"{f.live}: line {item.line} held back, it looks like a secret ({item.detector})")


def _hold_named(f: _File, state: SyncState, detector: str, out: _Collect) -> None:
    """Keep ``f``, whose path the scanner flags, on this machine: nothing of it enters the store (or a
    commit message); it is held at line 0 (the name) while the live file exists, reported once."""
    current = state.get(f.rel)
    held = (HeldLine(0, detector),) if f.live.exists() else ()
    if current is None and not held:
        return
    if current is not None and not held and current == FileState(f.rel, held=current.held):
        state.forget(f.rel)  # renamed or deleted: nothing but the hold was ever recorded for it
    elif current is None or current.held != held:
        state.put(replace(current or FileState(f.rel), held=held))
        _report_held(f, held, out)


# --- publish: whole files ------------------------------------------------------------------------


def _publish_whole(f: _File, state: SyncState, incremental: bool, out: _Collect) -> None:
    _settle_publish(f, state)  # a whole-file merge is idempotent, so "by content" needs nothing more
    _settle_delivery_whole(f, state)
    current = state.get(f.rel)
    live = _read(f.live)
    if (
        current is not None
        and current.synced_known
        and not current.kept_present
        and (not incremental or live == current.synced)
    ):
        return  # nothing to publish: the store copy need not be read
    store = _read(f.store)
    if current is not None and current.kept_present:
        _publish_kept(f, state, current, store, out)
        return
    if current is None or not current.synced_known:
        if live is None:
            return
        if live == store:
            state.put(FileState(f.rel, synced=live, synced_known=True))
            return
        # First sight of both: git's add/add rule, a merge over an empty base.
        new = live if store is None else merge_for_path(f.rel, b"", store, live)
        _write_whole(f, state, current, live, store, new, out)
        return
    if live is None:
        if store == current.synced:
            _store_write(f, state, store, None, FileState(f.rel, synced=None, synced_known=True), out)
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "deleted"))
        else:
            # Deleted here, changed by a peer: the change is kept (DESIGN "Deletions"); deliver restores it.
            state.put(FileState(f.rel, synced=None, synced_known=True))
        return
    if store == current.synced or store is None:
        new = live  # also a peer's deletion of a file changed here: the change is kept
    else:
        new = merge_for_path(f.rel, current.synced or b"", store, live)
    _write_whole(f, state, current, live, store, new, out)


def _write_whole(
    f: _File,
    state: SyncState,
    current: FileState | None,
    live: bytes,
    store: bytes | None,
    new: bytes,
    out: _Collect,
) -> None:
    """Scan ``live``; put ``new`` into the store unless flagged; the last synced version becomes ``live``."""
    finding = scan_whole(live)
    if finding is not None:
        held = (HeldLine(*finding),)
        if current is None or current.held != held:  # report a held version once, status lists it
            state.put(replace(current or FileState(f.rel), held=held))
            _report_held(f, held, out)
        return
    # With no state yet, a rerun after a crash finds live == store (or merges again): no intent needed.
    _store_write(
        f,
        state,
        store,
        new,
        FileState(f.rel, synced=live, synced_known=True),
        out,
        record=current is not None and current.synced_known,
    )
    if new != store:
        action: Action = "added" if store is None else "changed"
        out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), action))


def _publish_kept(f: _File, state: SyncState, current: FileState, store: bytes | None, out: _Collect) -> None:
    """Publish the bytes an agent wrote while deliver replaced the file (merged over their own base)."""
    kept = current.kept
    done = replace(current, kept=None, kept_base=None, kept_present=False, held=())
    if kept is None:
        # The agent deleted the file in that instant; deliver already restored a version, nothing is lost.
        state.put(done)
        return
    finding = scan_whole(kept)
    if finding is not None:
        held = (HeldLine(*finding),)
        if current.held != held:
            state.put(replace(current, held=held))
            _report_held(f, held, out)
        return
    new = kept if store is None else merge_for_path(f.rel, current.kept_base or b"", store, kept)
    _store_write(f, state, store, new, done, out)
    if new != store:
        out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "changed"))


def _store_write(
    f: _File,
    state: SyncState,
    before: bytes | None,
    after: bytes | None,
    then: FileState,
    out: _Collect,
    *,
    record: bool = True,
) -> None:
    """Replace (``after`` bytes) or delete (None) the store copy, recording the intent first (``record``;
    without it, that the path is written: ``SyncState.note_written``); the write is staged in
    ``out.writes`` and ``then`` becomes the state once it is done."""
    if after == before:
        if state.get(f.rel) != then:
            state.put(then)
        return
    if not record:
        state.note_written(f.rel)
    else:
        state.begin_publish(
            f.rel,
            PendingPublish(
                _digest(before),
                -1 if before is None else len(before),
                _digest(after),
                -1 if after is None else len(after),
                then,
            ),
            durable=False,
        )

    def written(_: bool) -> None:
        if record:
            state.finish_publish(f.rel)
        else:
            state.put(then)

    out.writes.add("remove" if after is None else "replace", f.store, after or b"", written)


# --- deliver: append-only files ------------------------------------------------------------------


def _deliver_append(f: _File, state: SyncState, now: float, grace_s: float, out: _Collect) -> None:
    seen = _stat_key(f.store)
    current = state.get(f.rel)
    if (
        seen is not None
        and current is not None
        and current.store_seen == seen
        and _size(f.live) == current.offset
        and state.pending_delivery(f.rel) is None
    ):
        return  # the store copy has not changed since all of it was found in the live file
    live = _read(f.live)
    if _settle_delivery_append(f, state, live) is not None:
        out.waiting.append((f.rel, "an earlier delivery is waiting for publish to account for it"))
        return
    store = _read(f.store)
    if store is None:
        return
    lines = _split(store)
    if live is None:
        _create_live(f, state, lines, out)
        return
    current = state.get(f.rel)
    if current is None or current.offset is None:
        out.waiting.append((f.rel, "not yet published"))
        return
    if len(live) != current.offset or digest(live) != current.prefix_hash:
        out.waiting.append((f.rel, "the live file has lines not yet published"))
        return
    have = Counter(_split(live))
    missing: list[bytes] = []
    for line in lines:
        if have[line]:
            have[line] -= 1
        elif not (f.rel.endswith(".jsonl") and is_conflict_marker(line.rstrip(b"\r\n"))):
            # A marker line another tool committed reaches us by fast-forward; the jsonl driver drops
            # such lines in a merge, and deliver does too, so no live memory file ever holds one (I3).
            missing.append(line)
    if not missing:
        if current.store_seen != seen:
            state.put(replace(current, store_seen=seen))
        return
    held = out.writers()
    if held is not None and os.path.realpath(f.live) in held:
        out.waiting.append(
            (
                f.rel,
                "an agent holds it open to write at its own file position (not "
                "appending); delivery waits until it closes the file",
            )
        )
        return
    if held is None and current.rewritten_since is not None and now - current.rewritten_since < grace_s:
        out.waiting.append(
            (
                f.rel,
                "truncated in place; delivery waits while an agent may still be "
                "writing it from its own file position",
            )
        )
        return
    data = b"".join(missing)
    then = replace(
        current,
        offset=current.offset + len(data),
        prefix_hash=digest(live + data),
        partial_at=None,
        partial_hash=None,
        partial_since=None,
        store_seen=seen,
        rewritten_since=None,
    )
    state.begin_delivery(f.rel, PendingDelivery(data, current.offset, False, then))
    with writer_lock(f.live):
        try:
            size = f.live.stat().st_size
        except FileNotFoundError:
            size = -1
        if size != current.offset:
            state.drop_delivery(f.rel)
            out.waiting.append((f.rel, "the live file changed; delivery waits for the next publish"))
            return
        append_once(f.live, data)
    landed = _read(f.live) or b""
    if landed[current.offset : current.offset + len(data)] == data:
        state.finish_delivery(f.rel)
    # Otherwise an agent appended in the instant before our write: publish accounts for the record.
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "appended", len(missing)))


def _create_live(f: _File, state: SyncState, lines: Sequence[bytes], out: _Collect) -> None:
    """Create the missing live file with the store's complete lines, never over a file that appeared."""
    if not lines:
        return
    data = b"".join(lines)
    then = FileState(f.rel, offset=len(data), prefix_hash=digest(data))
    state.begin_delivery(f.rel, PendingDelivery(data, 0, False, then), durable=False)

    def created(done: bool) -> None:
        if done:
            state.finish_delivery(f.rel)
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "created", len(lines)))
        else:
            state.drop_delivery(f.rel)

    out.writes.add("create", f.live, data, created)


# --- deliver: whole files ------------------------------------------------------------------------


def _deliver_whole(f: _File, state: SyncState, out: _Collect) -> None:
    _settle_delivery_whole(f, state)
    current = state.get(f.rel)
    store = _read(f.store)
    if current is not None and current.synced_known and not current.kept_present and store == current.synced:
        return  # nothing new in the store: the live file need not be read
    live = _read(f.live)
    if current is None or not current.synced_known:
        if store is not None and live is None:
            _deliver_create(f, state, store, out, record=False)
        elif store is not None and live == store:
            state.put(FileState(f.rel, synced=store, synced_known=True))
        return
    if current.kept_present:
        out.waiting.append((f.rel, "a concurrent local edit waits to be published"))
        return
    if live != current.synced:
        out.waiting.append((f.rel, "a local edit waits to be published"))
        return
    if f.live.is_symlink():
        out.waiting.append((f.rel, "the live file is a symlink; memsync does not replace it"))
        return
    if live is None and store is not None:
        _deliver_create(f, state, store, out)
    elif store is None:
        _deliver_remove(f, state, current, out)
    else:
        _deliver_replace(f, state, current, store, out)


def _deliver_create(f: _File, state: SyncState, store: bytes, out: _Collect, *, record: bool = True) -> None:
    """Create the missing live file (staged); ``record`` the intent unless a rerun would find live == store
    anyway."""
    then = FileState(f.rel, synced=store, synced_known=True)
    if record:
        state.begin_delivery(f.rel, PendingDelivery(store, None, False, then), durable=False)

    def created(done: bool) -> None:
        if done:
            if record:
                state.finish_delivery(f.rel)
            else:
                state.put(then)
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "created"))
        else:
            if record:
                state.drop_delivery(f.rel)
            out.waiting.append((f.rel, "a local file appeared; it is published next cycle"))

    out.writes.add("create", f.live, store, created)


def _deliver_replace(f: _File, state: SyncState, current: FileState, store: bytes, out: _Collect) -> None:
    then = FileState(f.rel, synced=store, synced_known=True)
    state.begin_delivery(f.rel, PendingDelivery(store, None, False, then))
    try:
        replaced = _replace_keeping(f.live, store)
    except FileNotFoundError:
        # The agent deleted the file in that instant: a local deletion, settled by the next publish.
        state.drop_delivery(f.rel)
        return
    if replaced != current.synced:
        out.warn(f"{f.live}: changed while memsync replaced it; the change is kept and published next cycle")
        then = replace(then, kept=replaced, kept_base=current.synced, kept_present=True)
    state.finish_delivery(f.rel, then)
    if then.kept_present:
        state.commit()  # the agent's bytes exist only in this record: durable now, not with the pass
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "replaced"))


def _deliver_remove(f: _File, state: SyncState, current: FileState, out: _Collect) -> None:
    """Delete the live file (a peer deleted it) unless an agent changed it in the last instant."""
    then = FileState(f.rel, synced=None, synced_known=True)
    state.begin_delivery(f.rel, PendingDelivery(b"", None, True, then))
    aside = f.live.with_name(f"{TEMP_PREFIX}removed-{f.live.name}")
    try:
        os.rename(f.live, aside)
    except FileNotFoundError:
        state.finish_delivery(f.rel)
        return
    removed = _read(aside)
    if removed != current.synced:
        # An agent wrote in that instant: put its version back (unless a new file appeared) and keep it.
        out.warn(f"{f.live}: changed while memsync deleted it (a peer deleted it); the change is kept")
        try:
            os.link(aside, f.live)
        except FileExistsError:
            then = replace(then, kept=removed, kept_base=current.synced, kept_present=True)
        aside.unlink()
        state.finish_delivery(f.rel, then if then.kept_present else replace(then, synced=current.synced))
        if then.kept_present:
            state.commit()  # the agent's bytes exist only in this record: durable now, not with the pass
        return
    aside.unlink()
    state.finish_delivery(f.rel)
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "deleted"))


# --- atomic file primitives beyond memsync.fsio ----------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the directory entries ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    False when the platform or file system lacks it; raises ``OSError`` (e.g. ENOENT) otherwise.
    """
    renameat2 = getattr(libc(), "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _replace_keeping(path: Path, data: bytes) -> bytes:
    """Atomically replace ``path`` with ``data``; return the bytes it held at the instant of the swap.

    Uses ``RENAME_EXCHANGE`` so that even an agent's own atomic save in that instant is caught. Where
    that is missing, ``fsio.atomic_write`` with a hard link kept to the old file: in-place writes are
    caught, an agent's rename in the same instant is not. Raises FileNotFoundError when ``path`` is gone.
    """
    mode = path.stat().st_mode & 0o7777
    tmp = temp_beside(path, data, mode)
    try:
        if _exchange(tmp, path):
            old = tmp.read_bytes()
            fsync_dir(path.parent)
            return old
        keep = path.with_name(f"{TEMP_PREFIX}kept-{path.name}")
        keep.unlink(missing_ok=True)
        os.link(path, keep)
        try:
            atomic_write(path, data)
            return keep.read_bytes()
        finally:
            keep.unlink(missing_ok=True)
    finally:
        tmp.unlink(missing_ok=True)

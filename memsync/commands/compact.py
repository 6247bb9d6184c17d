"""`memsync compact` on a memory file memsync tracks: the dead entries leave the live file and the store
copy together, so the next sync neither publishes them back nor delivers them again (DESIGN I1, whose
explicit exception this is, and "View semantics": compaction keeps tombstones).

A compacted live file is a rewrite, not an append. Left to the sync cycle, publish would settle it by
content (a union) and deliver would append the dead lines back from the store copy, on every machine.
So, under the store's cycle lock (a running daemon waits):

1. publish the track, so every complete line of the live file is in the store copy;
2. rewrite the store copy compacted: its dead entries go, peer lines not yet delivered here stay;
3. compact the live file the same way; when that is refused, the store copy is put back;
4. record in the sync state that the compacted live file is published up to its end;
5. commit. Peers merging that commit drop the removed lines from their store copies (the jsonl driver
   keeps a base line only when no side removed it); their live files keep them until compacted there,
   and every view is the same, since tombstones are kept.

Both follow ``formats.jsonl.compacted``, which keeps every entry that supersedes another, dead or not,
like a tombstone (found by the chaos run: without it a peer whose live file had the target but not yet
the superseding entry saw the target come back).

Killed after step 2, the store is compacted and the live file not: the sync state still matches the live
file and nothing is lost; compact again. Killed after step 3, the next publish sees a rewritten file and
settles it by content: the store lacks the dead lines, so they stay removed, and nothing is lost.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.base.layout import is_ignored, kind_of
from memsync.base.paths import StoreLayout, config_path
from memsync.config.file import Config, StoreConfig, Track
from memsync.errors import MemsyncError
from memsync.formats.jsonl.compact import compacted, ensure_compactable
from memsync.formats.jsonl.parse import parse_memory
from memsync.memoryfile.file import MemoryFile
from memsync.store import sealed
from memsync.store.access import cycle_lock, open_store
from memsync.store.commit import put_back_strays
from memsync.store.written import commit_written
from memsync.sync.passes import publish
from memsync.sync.records import AppendState, HeldLine, mark
from memsync.sync.reports import describe_changes, track_name
from memsync.sync.state import SyncState
from memsync.tracks.resolve import load_tracks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Compaction:
    """What ``compact`` did to the memory file ``path``: its line counts before and after (header
    included); for a tracked file also the ``store`` name, the ``store_path`` of its copy, the lines
    removed from that copy, and the commit made (None when the store had nothing to commit)."""

    path: Path
    lines_before: int
    lines_after: int
    store: str | None = None
    store_path: str | None = None
    store_lines_removed: int = 0
    commit: str | None = None


@dataclass(frozen=True)
class _Tracked:
    """A tracked memory file: its store, its track, its store path and its live path as the track sees it."""

    store_cfg: StoreConfig
    track: Track
    rel: str
    live: Path


def compact(path: Path, config_file: Path | None = None, now: datetime | None = None) -> Compaction:
    """Compact the memory file ``path`` at ``now`` (aware; default the current time).

    A memory file tracked by a store of the config ``config_file`` (default ``config_path()``; none
    there: nothing is tracked) whose store exists is compacted in its live file and its store copy
    together, and committed (see the module docstring); any other file is compacted alone. Raises
    ``MemsyncError`` when the file cannot be read, is not agent-memory/0.1, ends in an unfinished line,
    is being written, or its store is busy; the file is then unchanged.
    """
    when = now or datetime.now(UTC)
    config_file = config_file or config_path()
    config = load_tracks(config_file) if config_file.exists() else None
    tracked = None if config is None else _find_tracked(path, config)
    # A store not created yet syncs nothing: its first reconcile publishes the compacted file by content.
    if config is None or tracked is None or not StoreLayout(tracked.store_cfg.path).exists:
        report = MemoryFile(path).compact(when)
        return Compaction(path, report.lines_before, report.lines_after)
    return _compact_tracked(config, tracked, when)


def _find_tracked(path: Path, config: Config) -> _Tracked | None:
    """The track that syncs ``path`` as a memory file (the innermost when tracks nest), or None."""
    target = path.expanduser().resolve()
    found: _Tracked | None = None
    for store_cfg in config.stores.values():
        for track in store_cfg.tracks:
            root = track.live.resolve()
            prefix = track.store_path.strip("/")
            if target == root:
                candidate = _Tracked(store_cfg, track, prefix, track.live)
            elif target.is_relative_to(root) and not any(
                target.is_relative_to(owned.resolve()) for owned in track.excludes
            ):
                label = target.relative_to(root).as_posix()
                if is_ignored(label):
                    continue
                candidate = _Tracked(store_cfg, track, f"{prefix}/{label}", track.live / label)
            else:
                continue
            if found is None or len(candidate.track.live.parts) > len(found.track.live.parts):
                found = candidate
    # Only memory files need the store copy compacted too: a whole file's rewrite syncs by three-way merge.
    return found if found is not None and kind_of(found.rel) == "jsonl" else None


def _compact_tracked(config: Config, tracked: _Tracked, now: datetime) -> Compaction:
    store_cfg, rel = tracked.store_cfg, tracked.rel
    _read(tracked.live)  # a missing file is the user's mistake, not a failed publish
    with cycle_lock(store_cfg, config=config.path):
        store = open_store(config, store_cfg)
        store_file = store.worktree / rel
        with SyncState(store.meta_dir) as state:
            put_back_strays(store.git, state.written())  # nothing a failed git step left is appended to
            published = publish(tracked.track, store.worktree, state, grace_s=config.partial_line_grace_s)
            # What was published is history before it is compacted.
            commit_written(store, state, describe_changes([published]) or "memsync: recovered local changes")
            current = _published_state(tracked, state)
            accounted = _read(tracked.live)[: current.offset]
            if mark(accounted) != current.prefix_hash:
                raise MemsyncError(
                    f"compact {tracked.live}: it was rewritten while memsync published it. "
                    "Retry when no agent is writing"
                )
            expected = compacted(parse_memory(accounted), accounted, now)
            store_before = store_file.read_bytes() if store_file.is_file() else None
            store_after = None if store_before is None else _compacted_store(tracked, store_before, now)
            if store_after is not None:
                state.note_written(rel)
                atomic_write(store_file, store_after)
            try:
                report = MemoryFile(tracked.live).compact(now)
            except MemsyncError:
                if store_before is not None:
                    atomic_write(store_file, store_before)
                raise
            state.put(_state_after(current, accounted, expected, _read(tracked.live)))
            if store_cfg.encrypt:  # and its remotes' ciphertext: the next push snapshots it
                sealed.snapshot_next(store.git)
            removed = (
                0
                if store_before is None or store_after is None
                else store_before.count(b"\n") - store_after.count(b"\n")
            )
            label = rel[len(tracked.track.store_path.strip("/")) + 1 :]
            commit = commit_written(
                store,
                state,
                f"{track_name(tracked.track)}: {label + ' ' if label else ''}"
                f"compacted, -{removed} line{'' if removed == 1 else 's'}",
            )
    log.debug("compacted %s and its store copy %s:%s (-%d lines)", tracked.live, store_cfg.name, rel, removed)
    return Compaction(
        tracked.live, report.lines_before, report.lines_after, store_cfg.name, rel, removed, commit
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MemsyncError(f"compact {path}: {exc.strerror or exc}. Check the path") from None


def _published_state(tracked: _Tracked, state: SyncState) -> AppendState:
    """The sync state of the freshly published file; MemsyncError when publish could not account for it."""
    current = state.get_append(tracked.rel)
    if (
        current is None
        or current.offset is None
        or state.pending_publish(tracked.rel) is not None
        or state.pending_delivery(tracked.rel) is not None
    ):
        raise MemsyncError(
            f"compact {tracked.live}: memsync could not publish it to store "
            f"{tracked.store_cfg.name!r} first. Run `memsync sync`, then compact again"
        )
    return current


def _compacted_store(tracked: _Tracked, data: bytes, now: datetime) -> bytes:
    """The compacted store copy ``data``; MemsyncError (before anything changed) when it cannot be."""
    parsed = parse_memory(data)
    ensure_compactable(f"compact {tracked.live}: its store copy", parsed)
    return compacted(parsed, data, now)


def _state_after(current: AppendState, accounted: bytes, expected: bytes, live: bytes) -> AppendState:
    """The sync state of the compacted live file ``live``.

    ``expected`` is the compacted form of the published bytes ``accounted``: when ``live`` starts with it,
    that much is accounted for and whatever an agent appended meanwhile is published next cycle. When an
    agent's line written between publish and compaction changed what compaction kept, the offset becomes
    unknown and the next publish settles the file by content (nothing is lost; the store copy lacks the
    dead lines, so they stay removed). Lines held back as secrets keep their entry at their new number.
    """
    if not live.startswith(expected):
        log.info("compacted file changed by an agent meanwhile: the next publish settles it by content")
        return current.rewritten(None, current.held)
    old_lines = accounted.split(b"\n")
    new_numbers = {line: number for number, line in enumerate(expected.split(b"\n")[:-1], start=1)}
    held = tuple(
        HeldLine(new_numbers[old_lines[h.line - 1]], h.detector)
        for h in current.held
        if h.line <= len(old_lines) and old_lines[h.line - 1] in new_numbers
    )
    return current.rewritten(expected, held)

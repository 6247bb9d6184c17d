"""Deliver of append-only files (DESIGN step 5, I1, I2, I5, I7): the lines the store copy has and the live
file lacks (multiset difference, so a repeated line arrives as often as the store has it), appended in
``O_APPEND`` writes of whole lines, each after a record of the intended write in the sync state.

Only what follows the state's sync point is read: the store copy's lines after ``store_at`` against the
live file's lines after ``live_at`` (every line before the one is in the part before the other). When the
store copy no longer begins with its recorded part (a merge rewrote it: the union drivers may reorder),
the lines both files begin with are skipped (compared chunk by chunk) and the rest of each compared, the
live file's lines counted by hash.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from memsync.base.fsio import append_once, read_range, writer_lock
from memsync.base.layout import kind_of
from memsync.merge.prefix import is_conflict_marker
from memsync.sync import content, echoes
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import AppendState, PendingDelivery, mark
from memsync.sync.reports import FileChange
from memsync.sync.settle import settle_delivery_append


def deliver_append(f: TrackFile, now: float, grace_s: float, out: Collector) -> None:
    """Append to the live file ``f`` the complete lines its store copy has and it lacks, only when it holds
    exactly the accounted bytes, no positional writer holds it open (``memsync.base.writers``) and, where the
    platform cannot tell, ``grace_s`` seconds passed (clock ``now``) since publish found it shrunk. A
    missing live file is created. What waits is listed in ``out.waiting``. Raises ``OSError``."""
    state = out.state
    seen = content.stat_key(f.store)
    current = state.get_append(f.rel)
    if (
        seen is not None
        and current is not None
        and current.store_seen == seen
        and content.size(f.live) == current.offset
        and state.pending_delivery(f.rel) is None
    ):
        return  # the store copy has not changed since all of it was found in the live file
    info = content.regular(f.live, out.notices)
    if settle_delivery_append(f, out, None if info is None else info.st_size) is not None:
        out.waiting.append((f.rel, "an earlier delivery is waiting for publish to account for it"))
        return
    store = content.regular(f.store, out.notices)
    if store is None:
        return
    if info is None:
        if _create_live(f, content.complete_end(f.store, store.st_size), out):
            # The rest of a big store copy follows in appends, chunk by chunk, once the file exists.
            out.writes.flush()
            deliver_append(f, now, grace_s, out)
        return
    current = state.get_append(f.rel)
    if current is None or current.offset is None:
        out.waiting.append((f.rel, "not yet published"))
        return
    if (
        info.st_size != current.offset
        or current.live_id not in (None, content.file_id(info))
        or content.mark_of(f.live, current.offset) != current.prefix_hash
    ):
        out.waiting.append((f.rel, "the live file has lines not yet published"))
        return
    offset = current.offset
    store_end = content.complete_end(f.store, store.st_size)
    if (
        current.store_at > store_end
        or current.live_at > current.offset
        or (current.store_at and content.mark_of(f.store, current.store_at) != current.store_mark)
    ):
        # The store copy was rewritten: the lines both files begin with (streamed) cancel out, the rest of
        # each is compared whole.
        same = content.common_lines(f.live, f.store, min(offset, store_end))
        current = current.synced_at(same, content.mark_of(f.store, same) if same else None, same)
    have = Counter(hash(line) for line in _lines(f.live, current.live_at, offset))
    batches = _missing(f, have, current.store_at, store_end)
    batch = next(batches, None)
    if batch is None:
        then = current.synced_at(store_end, content.mark_of(f.store, store_end), offset)
        if then.store_seen != seen or then != state.get_append(f.rel):
            state.put(then.seen_store(seen))
        return
    reason = _why_wait(f, current, now, grace_s, out)
    if reason is not None:
        out.waiting.append((f.rel, reason))
        return
    while batch is not None:
        following = next(batches, None)
        done = _deliver_batch(f, current, batch, (seen, store_end) if following is None else None, out)
        if done is None:
            return
        current, batch = done, following


def _lines(path: Path, start: int, stop: int) -> Iterator[bytes]:
    """The complete lines of ``path[start:stop]``, read chunk by chunk."""
    for _, data in content.chunks(path, start, stop):
        yield from content.split(data)


def _missing(f: TrackFile, have: Counter[int], start: int, stop: int) -> Iterator[list[bytes]]:
    """The store copy's lines from ``start`` to ``stop`` that the live lines counted in ``have`` (by hash)
    lack, in store order, in batches of about ``content.CHUNK`` bytes."""
    batch: list[bytes] = []
    size = 0
    jsonl = f.rel.endswith(".jsonl")
    for line in _lines(f.store, start, stop):
        key = hash(line)
        if have[key]:
            have[key] -= 1
        elif not (jsonl and is_conflict_marker(line.rstrip(b"\r\n"))):
            # A marker line another tool committed reaches us by fast-forward; the jsonl driver drops
            # such lines in a merge, and deliver does too, so no live memory file ever holds one (I3).
            batch.append(line)
            size += len(line)
            if size >= content.CHUNK:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def _why_wait(f: TrackFile, current: AppendState, now: float, grace_s: float, out: Collector) -> str | None:
    """Why nothing may be appended to the live file now (a positional writer, a recent truncation)."""
    held = out.writers()
    if held is not None and os.path.realpath(f.live) in held:
        return (
            "an agent holds it open to write at its own file position (not "
            "appending); delivery waits until it closes the file"
        )
    if held is None and current.rewritten_since is not None and now - current.rewritten_since < grace_s:
        return (
            "truncated in place; delivery waits while an agent may still be "
            "writing it from its own file position"
        )
    return None


def _deliver_batch(
    f: TrackFile,
    current: AppendState,
    lines: list[bytes],
    final: tuple[str | None, int] | None,
    out: Collector,
) -> AppendState | None:
    """Append ``lines`` to the live file in one write after recording it; ``final`` (the store copy's stat
    key and end of complete lines) for the last batch, whose state records the store copy as wholly in
    the live file. Returns the state after the write, None when delivery stops (the file changed)."""
    state = out.state
    assert current.offset is not None
    data = b"".join(lines)
    then = current.delivered(
        current.offset + len(data), content.mark_after(f.live, current.offset, data), None
    )
    if final is not None:
        seen, store_end = final
        then = then.seen_store(seen).synced_at(
            store_end, content.mark_of(f.store, store_end), then.offset or 0
        )
    state.begin_delivery(f.rel, PendingDelivery(data, current.offset, False, then))
    with writer_lock(f.live):
        if content.size(f.live) != current.offset:
            state.drop_delivery(f.rel)
            out.waiting.append((f.rel, "the live file changed; delivery waits for the next publish"))
            return None
        append_once(f.live, data)
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "appended", len(lines)))
    if read_range(f.live, current.offset, current.offset + len(data)) != data:
        return None  # an agent appended in the instant before our write: publish accounts for the record
    state.finish_delivery(f.rel)
    echoes.note(f.live, current.offset + len(data))
    return then


def _create_live(f: TrackFile, store_end: int, out: Collector) -> bool:
    """Create the missing live file with the store's complete lines (up to ``store_end``), never over a
    file that appeared; at most ``content.CHUNK`` bytes of them (staged). Returns whether more follow."""
    state = out.state
    data = next(content.chunks(f.store, 0, store_end), (0, b""))[1]
    if not data:
        return False
    lines = data.count(b"\n")
    then = AppendState.accounted(f.rel, data).synced_at(len(data), mark(data), len(data))
    state.begin_delivery(f.rel, PendingDelivery(data, 0, False, then), durable=False)

    def created(done: bool) -> None:
        if done:
            state.finish_delivery(f.rel)
            echoes.note(f.live, len(data))
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "created", lines))
        else:
            state.drop_delivery(f.rel)

    out.writes.add("create", f.live, data, created)
    return len(data) < store_end

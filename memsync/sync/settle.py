"""Settling the writes a pass recorded before making them, after a crash (DESIGN I7): a recorded write is
applied when its result is found, dropped when its "before" form is, else the file is settled by
content."""

from __future__ import annotations

import os

from memsync.base.fsio import read_range
from memsync.base.layout import is_append_only
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile


def settle_publish(f: TrackFile, out: Collector) -> bool:
    """Settle a recorded publish of ``f``; False when the file must be settled by content. A torn append
    to the store copy (memsync's own file) is cut back to its "before" form."""
    state = out.state
    pending = state.pending_publish(f.rel)
    if pending is None:
        return True
    if is_append_only(f.rel):
        size = content.size(f.store)
        if size == pending.after_size and content.tail_mark(f.store, size) == pending.after_hash:
            state.finish_publish(f.rel)
            return True
        if size == pending.before_size and content.tail_mark(f.store, size) == pending.before_hash:
            state.drop_publish(f.rel)
            return True
        if (
            max(pending.before_size, 0) < size < pending.after_size
            and content.tail_mark(f.store, pending.before_size) == pending.before_hash
        ):
            # Killed inside the append: cut the store copy (memsync's own file) back to "before".
            os.truncate(f.store, max(pending.before_size, 0))
            state.drop_publish(f.rel)
            return True
    else:
        digest = content.digest_of(content.read(f.store, out.notices))
        if digest == pending.after_hash:
            state.finish_publish(f.rel)
            return True
        if digest == pending.before_hash:
            state.drop_publish(f.rel)
            return True
    state.drop_publish(f.rel)
    return False


def settle_delivery_append(f: TrackFile, out: Collector, size: int | None) -> tuple[int, int] | None:
    """Settle a recorded append delivery of ``f`` (a live file of ``size`` bytes, None for none), reading
    only the live bytes after the offset it was recorded at; returns the byte range it occupies when it
    landed after lines not yet published (publish then skips it), else None."""
    state = out.state
    pending = state.pending_delivery(f.rel)
    if pending is None or pending.at_offset is None:
        return None
    current = state.get_append(f.rel)
    tail = b"" if size is None else read_range(f.live, pending.at_offset, size)
    found = content.find_block(tail, pending.data, 0, len(content.complete(tail)))
    if found is None:
        state.drop_delivery(f.rel)
        return None
    pos = pending.at_offset + found
    accounted = 0 if current is None or current.offset is None else current.offset
    if pos == pending.at_offset and accounted == pending.at_offset:
        state.finish_delivery(f.rel)
        return None
    return pos, pos + len(pending.data)


def settle_delivery_whole(f: TrackFile, out: Collector) -> None:
    """Settle a recorded whole-file delivery: applied when the live file shows it, else dropped."""
    state = out.state
    pending = state.pending_delivery(f.rel)
    if pending is None or pending.at_offset is not None:
        return
    live = content.read(f.live, out.notices)
    done = live is None if pending.remove else live == pending.data
    if done:
        state.finish_delivery(f.rel)
    else:
        state.drop_delivery(f.rel)

"""Deliver of append-only files (DESIGN step 5, I1, I2, I5, I7): the lines the store copy has and the live
file lacks (multiset difference, so a repeated line arrives as often as the store has it), appended in
one ``O_APPEND`` write, after a record of the intended write in the sync state."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

from memsync.fsio import append_once, writer_lock
from memsync.layout import kind_of
from memsync.merge.prefix import is_conflict_marker
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import FileState, PendingDelivery, digest
from memsync.sync.reports import FileChange
from memsync.sync.settle import settle_delivery_append


def deliver_append(f: TrackFile, now: float, grace_s: float, out: Collector) -> None:
    """Append to the live file ``f`` the complete lines its store copy has and it lacks, only when it holds
    exactly the accounted bytes, no positional writer holds it open (``memsync.writers``) and, where the
    platform cannot tell, ``grace_s`` seconds passed (clock ``now``) since publish found it shrunk. A
    missing live file is created. What waits is listed in ``out.waiting``. Raises ``OSError``."""
    state = out.state
    seen = content.stat_key(f.store)
    current = state.get(f.rel)
    if (
        seen is not None
        and current is not None
        and current.store_seen == seen
        and content.size(f.live) == current.offset
        and state.pending_delivery(f.rel) is None
    ):
        return  # the store copy has not changed since all of it was found in the live file
    live = out.read(f.live)
    if settle_delivery_append(f, out, live) is not None:
        out.waiting.append((f.rel, "an earlier delivery is waiting for publish to account for it"))
        return
    store = out.read(f.store)
    if store is None:
        return
    lines = content.split(store)
    if live is None:
        _create_live(f, lines, out)
        return
    current = state.get(f.rel)
    if current is None or current.offset is None:
        out.waiting.append((f.rel, "not yet published"))
        return
    if len(live) != current.offset or digest(live) != current.prefix_hash:
        out.waiting.append((f.rel, "the live file has lines not yet published"))
        return
    have = Counter(content.split(live))
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
            state.put(current.seen_store(seen))
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
    then = current.delivered(current.offset + len(data), digest(live + data), seen)
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
    landed = out.read(f.live) or b""
    if landed[current.offset : current.offset + len(data)] == data:
        state.finish_delivery(f.rel)
    # Otherwise an agent appended in the instant before our write: publish accounts for the record.
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "appended", len(missing)))


def _create_live(f: TrackFile, lines: Sequence[bytes], out: Collector) -> None:
    """Create the missing live file with the store's complete lines, never over a file that appeared."""
    if not lines:
        return
    state = out.state
    data = b"".join(lines)
    then = FileState.accounted(f.rel, data)
    state.begin_delivery(f.rel, PendingDelivery(data, 0, False, then), durable=False)

    def created(done: bool) -> None:
        if done:
            state.finish_delivery(f.rel)
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "created", len(lines)))
        else:
            state.drop_delivery(f.rel)

    out.writes.add("create", f.live, data, created)

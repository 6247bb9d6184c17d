"""Publish of an append-only file's tail: the complete lines after the accounted offset, read chunk by
chunk from the live file and appended to the store copy (DESIGN step 2, I1, I2, I6, I7).

Each chunk is one recorded write (``PendingPublish``: the store copy's size and tail mark before and
after, so ``memsync.sync.settle`` tells after ``kill -9`` whether it happened), and the state moves to
the chunk's end once it is done: memory stays bounded by ``content.CHUNK`` whatever the file's size, and
a crash between chunks resumes after the last one written.
"""

from __future__ import annotations

from collections.abc import Sequence

from memsync.base.layout import kind_of
from memsync.secrets.files import scan_appended
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import AppendState, HeldLine, Partial, PendingPublish, digest


def publish_tail(
    f: TrackFile,
    current: AppendState,
    end: int,
    live_id: str,
    partial: Partial,
    skips: Sequence[tuple[int, int]],
    out: Collector,
    *,
    drop_delivery: bool = False,
) -> None:
    """Publish the complete lines of the live file ``f.live`` from ``current.offset`` to ``end`` (just after
    a newline) but those in the byte ranges ``skips`` (memsync's own delivery, a line completed from the
    store), the secret scanner holding back what it flags. The state ends at ``end`` of file ``live_id``
    with ``partial`` as the unfinished last line; ``drop_delivery`` drops the recorded delivery that the
    new state accounts for. Raises ``OSError``."""
    assert current.offset is not None
    start = current.offset
    context = content.lines_before(f.live, start)
    pieces_of = content.chunks(f.live, start, end) if end > start else iter([(start, b"")])
    for pos, data in pieces_of:
        stop = pos + len(data)
        last = stop >= end
        pieces = [
            (pos + at, line)
            for at, line in content.lines(data, 0, len(data))
            if not any(low <= pos + at < high for low, high in skips)
        ]
        flagged = scan_appended(f.rel, [line for _, line in pieces], context, out.allowed)
        held: tuple[HeldLine, ...] = ()
        if flagged:
            before = content.count_lines(f.live, pos)
            held = tuple(
                HeldLine(before + data.count(b"\n", 0, pieces[i][0] - pos) + 1, detector)
                for i, detector in sorted(flagged.items())
            )
        lines = [line for i, (_, line) in enumerate(pieces) if i not in flagged]
        then = current.published(
            stop, content.mark_of(f.live, stop), held, partial if last else Partial(), live_id
        )
        append_to_store(f, lines, then, out, drop_delivery=drop_delivery and last)
        out.report_held(f, held)
        if last:
            return
        # The next chunk is its own recorded write: only one write per store file waits at a time.
        out.writes.flush()
        now = out.state.get_append(f.rel)
        if now is None or now.offset != stop:
            return
        current = now
        context = data.splitlines(keepends=True)[-content.SCAN_CONTEXT_LINES :]


def append_to_store(
    f: TrackFile, lines: Sequence[bytes], then: AppendState, out: Collector, *, drop_delivery: bool = False
) -> None:
    """Append ``lines`` to the store copy in one write (staged), recording the intent first; then apply
    ``then`` and, with ``drop_delivery``, drop the recorded delivery whose bytes ``then`` accounts for.

    When the store copy is still the one at ``then``'s sync point (its size and mark), the sync point
    moves past the appended lines: every line of the store copy is then in the live file's first
    ``then.offset`` bytes, and deliver reads only what arrives after. Raises ``OSError``."""
    state = out.state
    if not lines:
        if state.get_append(f.rel) != then:
            state.put(then)
        if drop_delivery:
            state.drop_delivery(f.rel)
        return
    data = b"".join(lines)
    size = content.size(f.store)
    tail = content.tail_bytes(f.store, size, content.TAIL)
    if tail and not tail.endswith(b"\n"):
        data = b"\n" + data  # never glue a line onto an unfinished store line
    before = max(size, 0)
    assert then.offset is not None
    if then.store_at == before and (before == 0 or content.mark_of(f.store, before) == then.store_mark):
        then = then.synced_at(before + len(data), content.mark_after(f.store, size, data), then.offset)
    before_mark = content.ABSENT if size < 0 else digest(tail)
    after_mark = digest((tail + data)[-content.TAIL :])
    state.begin_publish(
        f.rel, PendingPublish(before_mark, size, after_mark, before + len(data), then), durable=False
    )
    seen_before = content.stat_key(f.store)

    def appended(_: bool) -> None:
        state.finish_publish(f.rel)
        if then.store_seen is not None and then.store_seen == seen_before:
            # The store copy was wholly in the live file and only gained lines from it: still so, and the
            # next deliver need not read either file.
            state.put(then.seen_store(content.stat_key(f.store)))
        if drop_delivery:
            state.drop_delivery(f.rel)

    out.writes.add("append", f.store, data, appended, like=f.live)
    entries, tombstones = content.jsonl_counts(lines) if kind_of(f.rel) == "jsonl" else (0, 0)
    out.appended(f, len(lines), entries, tombstones)

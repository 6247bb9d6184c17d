"""Publish of append-only files (memory files, daily logs) by byte offset (DESIGN step 2, I1, I2, I7).

The state records how many bytes of the live file are accounted for and a hash of that prefix. Publish
appends the complete lines after the offset to the store copy. Every write is preceded by a record of
the intended write in the sync state, so that after ``kill -9`` memsync can tell by content whether the
write happened (``memsync.sync.settle``).

Content reconcile (no state, a rewritten live file, a store that moved under a pending publish) is a
union: the lines of the live file that the store lacks are appended to the store (``present_in``: runs
of lines shared in the same order are the same lines; other non-blank lines count as present as often as
the store has them, since merges reorder memory files). Nothing is lost; a line edited in place is kept
in both its old and its new form. The ambiguity left: a non-blank line repeated outside any shared run
that the store already has from another writer is taken as the same line.
"""

from __future__ import annotations

import difflib
import hashlib
from collections import Counter
from collections.abc import Sequence

from memsync.layout import kind_of
from memsync.secrets.files import scan_appended
from memsync.sync import content
from memsync.sync.collector import Collector, PublishMode
from memsync.sync.files import TrackFile
from memsync.sync.partial import finish_partial
from memsync.sync.records import FileState, HeldLine, PendingPublish, digest
from memsync.sync.reports import FileChange
from memsync.sync.settle import settle_delivery_append, settle_publish


def publish_append(f: TrackFile, mode: PublishMode, known_track: bool, out: Collector) -> None:
    """Publish the append-only file ``f``: settle a recorded write, then append the complete lines after
    the state's offset (``mode.incremental``), or settle a file with no trusted state by content. A new
    file in a ``known_track`` has every line published. Raises ``OSError``."""
    state = out.state
    settled = settle_publish(f, out)
    live = out.read(f.live)
    if live is None:
        return
    skip = settle_delivery_append(f, out, live)
    current = state.get(f.rel)
    if current is None and known_track:
        # A file new in a track memsync already syncs (not one it delivered: that has a state): every
        # line in it was written here, so all of them are published, even lines the store has from peers.
        current = FileState.accounted(f.rel, b"")
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
            shrunk = mode.now
        current = None
    elif current is not None and current.offset and not f.store.exists():
        # Published before, yet the store has no copy (a store that adopted another history): by content.
        out.warn(f"{f.live}: the store lost its copy; publishing the file again")
        current = None
    if current is None or current.offset is None:
        _publish_by_content(f, current, live, mode, out, shrunk)
        return
    if not mode.incremental:
        return
    live, partial, completed = finish_partial(f, current, live, mode.now, mode.grace_s, out)
    end = max(len(content.complete(live)), current.offset)
    # Neither memsync's own delivery nor a line it completed from the store is published back.
    pieces = [
        (pos, line)
        for pos, line in content.lines(live, current.offset, end)
        if not any(r[0] <= pos < r[1] for r in (skip, completed) if r is not None)
    ]
    flagged = scan_appended(f.rel, [line for _, line in pieces], content.lines_before(live, current.offset))
    held = tuple(
        HeldLine(live.count(b"\n", 0, pieces[i][0]) + 1, detector) for i, detector in sorted(flagged.items())
    )
    publish_lines = [line for i, (_, line) in enumerate(pieces) if i not in flagged]
    prefix.update(memoryview(live)[current.offset : end])
    then = current.published(end, prefix.hexdigest(), held, partial)
    _append_to_store(f, publish_lines, then, out, drop_delivery=skip is not None)
    out.report_held(f, held)


def _publish_by_content(
    f: TrackFile,
    current: FileState | None,
    live: bytes,
    mode: PublishMode,
    out: Collector,
    shrunk: float | None,
) -> None:
    """Union: append the live lines the store copy lacks (multiset difference, live order).

    ``shrunk`` (seconds) is recorded as the state's ``rewritten_since``.
    """
    state = out.state
    if current is not None and current.offset is not None:
        # Record the doubt first: a crash from here on settles by content again, which is idempotent.
        state.put(current.in_doubt())
    state.drop_delivery(f.rel)
    live, partial, _completed = finish_partial(f, current, live, mode.now, mode.grace_s, out)
    end = len(content.complete(live))
    store = out.read(f.store) or b""
    if store and not store.endswith(b"\n"):
        store += b"\n"  # an unfinished store line still counts as that line
    live_lines = content.lines(live, 0, end)
    present = present_in(live_lines, content.split(store))
    missing = [item for i, item in enumerate(live_lines) if i not in present]
    flagged = scan_appended(f.rel, [line for _, line in missing])
    held = tuple(
        HeldLine(live.count(b"\n", 0, missing[i][0]) + 1, detector) for i, detector in sorted(flagged.items())
    )
    publish_lines = [line for i, (_, line) in enumerate(missing) if i not in flagged]
    then = FileState.accounted(f.rel, live[:end], held=held, partial=partial, rewritten_since=shrunk)
    _append_to_store(f, publish_lines, then, out)
    out.report_held(f, held)


def present_in(live_lines: Sequence[tuple[int, bytes]], store_lines: Sequence[bytes]) -> set[int]:
    """Indexes of the live lines (offset, line) that the store copy's ``store_lines`` already has, matched
    by content in context.

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


def _append_to_store(
    f: TrackFile, lines: Sequence[bytes], then: FileState, out: Collector, *, drop_delivery: bool = False
) -> None:
    """Append ``lines`` to the store copy in one write (staged), recording the intent first; then apply
    ``then`` and, with ``drop_delivery``, drop the recorded delivery whose bytes ``then`` accounts for."""
    state = out.state
    if not lines:
        if state.get(f.rel) != then:
            state.put(then)
        if drop_delivery:
            state.drop_delivery(f.rel)
        return
    data = b"".join(lines)
    size = content.size(f.store)
    tail = content.tail_bytes(f.store, size, content.TAIL)
    if tail and not tail.endswith(b"\n"):
        data = b"\n" + data  # never glue a line onto an unfinished store line
    before_mark = content.ABSENT if size < 0 else digest(tail)
    after_mark = digest((tail + data)[-content.TAIL :])
    state.begin_publish(
        f.rel, PendingPublish(before_mark, size, after_mark, max(size, 0) + len(data), then), durable=False
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

    out.writes.add("append", f.store, data, appended)
    entries, tombstones = content.jsonl_counts(lines) if kind_of(f.rel) == "jsonl" else (0, 0)
    out.changes.append(
        FileChange(f.rel, f.label, kind_of(f.rel), "appended", len(lines), entries, tombstones)
    )

"""Publish of append-only files (memory files, daily logs) by byte offset (DESIGN step 2, I1, I2, I7).

The state records how many bytes of the live file are accounted for, the file's device and inode, and a
mark of that prefix (``records.mark``: its first 4 KiB and last 64 KiB), so telling an appended file from
a rewritten one is bounded work. Publish appends the complete lines after the offset to the store copy,
reading only them (``appendonly_tail``). Every write is preceded by a record of the intended write in the
sync state, so that after ``kill -9`` memsync can tell by content whether the write happened
(``memsync.sync.settle``).

Content reconcile (no state, a rewritten live file, a store that moved under a pending publish) is a
union: the lines of the live file that the store lacks are appended to the store (``present_in``: runs
of lines shared in the same order are the same lines; other non-blank lines count as present as often as
the store has them, since merges reorder memory files). The lines both files begin with are compared
chunk by chunk and never held in memory; when one file begins with the other (first sight of a file the
store lacks, a store copy behind or ahead), only the rest is read. Nothing is lost; a line edited in place
is kept in both its old and its new form. The ambiguity left: a non-blank line repeated outside any
shared run that the store already has from another writer is taken as the same line.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter
from collections.abc import Sequence

from memsync.base.fsio import read_range
from memsync.secrets.files import scan_appended
from memsync.sync import content
from memsync.sync.appendonly_tail import append_to_store, publish_tail
from memsync.sync.collector import Collector, PublishMode
from memsync.sync.files import TrackFile
from memsync.sync.partial import finish_partial
from memsync.sync.records import AppendState, HeldLine
from memsync.sync.settle import settle_delivery_append, settle_publish


def publish_append(f: TrackFile, mode: PublishMode, known_track: bool, out: Collector) -> None:
    """Publish the append-only file ``f``: settle a recorded write, then append the complete lines after
    the state's offset (``mode.incremental``), or settle a file with no trusted state by content. A new
    file in a ``known_track`` has every line published. A file that shrank, was replaced (new inode) or
    whose mark differs is rewritten: settled by content. Raises ``OSError``."""
    state = out.state
    settled = settle_publish(f, out)
    info = content.regular(f.live, out.notices)
    if info is None:
        return
    size, live_id = info.st_size, content.file_id(info)
    skip = settle_delivery_append(f, out, size)
    current = state.get_append(f.rel)
    if current is None and known_track:
        # A file new in a track memsync already syncs (not one it delivered: that has a state): every
        # line in it was written here, so all of them are published, even lines the store has from peers.
        current = AppendState.accounted(f.rel, b"")
    shrunk = None if current is None else current.rewritten_since
    if not settled and current is not None and current.offset is not None:
        out.warn(f"{f.live}: the store copy changed under an unfinished publish; settling by content")
        current = None
    elif (
        current is not None
        and current.offset is not None
        and (
            size < current.offset
            or current.live_id not in (None, live_id)
            or content.mark_of(f.live, current.offset) != current.prefix_hash
        )
    ):
        out.warn(f"{f.live}: rewritten, not appended to; publishing the lines the store lacks (nothing lost)")
        if size < current.offset:
            # Truncated, perhaps by an agent about to write from its own file position (not O_APPEND):
            # lines delivered now could be overwritten into a torn line, so deliver waits (I2, I5).
            shrunk = mode.now
        current = None
    elif current is not None and current.offset and not f.store.exists():
        # Published before, yet the store has no copy (a store that adopted another history): by content.
        out.warn(f"{f.live}: the store lost its copy; publishing the file again")
        current = None
    if current is None or current.offset is None:
        _publish_by_content(f, current, info, mode, out, shrunk)
        return
    if not mode.incremental or (size == current.offset and skip is None and current.live_id == live_id):
        return
    end, partial, completed = finish_partial(
        f, current, content.complete_end(f.live, size), size, mode.now, mode.grace_s, out
    )
    skips = tuple(r for r in (skip, completed) if r is not None)
    publish_tail(
        f, current, max(end, current.offset), live_id, partial, skips, out, drop_delivery=skip is not None
    )


def _publish_by_content(
    f: TrackFile,
    current: AppendState | None,
    info: os.stat_result,
    mode: PublishMode,
    out: Collector,
    shrunk: float | None,
) -> None:
    """Union: append the live lines the store copy lacks (multiset difference, live order), the live file
    being ``info`` (its stat).

    ``shrunk`` (seconds) is recorded as the state's ``rewritten_since``.
    """
    state = out.state
    if current is not None and current.offset is not None:
        # Record the doubt first: a crash from here on settles by content again, which is idempotent.
        state.put(current.in_doubt())
    state.drop_delivery(f.rel)
    size, live_id = info.st_size, content.file_id(info)
    end, partial, _completed = finish_partial(
        f, current, content.complete_end(f.live, size), size, mode.now, mode.grace_s, out
    )
    store_size = content.size(f.store)
    same = content.common_lines(f.live, f.store, min(end, store_size)) if store_size > 0 else 0
    if same in (end, max(store_size, 0)):
        # One file begins with the other: the live lines after the shared ones are the ones the store
        # lacks, read chunk by chunk (first sight of a big file the store lacks goes this way).
        store_mark = content.mark_of(f.store, same) if same else None
        base = AppendState.accounted_to(
            f.rel, same, content.mark_of(f.live, same), live_id, rewritten_since=shrunk
        ).synced_at(same, store_mark, same)
        publish_tail(f, base, end, live_id, partial, (), out)
        return
    live = read_range(f.live, same, end)
    store = read_range(f.store, same, store_size)
    if store and not store.endswith(b"\n"):
        store += b"\n"  # an unfinished store line still counts as that line
    live_lines = content.lines(live, 0, len(live))
    present = present_in(live_lines, content.split(store))
    missing = [item for i, item in enumerate(live_lines) if i not in present]
    flagged = scan_appended(f.rel, [line for _, line in missing], allowed=out.allowed)
    before = content.count_lines(f.live, same) if flagged else 0
    held = tuple(
        HeldLine(before + live.count(b"\n", 0, missing[i][0]) + 1, detector)
        for i, detector in sorted(flagged.items())
    )
    publish_lines = [line for i, (_, line) in enumerate(missing) if i not in flagged]
    then = AppendState.accounted_to(
        f.rel,
        end,
        content.mark_of(f.live, end),
        live_id,
        held=held,
        partial=partial,
        rewritten_since=shrunk,
    )
    append_to_store(f, publish_lines, then, out)
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

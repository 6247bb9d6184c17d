"""Compaction of a memory file: the header, live entries, every tombstone and superseding entry, and
malformed lines, each line's original bytes in file order (DESIGN "View semantics": ``compact`` keeps
tombstones); ``MemoryFile.compact`` writes them by temp + rename under the writer lock (invariant I5).
"""

from __future__ import annotations

import logging
from datetime import datetime

from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import ParsedMemory
from memsync.formats.jsonl.records import FORMAT, Header, Tombstone
from memsync.formats.jsonl.timestamps import format_timestamp

log = logging.getLogger(__name__)


def compacted(parsed: ParsedMemory, data: bytes, now: datetime) -> bytes:
    """The compacted form of a memory file's bytes ``data`` (parsed as ``parsed``) at ``now``: its header
    line (a new one if it had none), then in file order the live entries, every tombstone, every entry
    that supersedes another, and the malformed lines, each line's original bytes, identical lines once.
    DESIGN "View semantics". Superseding entries are kept, dead or not, like tombstones: each says its target
    is gone, and without it a copy that holds the target but not the superseder would bring it back."""
    live = {entry.canonical for entry in parsed.view(now)}
    keep: dict[int, bytes] = dict(parsed.malformed)
    seen: set[bytes] = set()
    for numbered in parsed.records:
        record = numbered.record
        canonical = canonical_json(record.to_obj())
        marker = isinstance(record, Tombstone) or record.supersedes not in (None, record.id)
        if (marker or canonical in live) and canonical not in seen:
            seen.add(canonical)
            keep[numbered.line] = numbered.raw
    if parsed.header is not None:
        header = data.split(b"\n", 1)[0]
        keep.pop(1, None)
    else:
        header = canonical_json(Header(created_at=format_timestamp(now)).to_obj())
    return b"".join(line + b"\n" for line in [header, *(keep[n] for n in sorted(keep))])


def ensure_compactable(what: str, parsed: ParsedMemory) -> None:
    """Raise MemsyncError("<what> ...") unless ``parsed`` is agent-memory/0.1 (or has no header) and
    does not end in an unfinished line (a writer may be busy): what compaction refuses."""
    if parsed.header is not None and parsed.header.format != FORMAT:
        raise MemsyncError(
            f"{what} is {parsed.header.format!r}, not {FORMAT!r}. Use a tool that knows that format"
        )
    if parsed.partial_tail:
        raise MemsyncError(
            f"{what} ends in an unfinished line (a writer may be busy). Retry when no agent is writing"
        )

"""Appending one record to a memory file (DESIGN invariant I5): one ``O_APPEND`` write of one whole line
under the writer lock, the header written first into a new or empty file, the line validated and an
entry holding a secret refused (invariant I6).
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import filelock

from memsync.base.fsio import append_once, read_range, writer_lock
from memsync.errors import MemsyncError
from memsync.formats.bounded_json import MAX_LINE_BYTES
from memsync.formats.jsonl.canonical import canonical_json, is_header, parse_record
from memsync.formats.jsonl.records import FORMAT, Entry, Header, Record
from memsync.formats.jsonl.timestamps import format_timestamp, parse_timestamp
from memsync.formats.jsonl.validate import record_from_obj
from memsync.secrets import scan_text
from memsync.secrets.text import SPLIT, scan_units

# How long an append waits for another memsync writer of the same file (seconds).
APPEND_LOCK_TIMEOUT_S = 30.0
APPEND_LOCK_POLL_S = 0.002


@contextmanager
def locked(path: Path, action: str) -> Iterator[None]:
    """Hold the writer lock of ``path``, waiting at most APPEND_LOCK_TIMEOUT_S seconds for another writer.

    Raises MemsyncError("<action> <path>: ...") when it is not free in time."""
    lock = writer_lock(path)
    try:
        # Another writer holds it for about a millisecond (one append): poll often, not every 50 ms.
        lock.acquire(timeout=APPEND_LOCK_TIMEOUT_S, poll_interval=APPEND_LOCK_POLL_S)
    except filelock.Timeout:
        raise MemsyncError(
            f"{action} {path}: another memsync process held its lock for "
            f"{APPEND_LOCK_TIMEOUT_S:.0f} s. Retry, or stop the stuck process"
        ) from None
    try:
        yield
    finally:
        lock.release()


def ensure_header(path: Path, now: datetime) -> None:
    """Create the file ``path`` with its header line dated ``now`` if it is missing or empty (the caller
    holds the lock)."""
    try:
        if path.stat().st_size > 0:
            return
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
    header = Header(created_at=format_timestamp(now))
    append_once(path, canonical_json(header.to_obj()) + b"\n", create=True)


def append_record(path: Path, record: Record, now: datetime | None = None) -> None:
    """Append one entry or tombstone to ``path`` as one line: validated, scanned for secrets (entries),
    written with one O_APPEND write under the writer lock, creating the file with a header if needed.

    Raises MemsyncError for an invalid record, a line over ``MAX_LINE_BYTES``, a secret in an entry, an
    unsupported file format, an OS error, or this machine's clock running ahead of its remotes'
    (``clock.refuse_if_ahead``: the record's date would outrank later corrections everywhere).
    DESIGN I5, "Hostile input".
    """
    from memsync.memoryfile.clock import refuse_if_ahead  # reads the config and git: only a write needs them

    obj = record.to_obj()
    _, errors = record_from_obj(obj)
    if errors:
        key, message = errors[0]
        raise MemsyncError(f"append to {path}: field {key!r}: {message}. Fix the value and retry")
    line = canonical_json(obj) + b"\n"
    if len(line) > MAX_LINE_BYTES:
        # No reader would see it: the entry would be in the file and in no view, on any machine.
        raise MemsyncError(
            f"append to {path}: the entry is a line of {len(line):,} bytes, over the {MAX_LINE_BYTES:,} "
            "every reader accepts. Shorten its text or its tags"
        )
    if isinstance(record, Entry):
        _refuse_secrets(path, record)
    moment = now or datetime.now(UTC)
    dated = parse_timestamp(record.created_at) if record.created_at else moment
    refuse_if_ahead(f"{'remember' if isinstance(record, Entry) else 'forget'} in {path}", dated.timestamp())
    with locked(path, "append"):
        ensure_header(path, moment)
        fmt = _header_format(path)
        if fmt is not None and fmt != FORMAT:
            raise MemsyncError(
                f"append to {path}: the file is {fmt!r}, not {FORMAT!r}. Use a tool that writes that format"
            )
        _write(path, line)


def _header_format(path: Path) -> str | None:
    """The ``format`` of the first line when it is a header (reads only that line)."""
    try:
        with path.open("rb") as stream:
            obj = parse_record(stream.readline().rstrip(b"\n"))
    except OSError as exc:
        raise MemsyncError(f"read {path}: {exc.strerror or exc}. Check its permissions") from None
    if obj is None or not is_header(obj):
        return None
    fmt = obj.get("format")
    return fmt if isinstance(fmt, str) else None


def _write(path: Path, line: bytes) -> None:
    try:
        append_once(path, line)
    except OSError as exc:
        reason = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise MemsyncError(f"append to {path}: {reason}. Free space or fix permissions, then retry") from None


def _refuse_secrets(path: Path, entry: Entry) -> None:
    """Raise MemsyncError when the entry holds a secret: its text as written (multi-line text scans line
    by line), then every other field as one JSON line (``"api_key":"..."`` reads as an assignment), then
    its text after the last entry's text in ``path`` (a token remembered in two halves)."""
    others = {key: value for key, value in entry.to_obj().items() if key != "text"}
    findings = scan_text(entry.text + "\n" + canonical_json(others).decode("utf-8"))
    if findings:
        detectors = ", ".join(sorted({f.detector for f in findings}))
        raise MemsyncError(
            f"remember in {path}: the entry looks like it holds a secret ({detectors}). "
            "Memory must never store secrets: remove it, or describe where the secret lives"
        )
    # A token remembered in two halves: the previous entry's text ends where this one's begins.
    across = scan_units([_last_text(path), entry.text]).get(1)
    if across:
        detectors = ", ".join(sorted(name.removesuffix(SPLIT) for name in across))
        raise MemsyncError(
            f"remember in {path}: with the end of the entry before it, the entry completes what looks like "
            f"a secret split over two entries ({detectors}). Memory must never store secrets: remove it, "
            "and forget the entry before it if it holds the other half"
        )


def _last_text(path: Path) -> str:
    """The ``text`` of the last entry of memory file ``path`` ("" when there is none), read from at most
    the last ``MAX_LINE_BYTES`` of the file (a longer line no reader takes anyway)."""
    try:
        size = path.stat().st_size
        tail = read_range(path, max(0, size - MAX_LINE_BYTES - 1), size)
    except OSError:
        return ""
    lines = tail.split(b"\n")[:-1]  # complete lines only
    if len(tail) > MAX_LINE_BYTES:
        lines = lines[1:]  # the first may be cut
    for raw in reversed(lines):
        obj = parse_record(raw)
        if obj is not None and isinstance(obj.get("text"), str):
            return str(obj["text"])
    return ""

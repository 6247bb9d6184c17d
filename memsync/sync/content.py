"""Reading tracked files and taking their bytes apart: regular files only, sizes and tail marks of store
copies, complete lines, unfinished last lines (DESIGN I2: no torn line is ever published or delivered).

Append-only files are read by range (``read_range``, ``chunks``): what a pass reads is bounded by what
changed, never by the file's size, except where it settles a file by content."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from memsync.base.fsio import read_range
from memsync.formats.jsonl.canonical import is_header, parse_record
from memsync.sync.notices import Notices
from memsync.sync.records import HEAD, WINDOW, digest, mark

log = logging.getLogger(__name__)

ABSENT = "absent"  # the digest of a file that does not exist
TAIL = 65536  # bytes: the end of an append-only store copy that identifies its before/after forms
# Lines before an append that the secret scanner sees with it: a PEM key block is up to ~50 lines, and
# its BEGIN line may have been published (held back) in an earlier cycle than its body.
SCAN_CONTEXT_LINES = 100
# Bytes of complete lines an append-only pass holds at once: publish and deliver go chunk by chunk. The
# secret scanner needs ~13x the bytes it scans (2 MiB: ~30 MB); each chunk costs one sync of the store.
CHUNK = 2 << 20


def regular(path: Path, notices: Notices) -> os.stat_result | None:
    """The stat of ``path`` when it is a regular file, else None (missing; a FIFO or device is left alone
    with a warning once per path in ``notices``, as by ``read``). Raises ``OSError`` on other errors."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(info.st_mode):
        if not stat.S_ISDIR(info.st_mode) and notices.first(("not regular", path)):
            log.warning("%s is not a regular file: memsync leaves it alone", path)
        return None
    return info


def file_id(info: os.stat_result) -> str:
    """device:inode of a stat: a file replaced by another (rename over it) gets a new one."""
    return f"{info.st_dev}:{info.st_ino}"


def mark_of(path: Path, size: int) -> str:
    """``records.mark`` of the first ``size`` bytes of ``path``, read in at most two short reads."""
    if size <= HEAD + WINDOW:
        return digest(read_range(path, 0, max(size, 0)))
    return digest(read_range(path, 0, HEAD) + read_range(path, size - WINDOW, size))


def mark_after(path: Path, size: int, data: bytes) -> str:
    """``records.mark`` of the first ``size`` bytes of ``path`` (-1: none) followed by ``data``."""
    size = max(size, 0)
    if size + len(data) <= HEAD + WINDOW:
        return mark(read_range(path, 0, size) + data)
    head = (read_range(path, 0, min(size, HEAD)) + data[:HEAD])[:HEAD]
    window = (read_range(path, max(0, size - WINDOW), size) + data)[-WINDOW:]
    return digest(head + window)


def chunks(path: Path, start: int, stop: int, limit: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of ``path[start:stop]`` in pieces of whole lines of about ``limit`` bytes (default
    ``CHUNK``; a longer line is one piece); ``stop`` just after a newline, or the last piece ends
    unfinished."""
    limit = limit or CHUNK
    pos = start
    while pos < stop:
        data = read_range(path, pos, min(stop, pos + limit))
        cut = data.rfind(b"\n") + 1
        while cut == 0 and pos + len(data) < stop:
            data += read_range(path, pos + len(data), min(stop, pos + len(data) + limit))
            cut = data.rfind(b"\n") + 1
        piece = data[:cut] if cut else data
        if not piece:
            return
        yield pos, piece
        pos += len(piece)


def complete_end(path: Path, size: int) -> int:
    """The offset just after the last newline in the first ``size`` bytes of ``path`` (0 for none), read
    backwards in windows."""
    stop = size
    while stop > 0:
        start = max(0, stop - WINDOW)
        found = read_range(path, start, stop).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        stop = start
    return 0


def count_lines(path: Path, stop: int) -> int:
    """How many newlines the first ``stop`` bytes of ``path`` hold (streamed)."""
    return sum(data.count(b"\n") for _, data in chunks(path, 0, stop))


def common_lines(a: Path, b: Path, limit: int) -> int:
    """The length of the longest run of whole lines that ``a`` and ``b`` both begin with, within their
    first ``limit`` bytes (compared chunk by chunk)."""
    pos = 0
    while pos < limit:
        x = read_range(a, pos, min(limit, pos + CHUNK))
        y = read_range(b, pos, min(limit, pos + CHUNK))
        if not x or x != y:
            return complete_end(a, pos + _same_length(x, y))
        pos += len(x)
    return complete_end(a, limit)


def _same_length(x: bytes, y: bytes) -> int:
    """How many bytes ``x`` and ``y`` share at their start (bisected on slices, no loop over bytes)."""
    low, high = 0, min(len(x), len(y))
    a, b = memoryview(x), memoryview(y)
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def read(path: Path, notices: Notices) -> bytes | None:
    """The bytes of ``path``, or None when it does not exist or is not a regular file (a FIFO or device
    in place of a memory file must not block the cycle: it is opened non-blocking and left alone, with a
    warning once per path in ``notices``). Raises ``OSError`` on other read errors."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if not stat.S_ISDIR(mode) and notices.first(("not regular", path)):
            log.warning("%s is not a regular file: memsync leaves it alone", path)
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def digest_of(data: bytes | None) -> str:
    """``digest(data)``, or ``ABSENT`` for no file."""
    return ABSENT if data is None else digest(data)


def size(path: Path) -> int:
    """The size of ``path`` in bytes, -1 when it does not exist."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


def tail_mark(path: Path, size: int) -> str:
    """sha256 hex of the last ``TAIL`` bytes of ``path``'s first ``size`` bytes; "absent" for size -1.

    An append-only store copy only grows while memsync holds the store, so its size and this digest tell
    its "before" form from its "after" form without reading a file of many megabytes.
    """
    return ABSENT if size < 0 else digest(tail_bytes(path, size, TAIL))


def tail_bytes(path: Path, size: int, count: int) -> bytes:
    """The last ``count`` bytes of the first ``size`` bytes of ``path`` (b"" when ``size`` <= 0)."""
    if size <= 0:
        return b""
    with path.open("rb") as handle:
        handle.seek(max(0, size - count))
        return handle.read(min(size, count))


def stat_key(path: Path) -> str | None:
    """size:mtime_ns:inode of ``path``, None when it does not exist: changes whenever its content can."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"


def split(data: bytes) -> list[bytes]:
    """The complete lines of ``data`` (each with its newline); an unfinished last line is left out."""
    return [line + b"\n" for line in data.split(b"\n")[:-1]]


def lines(data: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """The lines of ``data[start:end]`` (``end`` just after a newline) with their start offsets."""
    found: list[tuple[int, bytes]] = []
    pos = start
    for line in split(data[start:end]):
        found.append((pos, line))
        pos += len(line)
    return found


def complete(data: bytes) -> bytes:
    """``data`` up to and including its last newline."""
    return data[: data.rfind(b"\n") + 1]


def find_block(live: bytes, block: bytes, start: int, end: int) -> int | None:
    """Where ``block`` (whole lines) sits in ``live[start:end]`` at a line boundary, or None."""
    pos = live.find(block, start, end)
    while pos != -1:
        if pos == 0 or live[pos - 1 : pos] == b"\n":
            return pos
        pos = live.find(block, pos + 1, end)
    return None


def lines_before(path: Path, offset: int, count: int = SCAN_CONTEXT_LINES) -> list[bytes]:
    """The last ``count`` complete lines of ``path[:offset]`` (``offset`` at a line boundary) that end
    within its last ``WINDOW`` bytes: the scanner's context, bounded."""
    start = max(0, offset - WINDOW)
    data = read_range(path, start, offset)
    found = data.splitlines(keepends=True)
    if start > 0:
        found = found[1:]  # the first piece may be the end of a longer line
    return found[-count:]


def jsonl_counts(lines: Iterable[bytes]) -> tuple[int, int]:
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

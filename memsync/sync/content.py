"""Reading tracked files and taking their bytes apart: regular files only, sizes and tail marks of store
copies, complete lines, unfinished last lines (DESIGN I2: no torn line is ever published or delivered)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from memsync.formats.jsonl.canonical import is_header, parse_record
from memsync.sync.notices import Notices
from memsync.sync.records import digest

log = logging.getLogger(__name__)

ABSENT = "absent"  # the digest of a file that does not exist
TAIL = 65536  # bytes: the end of an append-only store copy that identifies its before/after forms
# Lines before an append that the secret scanner sees with it: a PEM key block is up to ~50 lines, and
# its BEGIN line may have been published (held back) in an earlier cycle than its body.
SCAN_CONTEXT_LINES = 100


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


def lines_before(data: bytes, offset: int, count: int = SCAN_CONTEXT_LINES) -> list[bytes]:
    """The last ``count`` complete lines of ``data[:offset]`` (``offset`` at a line boundary)."""
    start = offset
    for _ in range(count):
        if start == 0:
            break
        start = data.rfind(b"\n", 0, start - 1) + 1
    return data[start:offset].splitlines(keepends=True)


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

"""The common prefix of the three versions of a memory file, found by streaming (DESIGN "Merge drivers",
jsonl): the longest line-aligned prefix they share that the line merge would not change, read in chunks
and copied by the kernel, so the jsonl driver parses only the tails. And the conflict-marker lines
other tools leave, the one kind of line that merge drops.
"""

from __future__ import annotations

import os
import re
from codecs import BOM_UTF8 as _BOM

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

_CHUNK = 1 << 22  # bytes read per file and step while streaming the common prefix
_MARKER = re.compile(rb"(?:<{7}|>{7}|\|{7})(?:[ \t]|\Z)|={7}[ \t]*\Z")
_MARKER_CHARS = b"<>|="


def is_conflict_marker(line: bytes) -> bool:
    """True for a conflict-marker line another tool left (``<<<<<<< x``, ``=======``, ``>>>>>>> x``,
    ``||||||| x``; ``line`` without its line end): the one kind of line the jsonl merge drops."""
    return _MARKER.match(line) is not None


def _common_len(chunks: Sequence[bytes]) -> int:
    """Length of the common prefix of ``chunks`` (bisection with memcmp-speed slice comparisons)."""
    head, others = chunks[0], chunks[1:]
    if all(chunk == head for chunk in others):
        return len(head)
    low, high = 0, min(len(chunk) for chunk in chunks)
    while high - low > 64:
        middle = (low + high) // 2
        if all(chunk[low:middle] == head[low:middle] for chunk in others):
            low = middle
        else:
            high = middle
    while low < high and all(chunk[low] == head[low] for chunk in others):
        low += 1
    return low


def _first_problem(window: bytes) -> int | None:
    """Index in ``window`` of the first byte of a line the line merge must rewrite or drop, or None:
    a line holding a CR (CRLF ends) or a conflict-marker line left by another tool. ``window[0]`` is
    context (the byte before the scanned bytes); 0 means the line started before the window.

    Only single-byte searches (memchr speed) run over the whole window, so scanning a 300 MB common
    prefix stays well under a second; a marker character is then checked for a line start and a run of 7.
    """
    found = []
    carriage = window.find(b"\r")
    if carriage >= 0:
        found.append(window.rfind(b"\n", 0, carriage) + 1)
    for char in _MARKER_CHARS:
        run = bytes((char,)) * 7
        at = window.find(run[:1])
        while at >= 0:
            if at > 0 and window[at - 1] == 0x0A and window.startswith(run, at):
                found.append(at)
                break
            at = window.find(run[:1], at + 1)
    return min(found) if found else None


def safe_prefix_len(streams: Sequence[BinaryIO], chunk_size: int = _CHUNK) -> int:
    """Bytes of the longest common prefix of all ``streams`` that ends at a line end and holds no line
    the line merge would change (no BOM, CR, or conflict marker). Reads in chunks, so memory stays
    constant whatever the file sizes. The prefix is identical in all three versions, so it is not
    re-parsed: a second header already present there (written by another tool) stays where it is."""
    for stream in streams:
        stream.seek(0)
    offset = aligned = 0
    # The 17 bytes before each chunk (a virtual line end before the file's first byte), so a marker run
    # of 7 that crosses a chunk boundary is seen whole, with the byte before it.
    context = b"\n"
    while True:
        chunks = [stream.read(chunk_size) for stream in streams]
        same = _common_len(chunks)
        data = chunks[0][:same] if same < len(chunks[0]) else chunks[0]
        if offset == 0 and data.startswith(_BOM):
            return 0
        window, start = context + data, offset - len(context)
        problem = _first_problem(window)
        if problem is not None:
            return start + problem if problem else aligned
        last_newline = data.rfind(b"\n")
        if last_newline >= 0:
            aligned = offset + last_newline + 1
        offset += len(data)
        if not data or any(len(chunk) != chunk_size for chunk in chunks) or same < chunk_size:
            return aligned
        context = window[-17:]


def copy_range(source: int, target: int, size: int) -> None:
    """Copy the first ``size`` bytes of file descriptor ``source`` to ``target`` at its position,
    in the kernel where it can (no user-space buffer for a large prefix)."""
    copied = 0
    while copied < size:
        try:
            step = os.copy_file_range(source, target, size - copied, copied)
        except OSError:  # file systems or kernels without copy_file_range between these files
            step = os.write(target, os.pread(source, min(size - copied, _CHUNK), copied))
        if step <= 0:
            raise OSError(f"could not copy {size} bytes: stopped after {copied}")
        copied += step

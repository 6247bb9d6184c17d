"""The jsonl merge driver: agent-memory/0.1 JSON Lines merged line by line, streaming the common prefix
(DESIGN "Merge drivers", jsonl; its speed: bench/merge_bench.py).

Only the tails after the longest common prefix of the three versions are parsed, and on files the
prefix is copied by the kernel, so a 1M-line merge takes about a second and little memory. Imported by
the light git entry point: the record model (:mod:`memsync.formats.jsonl.records`) is imported where it
is used.
"""

from __future__ import annotations

import io
import re
from codecs import BOM_UTF8 as _BOM

from memsync.merge.prefix import copy_range, is_conflict_marker, safe_prefix_len

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from os import PathLike
    from typing import Any, BinaryIO

_KNOWN_FORMAT = re.compile(r"agent-memory/0(?:\.\d+)*")


class _Line:
    """One line of a memory file: its bytes, its identity (canonical JSON, or the bytes for a line that
    is not a record or a file merged as opaque lines), its record, and whether it is a header. A plain
    class: a dataclass would cost the driver's start-up the import of dataclasses and typing."""

    __slots__ = ("header", "ident", "raw", "record")

    def __init__(self, raw: bytes, ident: bytes, record: dict[str, Any] | None, header: bool) -> None:
        self.raw, self.ident, self.record, self.header = raw, ident, record, header


def _split_lines(data: bytes, at_file_start: bool) -> list[bytes]:
    """Complete lines of ``data`` (an unterminated last line counts), BOM, CR ends and conflict-marker
    lines dropped."""
    if at_file_start and data.startswith(_BOM):
        data = data[len(_BOM) :]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out = []
    for line in lines:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not is_conflict_marker(line):
            out.append(line)
    return out


def _classify(raws: Iterable[bytes], opaque: bool) -> list[_Line]:
    from memsync.formats.jsonl.canonical import canonical_json, is_header, parse_record

    out = []
    for raw in raws:
        record = parse_record(raw)
        ident = None if record is None or opaque else canonical_json(record)
        header = record is not None and is_header(record)
        if ident is None:
            out.append(_Line(raw, b"\x00" + raw, None, header))
        else:
            out.append(_Line(raw, ident, record, header))
    return out


def _text_field(record: dict[str, Any] | None, name: str, missing: str = "") -> str:
    value = None if record is None else record.get(name)
    return value if isinstance(value, str) else missing


def _merge_lines(
    base: list[_Line], ours: list[_Line], theirs: list[_Line], header_first: bool
) -> list[bytes]:
    """The line-level jsonl merge of the tails after the common prefix (see :func:`merge_jsonl`)."""
    firsts: list[dict[bytes, bytes]] = [{}, {}, {}]
    for side, first in zip((base, ours, theirs), firsts, strict=True):
        for line in side:
            first.setdefault(line.ident, line.raw)

    def variant(ident: bytes) -> bytes:
        # The bytes of one line identity: as both sides have it, else as the side that changed them.
        b, o, t = (first.get(ident) for first in firsts)
        if o is not None and t is not None:
            return o if o == t or t == b else t if o == b else min(o, t)
        return o if o is not None else t if t is not None else b or b""

    out: list[bytes] = []
    skip: set[bytes] = set()
    if header_first:
        headers = [line for line in ours + theirs if line.header]
        skip = {line.ident for side in (base, ours, theirs) for line in side if line.header}
        if headers:
            chosen = min(
                headers, key=lambda line: (_text_field(line.record, "created_at", "\uffff"), line.ident)
            )
            out.append(variant(chosen.ident))
    ours_ids, theirs_ids = firsts[1].keys(), firsts[2].keys()
    out.extend(
        variant(line.ident)
        for line in base
        if line.ident in ours_ids and line.ident in theirs_ids and line.ident not in skip
    )
    added: dict[bytes, _Line] = {}
    for line in ours + theirs:
        if line.ident not in firsts[0] and line.ident not in skip:
            added.setdefault(line.ident, line)

    def order(line: _Line) -> tuple[bool, bool, str, str, bytes]:
        return (
            not line.header,
            line.record is None,
            _text_field(line.record, "created_at"),
            _text_field(line.record, "id"),
            line.ident,
        )

    out.extend(variant(line.ident) for line in sorted(added.values(), key=order))
    return out


def _is_known(record: dict[str, Any] | None) -> bool:
    value = None if record is None else record.get("format")
    return isinstance(value, str) and _KNOWN_FORMAT.fullmatch(value) is not None


def _merge_jsonl_streams(
    streams: Sequence[BinaryIO], out: BinaryIO, copy_prefix: Callable[[int], object]
) -> None:
    """Stream the common prefix through ``copy_prefix``, merge the tails, write them to ``out``."""
    from memsync.formats.jsonl.canonical import is_header, parse_record

    prefix = safe_prefix_len(streams)
    streams[1].seek(0)
    first_line = parse_record(streams[1].readline().rstrip(b"\n")) if prefix else None
    while True:
        raws = []
        for stream in streams:
            stream.seek(prefix)
            raws.append(_split_lines(stream.read(), prefix == 0))
        sides = [_classify(lines, opaque=False) for lines in raws]
        headers = [line.record for side in sides for line in side if line.header]
        if first_line is not None and is_header(first_line):
            headers.append(first_line)
        opaque = not all(_is_known(record) for record in headers)
        if prefix and not opaque and any(line.header for side in sides for line in side):
            prefix, first_line = 0, None  # a header to choose or drop: line 1 must be merged too
            continue
        break
    if opaque:
        sides = [_classify(lines, opaque=True) for lines in raws]
    merged = _merge_lines(sides[0], sides[1], sides[2], header_first=prefix == 0 and not opaque)
    copy_prefix(prefix)
    out.write(b"".join(line + b"\n" for line in merged))


def merge_jsonl(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of an agent-memory/0.1 JSON Lines file (bytes in, bytes out).

    The longest common line-aligned prefix of the three versions is kept byte for byte (only the tails
    are parsed, which is what makes a 1M-line merge fast). In the tails: a base line survives unless a
    side removed it (compaction); lines added on either side are kept once, a line being identified by
    its canonical JSON (so key order and spacing do not matter), and ordered by (created_at, id,
    canonical bytes); lines that are not JSON objects are kept verbatim after them (sorted by bytes);
    conflict-marker lines left by other tools are dropped. Exactly one header, on line 1: the one with
    the earliest ``created_at`` among the sides' headers; a file without a header gets none (a second
    header that all three versions already share in their common prefix is left as it is). A header
    whose format is not ``agent-memory/0.x`` makes the whole file opaque lines (identity = bytes,
    union, sorted). A line both sides hold with different bytes is written as the side that changed it
    wrote it, else the smaller bytes. CRLF becomes LF, a BOM is dropped, an unterminated last line
    counts as complete, the output ends with a newline (or is empty). Nothing depends on the clock.
    Never raises. Implements DESIGN "Merge drivers" (jsonl).
    """
    out = io.BytesIO()
    streams = [io.BytesIO(data) for data in (base, ours, theirs)]
    _merge_jsonl_streams(streams, out, lambda size: out.write(ours[:size]))
    return out.getvalue()


def merge_jsonl_files(
    base: PathLike[str] | str, ours: PathLike[str] | str, theirs: PathLike[str] | str, out: BinaryIO
) -> None:
    """:func:`merge_jsonl` on files, writing the result into ``out`` (an empty file opened for writing).

    The common prefix is copied file to file by the kernel and never held in memory, so peak memory is
    about the size of the tails, not of the files. Raises ``OSError`` on I/O errors.
    """
    with open(base, "rb") as b, open(ours, "rb") as o, open(theirs, "rb") as t:

        def copy_prefix(size: int) -> None:
            out.flush()
            copy_range(o.fileno(), out.fileno(), size)

        _merge_jsonl_streams([b, o, t], out, copy_prefix)

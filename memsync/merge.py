"""The merge drivers: pure, symmetric three-way merges of the files of a store (DESIGN "Merge drivers",
invariants I2-I4, I9; issue 3).

Every ``merge_KIND(base, ours, theirs) -> bytes`` is symmetric byte for byte
(``merge(b, x, y) == merge(b, y, x)``), never writes conflict markers, and is stable: ``merge(b, x, x)``
and ``merge(b, b, x)`` give ``x`` up to normalisation, and ``merge(b, m, m) == m`` for any result ``m``.
Where two versions cannot be combined, a rule that looks only at content (never at which side is ours)
decides, so crossing merges on two machines write the same bytes.

This module is imported by the light git entry point (``memsync.driver``): it imports nothing heavy at
module level (the JSONL record model, the path layout and subprocess are imported where they are used).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from memsync.formats.frontmatter import frontmatter_yaml, split_frontmatter
from memsync.formats.index import IndexBlock, parse_index, render

# The first words of the note the entry driver writes above two kept versions; `memsync status` greps
# files for it. The version separator lines start with BOTH_KEPT_VERSION_PREFIX.
BOTH_KEPT_NOTE_PREFIX = "[memsync] edited on two machines"
BOTH_KEPT_VERSION_PREFIX = "[memsync] version"
BOTH_KEPT_NOTE = (
    f"{BOTH_KEPT_NOTE_PREFIX} at once; both versions are kept below. To resolve: edit them into one text,"
    f" then delete this note and the two '{BOTH_KEPT_VERSION_PREFIX}' lines."
)

_BOM = b"\xef\xbb\xbf"
_T = TypeVar("_T", bound=Hashable)


# ---------------------------------------------------------------------------------------------------
# Shared: symmetric three-way merge of token sequences, and the one "both changed" rule.


def _pick(versions: Iterable[str]) -> str:
    """The one version kept when two sides changed the same item differently: the longest in UTF-8 bytes
    (it usually carries the most information), ties broken by the greater text. Side-independent."""
    return max(versions, key=lambda text: (len(text.encode("utf-8", "surrogateescape")), text))


def _matches(base: Sequence[_T], side: Sequence[_T]) -> dict[int, int]:
    """Index in ``side`` of every ``base`` element that the longest-matching-blocks diff pairs up."""
    pairs: dict[int, int] = {}
    for a, b, size in SequenceMatcher(None, base, side, autojunk=False).get_matching_blocks():
        for offset in range(size):
            pairs[a + offset] = b + offset
    return pairs


def _union2(first: Sequence[_T], second: Sequence[_T]) -> list[_T]:
    """Both sequences interleaved around their common elements (kept once), the smaller one's run first.

    The two are ordered by value before diffing, so the result does not depend on which side is ours.
    """
    low, high = sorted((list(first), list(second)))
    out: list[_T] = []
    i = j = 0
    for a, b, size in SequenceMatcher(None, low, high, autojunk=False).get_matching_blocks():
        out.extend(low[i:a])
        out.extend(high[j:b])
        out.extend(low[a:a + size])
        i, j = a + size, b + size
    return out


def _resolve_chunk(base: list[_T], ours: list[_T], theirs: list[_T]) -> list[_T]:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return _union2(ours, theirs)


def _diff3(base: Sequence[_T], ours: Sequence[_T], theirs: Sequence[_T]) -> list[_T]:
    """A symmetric diff3 of token sequences: stable runs kept, a chunk changed on one side taken from that
    side, a chunk changed on both sides differently replaced by the :func:`_union2` of the two."""
    to_ours, to_theirs = _matches(base, ours), _matches(base, theirs)
    out: list[_T] = []
    i = j = k = 0
    while i < len(base) or j < len(ours) or k < len(theirs):
        run = 0
        while i + run < len(base) and to_ours.get(i + run) == j + run and to_theirs.get(i + run) == k + run:
            run += 1
        if run:
            out.extend(base[i:i + run])
            i, j, k = i + run, j + run, k + run
            continue
        anchor = next((x for x in range(i, len(base)) if x in to_ours and x in to_theirs), None)
        if anchor is None:
            end_i, end_j, end_k = len(base), len(ours), len(theirs)
        else:
            end_i, end_j, end_k = anchor, to_ours[anchor], to_theirs[anchor]
        out.extend(_resolve_chunk(list(base[i:end_i]), list(ours[j:end_j]), list(theirs[k:end_k])))
        i, j, k = end_i, end_j, end_k
    return out


def _resolve_value(base: str | None, ours: str | None, theirs: str | None) -> str | None:
    """Three-way on one keyed value (None = absent): one-sided changes win; a deletion loses to a change."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if ours is None or theirs is None:
        return theirs if ours is None else ours
    return _pick((ours, theirs))


Block = tuple[str | None, str]  # (key or None for a keyless line, text with line ends)
_Token = tuple[str, str]


def _side_values(blocks: Sequence[Block], base_values: dict[str, str]) -> dict[str, str]:
    """One text per key of a side; duplicates of a key collapse to the :func:`_pick` of the copies that
    differ from the base (a second line written for a key is that side's change)."""
    copies: dict[str, list[str]] = {}
    for key, text in blocks:
        if key is not None:
            copies.setdefault(key, []).append(text)
    values: dict[str, str] = {}
    for key, texts in copies.items():
        changed = [text for text in texts if text != base_values.get(key)]
        values[key] = _pick(changed or texts)
    return values


def _tokens(blocks: Sequence[Block]) -> list[_Token]:
    return [("k", key) if key is not None else ("t", text) for key, text in blocks]


def _merge_keyed(base: Sequence[Block], ours: Sequence[Block], theirs: Sequence[Block]) -> list[Block]:
    """Three-way merge of keyed blocks: the order by a symmetric diff3 of keys and keyless lines, each
    key's text by :func:`_resolve_value`, one block per key (its first place), deleted keys dropped."""
    base_values = _side_values(base, {})
    ours_values = _side_values(ours, base_values)
    theirs_values = _side_values(theirs, base_values)
    resolved = {
        key: _resolve_value(base_values.get(key), ours_values.get(key), theirs_values.get(key))
        for key in base_values.keys() | ours_values.keys() | theirs_values.keys()
    }
    out: list[Block] = []
    placed: set[str] = set()
    for kind, value in _diff3(_tokens(base), _tokens(ours), _tokens(theirs)):
        if kind == "t":
            out.append((None, value))
            continue
        text = resolved.get(value)
        if text is not None and value not in placed:
            placed.add(value)
            out.append((value, text))
    # A key one side deleted and the other changed is kept; the order merge may have dropped its place.
    sides = sorted((_tokens(ours), _tokens(theirs)))
    for key in sorted(key for key, text in resolved.items() if text is not None and key not in placed):
        side = next(tokens for tokens in sides if ("k", key) in tokens)
        where = side.index(("k", key))
        before = [v for kind, v in side[:where] if kind == "k" and v in placed]
        after = [v for kind, v in side[where + 1:] if kind == "k" and v in placed]
        at = len(out)
        if before:
            at = next(n for n, (k, _) in enumerate(out) if k == before[-1]) + 1
        elif after:
            at = next(n for n, (k, _) in enumerate(out) if k == after[0])
        out.insert(at, (key, resolved[key] or ""))
        placed.add(key)
    return out


# ---------------------------------------------------------------------------------------------------
# Text helpers.


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _normalise_text(data: bytes) -> bytes:
    """A markdown file's bytes with a leading UTF-8 BOM dropped, CRLF turned into LF and a final newline."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    data = data.replace(b"\r\n", b"\n")
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def _one_sided(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The result when at most one side changed (git's own trivial merge), else None."""
    if ours == theirs or base == theirs:
        return ours
    if base == ours:
        return theirs
    return None


# ---------------------------------------------------------------------------------------------------
# Daily logs.

_STAMP = re.compile(rb"^[ \t]*(?:[-*+][ \t]+)?\[(\d{1,2}):(\d{2})(?::\d{2})?\]", re.MULTILINE)
_LF_LINE = re.compile(rb"[^\n]*\n")  # the lines of normalised text (split at LF only, not at a bare CR)


def _stamp(block: bytes) -> tuple[int, int] | None:
    match = _STAMP.search(block)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def _insertions(base: list[bytes], side: list[bytes]) -> list[list[bytes]] | None:
    """The lines ``side`` inserted before each base line (and after the last one, at index
    ``len(base)``) when ``side`` is ``base`` with lines inserted only, else None. Base lines are matched
    at their earliest place, so a pure append is all in the last gap."""
    gaps: list[list[bytes]] = [[] for _ in range(len(base) + 1)]
    matched = 0
    for line in side:
        if matched < len(base) and line == base[matched]:
            matched += 1
        else:
            gaps[matched].append(line)
    return gaps if matched == len(base) else None


def _merge_gap(ours: list[bytes], theirs: list[bytes]) -> list[bytes]:
    """Lines both sides inserted at one place: the lines both start with once, then each side's rest
    as one block, by first ``[HH:MM]`` stamp when both have one and they differ, else by bytes."""
    common = 0
    while common < min(len(ours), len(theirs)) and ours[common] == theirs[common]:
        common += 1
    blocks = [ours[common:], theirs[common:]]
    stamps = [_stamp(b"".join(block)) for block in blocks]
    if stamps[0] is not None and stamps[1] is not None and stamps[0] != stamps[1]:
        blocks = [block for _, block in sorted(zip(stamps, blocks, strict=True))]
    else:
        blocks.sort()
    return ours[:common] + blocks[0] + blocks[1]


def merge_daily(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a daily log ``daily/YYYY-MM-DD.md`` (bytes in, bytes out).

    When each side only inserted lines into ``base`` (appended, usually; an earlier merge may have put
    a peer's block before ours): base lines stay, and at each place where both sides inserted lines,
    the lines both start with come once, then each side's remaining lines as one block in its own order
    (repeated and blank lines kept), two blocks ordered by their first ``[HH:MM]`` stamp when both have
    one and the stamps differ, else by bytes. So a tail equal to or a prefix of the other adds nothing,
    and each side's version is kept as a subsequence of the result (later merges stay insert-only).
    With an empty base (both created the file) two different ``#`` title lines collapse to the smaller
    one, so the title appears once. Line ends become LF, a BOM is dropped, the output ends with a
    newline. When a side removed or changed base lines, :func:`merge_entry` decides. Never raises on
    any bytes. Implements DESIGN "Merge drivers" (daily) and issue 3.
    """
    trivial = _one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    base, ours, theirs = _normalise_text(base), _normalise_text(ours), _normalise_text(theirs)
    base_lines, ours_lines, theirs_lines = (_LF_LINE.findall(data) for data in (base, ours, theirs))
    if (not base_lines and ours_lines and theirs_lines and ours_lines[0].startswith(b"# ")
            and theirs_lines[0].startswith(b"# ")):
        ours_lines[0] = theirs_lines[0] = min(ours_lines[0], theirs_lines[0])
    ours_gaps, theirs_gaps = _insertions(base_lines, ours_lines), _insertions(base_lines, theirs_lines)
    if ours_gaps is None or theirs_gaps is None:
        return merge_entry(base, ours, theirs)
    out: list[bytes] = []
    for place, (ours_gap, theirs_gap) in enumerate(zip(ours_gaps, theirs_gaps, strict=True)):
        out.extend(_merge_gap(ours_gap, theirs_gap))
        out.extend(base_lines[place:place + 1])
    return b"".join(out)


# ---------------------------------------------------------------------------------------------------
# MEMORY.md indexes.


def merge_index(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a ``MEMORY.md`` index item by item (bytes in, bytes out).

    Items (see :mod:`memsync.formats.index`) are matched by key: additions from both sides are kept, a
    deletion on one side is honoured when the other left the item unchanged (a deletion never beats a
    change), and an item changed on both sides differently keeps the longer text in UTF-8 bytes (ties:
    the greater text) — the same rule picks one line when both sides add the same new slug with different
    descriptions (F17). Several items with one key collapse into one, at the first place. Lines that are
    not items (title, headings, preambles, blank lines) keep their place by a symmetric diff3; where both
    sides inserted at one place, both insertions are kept, the smaller first. Line ends become LF, a BOM
    is dropped, the output ends with a newline. Never raises. Implements DESIGN "Merge drivers" (index).
    """
    trivial = _one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    versions = [parse_index(_decode(_normalise_text(data))) for data in (base, ours, theirs)]
    blocks = [[(block.key, block.text) for block in version] for version in versions]
    merged = _merge_keyed(blocks[0], blocks[1], blocks[2])
    text = render([IndexBlock(key, text) for key, text in merged])
    return text.encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------------
# Curated entries and every other file.

_YAML_KEY = re.compile(r"([^\s#\-][^:\n]*?)[ \t]*:(?:[ \t]|\n|\Z)")


def _frontmatter_blocks(head: str) -> list[Block]:
    """The YAML of a frontmatter head as blocks: a top-level key line plus its indented or list lines."""
    blocks: list[Block] = []
    for line in re.findall(r"[^\n]*\n|[^\n]+\Z", frontmatter_yaml(head)):
        key = _YAML_KEY.match(line)
        attached = line[:1] in (" ", "\t") or line.startswith("- ")
        if blocks and blocks[-1][0] is not None and attached:
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + line)
        else:
            blocks.append((key.group(1) if key and not attached else None, line))
    return blocks


def _merge_frontmatter(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of frontmatter heads (``---`` fences included), key by key like index items."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    merged = _merge_keyed(_frontmatter_blocks(base), _frontmatter_blocks(ours), _frontmatter_blocks(theirs))
    body = "".join(text for _, text in merged)
    if not body and "" in (ours, theirs):
        return ""  # a side dropped the frontmatter and nothing the other side added is left
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{body}---\n"


def _git_merge_file(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """git's own clean three-way text merge (``git merge-file``), accepted only when it is clean in both
    side orders and gives the same bytes both ways; None otherwise."""
    import subprocess  # here, not at the top: ~10 ms of the driver's start-up that only this path needs
    import tempfile

    with tempfile.TemporaryDirectory(prefix=".memsync-merge-") as tmp:
        paths = []
        for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(data)
            paths.append(str(path))
        results = []
        for first, second in ((paths[1], paths[2]), (paths[2], paths[1])):
            done = subprocess.run(
                ["git", "merge-file", "-p", "-q", first, paths[0], second],
                capture_output=True, check=False, timeout=60,
            )
            if done.returncode != 0:
                return None
            results.append(done.stdout)
    return results[0] if results[0] == results[1] else None


def _both_kept(ours: str, theirs: str) -> str:
    ended = [text if text.endswith("\n") or not text else text + "\n" for text in (ours, theirs)]
    first, second = sorted(ended)
    return (
        f"{BOTH_KEPT_NOTE}\n\n{BOTH_KEPT_VERSION_PREFIX} 1 of 2\n{first}"
        f"{BOTH_KEPT_VERSION_PREFIX} 2 of 2\n{second}"
    )


def merge_entry(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a curated entry or any other store file (bytes in, bytes out).

    A markdown frontmatter (``---`` fenced YAML at the top) is merged key by key like index items; the
    rest goes through git's own clean three-way text merge (``git merge-file``, accepted only when clean
    and identical in both side orders). When that merge is not clean, both versions of the body are kept,
    sorted by bytes, each after a ``[memsync] version N of 2`` line, under one note line starting with
    :data:`BOTH_KEPT_NOTE_PREFIX` saying how to resolve. Bytes are kept as they are (line ends, a bare CR,
    invalid UTF-8). Raises ``OSError``/``subprocess.SubprocessError`` only when ``git`` cannot be run.
    Implements DESIGN "Merge drivers" (entry) and issue 3.
    """
    trivial = _one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    (base_head, base_body), (ours_head, ours_body), (theirs_head, theirs_body) = (
        split_frontmatter(_decode(data)) for data in (base, ours, theirs)
    )
    head = _merge_frontmatter(base_head, ours_head, theirs_head)
    raw_bodies = [body.encode("utf-8", "surrogateescape") for body in (base_body, ours_body, theirs_body)]
    body = _one_sided(*raw_bodies)
    if body is None:
        body = _git_merge_file(*raw_bodies)
    if body is None:
        body = _both_kept(ours_body, theirs_body).encode("utf-8", "surrogateescape")
    return head.encode("utf-8", "surrogateescape") + body


# ---------------------------------------------------------------------------------------------------
# agent-memory/0.1 JSON Lines.

_CHUNK = 1 << 22  # bytes read per file and step while streaming the common prefix
_MARKER = re.compile(rb"(?:<{7}|>{7}|\|{7})(?:[ \t]|\Z)|={7}[ \t]*\Z")
_MARKER_CHARS = b"<>|="
_KNOWN_FORMAT = re.compile(r"agent-memory/0(?:\.\d+)*")


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


def _safe_prefix_len(streams: Sequence[BinaryIO], chunk_size: int = _CHUNK) -> int:
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


@dataclass(frozen=True)
class _Line:
    """One line of a memory file: its bytes, its identity (canonical JSON, or the bytes for a line that
    is not a record or a file merged as opaque lines), its record, and whether it is a header."""

    raw: bytes
    ident: bytes
    record: dict[str, Any] | None
    header: bool


def _split_lines(data: bytes, at_file_start: bool) -> list[bytes]:
    """Complete lines of ``data`` (an unterminated last line counts), BOM, CR ends and conflict-marker
    lines dropped."""
    if at_file_start and data.startswith(_BOM):
        data = data[len(_BOM):]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out = []
    for line in lines:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not _MARKER.match(line):
            out.append(line)
    return out


def _classify(raws: Iterable[bytes], opaque: bool) -> list[_Line]:
    from memsync.formats.jsonl import canonical_json, is_header, parse_record

    out = []
    for raw in raws:
        try:
            record = parse_record(raw)
            ident = None if record is None or opaque else canonical_json(record)
        except (RecursionError, ValueError):  # nested too deep to parse; a lone surrogate escape
            record, ident = None, None
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
            chosen = min(headers, key=lambda line: (_text_field(line.record, "created_at", "\uffff"),
                                                    line.ident))
            out.append(variant(chosen.ident))
    ours_ids, theirs_ids = firsts[1].keys(), firsts[2].keys()
    out.extend(
        variant(line.ident) for line in base
        if line.ident in ours_ids and line.ident in theirs_ids and line.ident not in skip
    )
    added: dict[bytes, _Line] = {}
    for line in ours + theirs:
        if line.ident not in firsts[0] and line.ident not in skip:
            added.setdefault(line.ident, line)

    def order(line: _Line) -> tuple[bool, bool, str, str, bytes]:
        return (not line.header, line.record is None, _text_field(line.record, "created_at"),
                _text_field(line.record, "id"), line.ident)

    out.extend(variant(line.ident) for line in sorted(added.values(), key=order))
    return out


def _is_known(record: dict[str, Any] | None) -> bool:
    value = None if record is None else record.get("format")
    return isinstance(value, str) and _KNOWN_FORMAT.fullmatch(value) is not None


def _merge_jsonl_streams(
    streams: Sequence[BinaryIO], out: BinaryIO, copy_prefix: Callable[[int], object]
) -> None:
    """Stream the common prefix through ``copy_prefix``, merge the tails, write them to ``out``."""
    from memsync.formats.jsonl import is_header, parse_record

    prefix = _safe_prefix_len(streams)
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
    Never raises. Implements DESIGN "Merge drivers" (jsonl) and issue 3 (F1-F16).
    """
    out = io.BytesIO()
    streams = [io.BytesIO(data) for data in (base, ours, theirs)]
    _merge_jsonl_streams(streams, out, lambda size: out.write(ours[:size]))
    return out.getvalue()


def _copy_range(source: int, target: int, size: int) -> None:
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


def merge_jsonl_files(base: Path, ours: Path, theirs: Path, out: BinaryIO) -> None:
    """:func:`merge_jsonl` on files, writing the result into ``out`` (an empty file opened for writing).

    The common prefix is copied file to file by the kernel and never held in memory, so peak memory is
    about the size of the tails, not of the files. Raises ``OSError`` on I/O errors.
    """
    with base.open("rb") as b, ours.open("rb") as o, theirs.open("rb") as t:
        def copy_prefix(size: int) -> None:
            out.flush()
            _copy_range(o.fileno(), out.fileno(), size)

        _merge_jsonl_streams([b, o, t], out, copy_prefix)


_DRIVERS: dict[str, Callable[[bytes, bytes, bytes], bytes]] = {
    "jsonl": merge_jsonl, "daily": merge_daily, "index": merge_index, "entry": merge_entry,
}


def merge_for_path(rel_path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Three-way merge of the store file ``rel_path`` (store-relative POSIX path) with its driver, chosen
    by :func:`memsync.layout.kind_of`. Used by the sync engine's whole-file publish. Raises like the
    driver it dispatches to."""
    from memsync.layout import kind_of  # imported here: the path layout pulls in fsio's lock libraries

    return _DRIVERS[kind_of(rel_path)](base, ours, theirs)

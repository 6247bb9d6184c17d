"""The merge drivers: pure, symmetric three-way merges of the files of a store (DESIGN "Merge drivers",
invariants I2-I4, I9; issue 3).

Every ``merge_KIND(base, ours, theirs) -> bytes`` is symmetric byte for byte
(``merge(b, x, y) == merge(b, y, x)``), never writes conflict markers, and is stable: ``merge(b, x, x)``
and ``merge(b, b, x)`` give ``x`` up to normalisation, and ``merge(b, m, m) == m`` for any result ``m``.
Where two versions cannot be combined, a rule that looks only at content (never at which side is ours)
decides, so crossing merges on two machines write the same bytes.

The jsonl driver lives in :mod:`memsync.jsonl_merge`, the keyed-block merge shared by the index and
frontmatter rules in :mod:`memsync.keyed_merge`. This module is imported by the light git entry point
(``memsync.driver``): it imports nothing heavy at module level (the path layout and subprocess are
imported where they are used).
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left
from codecs import BOM_UTF8 as _BOM
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

from memsync.formats.frontmatter import frontmatter_yaml, split_frontmatter
from memsync.formats.index import IndexBlock, parse_index, render
from memsync.jsonl_merge import merge_jsonl, merge_jsonl_files
from memsync.keyed_merge import Block, merge_keyed

__all__ = [
    "BOTH_KEPT_NOTE",
    "BOTH_KEPT_NOTE_PREFIX",
    "BOTH_KEPT_VERSION_PREFIX",
    "merge_daily",
    "merge_entry",
    "merge_for_path",
    "merge_index",
    "merge_jsonl",
    "merge_jsonl_files",
]

# The first words of the note the entry driver writes above two kept versions; `memsync status` greps
# files for it. The version separator lines start with BOTH_KEPT_VERSION_PREFIX.
BOTH_KEPT_NOTE_PREFIX = "[memsync] edited on two machines"
BOTH_KEPT_VERSION_PREFIX = "[memsync] version"
BOTH_KEPT_NOTE = (
    f"{BOTH_KEPT_NOTE_PREFIX} at once; both versions are kept below. To resolve: edit them into one text,"
    f" then delete this note and the two '{BOTH_KEPT_VERSION_PREFIX}' lines."
)

# ---------------------------------------------------------------------------------------------------
# Text helpers.


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _normalise_text(data: bytes) -> bytes:
    """A markdown file's bytes with a leading UTF-8 BOM dropped, CRLF turned into LF and a final newline."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
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


def _base_in_both_orders(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> list[bytes]:
    """The base lines each side holds in the base's order (difflib's matching blocks of base and side),
    keeping those both sides match: a subsequence of both sides, the same whichever side is ours."""
    matched: list[set[int]] = []
    for side in (ours, theirs):
        blocks = difflib.SequenceMatcher(None, base, side, autojunk=False).get_matching_blocks()
        matched.append({i for block in blocks for i in range(block.a, block.a + block.size)})
    return [line for i, line in enumerate(base) if i in matched[0] & matched[1]]


def _common_start(ours: list[bytes], theirs: list[bytes]) -> int:
    """How many lines both lists start with."""
    common = 0
    while common < min(len(ours), len(theirs)) and ours[common] == theirs[common]:
        common += 1
    return common


def _two_blocks(ours: list[bytes], theirs: list[bytes], *, inner: bool) -> list[bytes]:
    """Lines both sides inserted at one place with no shared text line between: the lines both start
    with once, then each side's rest as one block, by first ``[HH:MM]`` stamp when both have one and
    they differ, else by bytes.

    ``inner`` (before a line both sides hold: a base line, or a line both got from an earlier merge;
    never at the end of an append): the lines both end with also come once, after the blocks, since
    both sides got them from the same earlier merge."""
    common = _common_start(ours, theirs)
    ours_rest, theirs_rest = ours[common:], theirs[common:]
    tail = 0
    while (
        inner
        and tail < min(len(ours_rest), len(theirs_rest))
        and ours_rest[-1 - tail] == theirs_rest[-1 - tail]
    ):
        tail += 1
    blocks = [ours_rest[: len(ours_rest) - tail], theirs_rest[: len(theirs_rest) - tail]]
    stamps = [_stamp(b"".join(block)) for block in blocks]
    if stamps[0] is not None and stamps[1] is not None and stamps[0] != stamps[1]:
        blocks = [block for _, block in sorted(zip(stamps, blocks, strict=True))]
    else:
        blocks.sort()
    return ours[:common] + blocks[0] + blocks[1] + ours_rest[len(ours_rest) - tail :]


# A line with a letter, a digit or a non-ASCII byte: text, not a blank line or bare markup (```, ---, |-|).
_TEXT = re.compile(rb"[^\s!-/:-@\[-`{-~]")


def _shared_lines(ours: list[bytes], theirs: list[bytes]) -> list[tuple[int, int]]:
    """The places ``(i, j)`` with ``ours[i] == theirs[j]`` of the lines both sides got from one earlier
    merge, as the longest chain increasing in both ``i`` and ``j`` (one longest chain, always the same
    for the same two lists): O(n log n) in lines.

    Such a line is a text line that occurs once in each side and lies in a run: two or more such lines
    with the same lines from one to the next on both sides (a block copied by a merge). A lone one is
    a line each machine wrote on its own (invariant I1: both copies stay), so it is left out. A longest
    chain of the runs' lines holds every run whole (a run's next line always fits in after it)."""
    ours_count, theirs_count = Counter(ours), Counter(theirs)
    once = {
        line
        for line in ours_count.keys() & theirs_count.keys()
        if ours_count[line] == theirs_count[line] == 1 and _TEXT.search(line)
    }
    if not once:
        return []  # the usual case, two different appends: no pass over the lines below
    theirs_at = {line: j for j, line in enumerate(theirs) if line in once}
    pairs = [(i, theirs_at[line]) for i, line in enumerate(ours) if line in once]
    # linked[k]: pairs k and k + 1 (next in ours, and then next in theirs too) are one stretch of equal
    # lines on both sides (usually next to each other); the stretches compared are disjoint: O(n).
    linked = [
        i2 - i1 == j2 - j1 > 0 and (i2 - i1 == 1 or ours[i1 + 1 : i2] == theirs[j1 + 1 : j2])
        for (i1, j1), (i2, j2) in pairwise(pairs)
    ]
    pairs = [
        pair
        for pair, to_next, to_last in zip(pairs, [*linked, False], [False, *linked], strict=True)
        if to_next or to_last
    ]
    if all(left[1] < right[1] for left, right in pairwise(pairs)):
        return pairs  # the usual case: both sides hold the shared lines in one order
    # Longest increasing subsequence of the j's (patience sorting): ends[k] is the pair that ends the
    # chain of length k + 1 with the smallest j so far, before[p] the pair before pair p in its chain.
    ends: list[int] = []
    ends_j: list[int] = []
    before: list[int] = []
    for p, (_, j) in enumerate(pairs):
        k = bisect_left(ends_j, j)
        before.append(ends[k - 1] if k else -1)
        if k == len(ends):
            ends.append(p)
            ends_j.append(j)
        else:
            ends[k], ends_j[k] = p, j
    chain: list[tuple[int, int]] = []
    p = ends[-1] if ends else -1
    while p >= 0:
        chain.append(pairs[p])
        p = before[p]
    return chain[::-1]


def _merge_gap(ours: list[bytes], theirs: list[bytes], *, inner: bool = False) -> list[bytes]:
    """Lines both sides inserted at one place (see :func:`merge_daily`): the runs of text lines both
    hold once each (blocks both got from earlier merges, wherever each side put them; see
    :func:`_shared_lines`) come once, in the order of both; between and around them
    :func:`_two_blocks` merges what each side has alone. Symmetric: the shared lines are found with
    the two sides in byte order."""
    first, second = sorted((ours, theirs))
    start = _common_start(first, second)  # first: cheap, and the usual tail extends the other one
    out, first, second = first[:start], first[start:], second[start:]
    at_first = at_second = 0
    for i, j in _shared_lines(first, second):
        if i > at_first or j > at_second:
            out.extend(_two_blocks(first[at_first:i], second[at_second:j], inner=True))
        out.append(first[i])
        at_first, at_second = i + 1, j + 1
    out.extend(_two_blocks(first[at_first:], second[at_second:], inner=inner))
    return out


def merge_daily(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a daily log ``daily/YYYY-MM-DD.md`` (bytes in, bytes out).

    When each side only inserted lines into ``base`` (appended, usually; an earlier merge may have put
    a peer's block before ours): base lines stay, and at each place where both sides inserted lines,
    a run of text lines (lines with a letter, a digit or a non-ASCII byte) that each side inserted
    there exactly once, two or more with the same lines from one to the next on both sides, is a block
    both got from earlier merges, wherever each put it, and comes once (the most such lines that both
    sides hold in one order). A lone such line is taken as written on each machine (invariant I1) and
    kept twice; so is a third peer's block with one text line held at different places: a duplicate,
    never a lost line (only two machines writing the same two or more lines in a row on their own
    would keep them once). Before, between and after those lines, the lines both start with come once
    (before a line both hold, also the lines both end with), then each side's remaining lines as one
    block in its own order (repeated and blank lines kept), two blocks ordered by their first
    ``[HH:MM]`` stamp when both have one and the stamps differ, else by bytes. So a tail
    equal to or a prefix of the other adds nothing, a block both hold from a third peer is kept once,
    and each side's version is kept as a subsequence of the result (later merges stay insert-only).
    With an empty base (both created the file) two different ``#`` title lines collapse to the smaller
    one, so the title appears once. Line ends become LF, a BOM is dropped, the output ends with a
    newline. When both sides hold every base line but not in the base's order (git's virtual base of
    a criss-cross merge), the base lines both hold in order serve as the base; when a side removed or
    changed base lines, :func:`merge_entry` decides. Never raises on
    any bytes. Implements DESIGN "Merge drivers" (daily) and issue 3.
    """
    trivial = _one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    base, ours, theirs = _normalise_text(base), _normalise_text(ours), _normalise_text(theirs)
    base_lines, ours_lines, theirs_lines = (_LF_LINE.findall(data) for data in (base, ours, theirs))
    if (
        not base_lines
        and ours_lines
        and theirs_lines
        and ours_lines[0].startswith(b"# ")
        and theirs_lines[0].startswith(b"# ")
    ):
        ours_lines[0] = theirs_lines[0] = min(ours_lines[0], theirs_lines[0])
    ours_gaps, theirs_gaps = _insertions(base_lines, ours_lines), _insertions(base_lines, theirs_lines)
    if ours_gaps is None or theirs_gaps is None:
        if not Counter(base_lines) <= Counter(ours_lines) & Counter(theirs_lines):
            return merge_entry(base, ours, theirs)
        # Every base line is still on both sides, in another order: git's virtual base of a criss-cross
        # (two merge bases merged into one) ordered blocks as no side did. Lines are only inserted.
        base_lines = _base_in_both_orders(base_lines, ours_lines, theirs_lines)
        ours_gaps, theirs_gaps = _insertions(base_lines, ours_lines), _insertions(base_lines, theirs_lines)
        assert ours_gaps is not None and theirs_gaps is not None  # a subsequence of both, by construction
    out: list[bytes] = []
    for place, (ours_gap, theirs_gap) in enumerate(zip(ours_gaps, theirs_gaps, strict=True)):
        out.extend(_merge_gap(ours_gap, theirs_gap, inner=place < len(base_lines)))
        out.extend(base_lines[place : place + 1])
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
    merged = merge_keyed(blocks[0], blocks[1], blocks[2])
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
    merged = merge_keyed(_frontmatter_blocks(base), _frontmatter_blocks(ours), _frontmatter_blocks(theirs))
    body = "".join(text for _, text in merged)
    if not body and "" in (ours, theirs):
        return ""  # a side dropped the frontmatter and nothing the other side added is left
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{body}---\n"


def _git_merge_file(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """git's own clean three-way text merge (``git merge-file``), accepted only when it is clean in both
    side orders and gives the same bytes both ways; None otherwise."""
    import tempfile

    from memsync import git  # here, not at the top: ~10 ms of the driver's start-up that only this path needs

    with tempfile.TemporaryDirectory(prefix=".memsync-merge-") as tmp:
        paths = []
        for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(data)
            paths.append(str(path))
        results = []
        for first, second in ((paths[1], paths[2]), (paths[2], paths[1])):
            done = git.run(["merge-file", "-p", "-q", first, paths[0], second], timeout=60)
            if done.status != 0:
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
    invalid UTF-8). Raises ``OSError`` only when ``git`` cannot be run.
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


_DRIVERS: dict[str, Callable[[bytes, bytes, bytes], bytes]] = {
    "jsonl": merge_jsonl,
    "daily": merge_daily,
    "index": merge_index,
    "entry": merge_entry,
}


def merge_for_path(rel_path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Three-way merge of the store file ``rel_path`` (store-relative POSIX path) with its driver, chosen
    by :func:`memsync.layout.kind_of`. Used by the sync engine's whole-file publish. Raises like the
    driver it dispatches to."""
    from memsync.layout import kind_of  # imported here: the path layout pulls in fsio's lock libraries

    return _DRIVERS[kind_of(rel_path)](base, ours, theirs)

"""Scan what a reader will see (DESIGN "Hostile input", invariant I6): each unit (a line of a log, an entry
of a memory file, a frontmatter value) normalised (:mod:`.normalise`), then what it decodes to
(:mod:`.decode`), then the seam between two adjacent units, so a token split over two lines is seen
whole. All of it goes to the detectors in one text, so the cost stays one gated pass."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from memsync.secrets.decode import variants
from memsync.secrets.detectors import Finding, detect
from memsync.secrets.normalise import normalise
from memsync.secrets.shapes import BARE

SPLIT = " (split over two lines)"
# The end of a line and the start of the next, glued: the last word of the first (with up to this many
# characters before it, where a keyword such as "password is" sits) and the first word of the second.
_CONTEXT_CHARS = 48
_MAX_WORD = 512
# What leads a line before its first word: blockquote markers, a list item's bullet or number, a table
# row's pipe.
_LEAD = r"\s*(?:(?:[>|]|[-*+](?=\s)|\d{1,3}[.)](?=\s))\s*)*"
_FIRST_WORD = re.compile(rf"{_LEAD}(\S{{2,{_MAX_WORD}}})")
# A token may run on through lines that hold nothing else: this many more at most.
_MAX_RUN_ON = 3
_ONE_WORD = re.compile(rf"{_LEAD}\S+[\s|]*")
# A seam may step over this many blank lines (a value given a paragraph of its own).
_MAX_BLANK = 2
# The start of a token with a prefix of its own, too short to be the token: the words after it that may
# be its rest (letters and digits with a digit or a capital: not prose) are glued on, up to
# _MAX_PIECES of them within _RUN_WORDS words, across spaces, list items, table cells and lines.
_TOKEN_START = re.compile(
    r"(?:gh[pousr]_|github_pat_|glpat-|sk-|hf_|xox[abposre]-|AKIA|ASIA|AIza)[A-Za-z0-9_-]*"
)
_TOKEN_PIECE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{3,}")
_WORD_TRIM = "|*`'\"()[]{}<>,.;:!?"
_MAX_PIECES = 3
_RUN_WORDS = 24
_MIN_JOINED = 8  # shorter than any password: two short words glued say nothing
# Between sections of the scanned text: no detector matches it, and it ends a private key block.
_GAP = "~"


@dataclass
class _Sheet:
    """The text the detectors read, line by line, with the units behind each line."""

    lines: list[str] = field(default_factory=list)
    sources: list[tuple[int, ...]] = field(default_factory=list)

    def add(self, text: str, sources: tuple[int, ...]) -> None:
        for line in text.split("\n"):
            self.lines.append(line)
            self.sources.append(sources)

    def section(self, text: str, sources: tuple[int, ...]) -> None:
        self.add(_GAP, ())
        self.add(text, sources)


def _seam(first: str, second: str, glue: str = "") -> str | None:
    """The end of ``first`` joined by ``glue`` to the start of ``second``, when both end and start in a
    word (a markdown hard break, blockquote and list markers and table pipes between them set aside)."""
    first = first[-_MAX_WORD - _CONTEXT_CHARS :].rstrip(" \t|").removesuffix("\\")
    if not first or first[-1].isspace():
        return None
    last = first.rsplit(None, 1)[-1][-_MAX_WORD:]  # split, not a pattern: one backtracks on long words
    head = _FIRST_WORD.match(second)
    if head is None or len(last) < 2 or len(last) + len(head.group(1)) < _MIN_JOINED:
        return None
    return first[max(0, len(first) - len(last) - _CONTEXT_CHARS) :] + glue + head.group(1)


def _next_item(items: Sequence[str], index: int) -> int | None:
    """The index of the first item after ``index`` that is not blank, up to ``_MAX_BLANK`` blank ones
    stepped over."""
    for after in range(index + 1, min(len(items), index + _MAX_BLANK + 2)):
        if items[after].strip():
            return after
    return None


def _seams(items: Sequence[str]) -> Iterator[tuple[int, int, str]]:
    """(i, j, text): the last line of item i glued to the first line of the next item j that is not
    blank (:func:`_seam`), also joined by a space (a password phrase ending item i, its value starting
    item j), and on through up to ``_MAX_RUN_ON`` more items while item j holds one word only (a token
    wrapped over several lines), j then the last item glued. Items are lines, or units of several
    lines."""
    for first in range(len(items) - 1):
        second = _next_item(items, first)
        if second is None:
            continue
        end, start = items[first].rpartition("\n")[2], items[second].partition("\n")[0]
        spaced = _seam(end, start, " ")
        if spaced is not None:
            yield first, second, spaced
        joined = _seam(end, start)
        last = second
        while joined is not None:
            yield first, last, joined
            if last + 1 >= len(items) or last - first > _MAX_RUN_ON or not _ONE_WORD.fullmatch(items[last]):
                break
            last += 1
            joined = _seam(joined, items[last].partition("\n")[0])


def scan_units(units: Sequence[str], edges: Sequence[str] | None = None) -> dict[int, set[str]]:
    """Index in ``units`` -> the detectors that flag it, for the units holding a secret as read.

    A unit may span several lines (they are scanned in place, so a private key block across units is
    seen whole). ``edges``: per unit the text whose lines may carry a token on into the next unit's
    (default: the units themselves; a memory file passes each entry's ``text``, not its JSON). A token
    seen across a seam by a detector that flags neither side on its own flags both units, with the
    detector's name plus :data:`SPLIT`; a side's own secret seen again across the seam flags nothing
    more (no clean neighbour is held back).
    Never raises; linear in the size of the units.
    """
    return scan_groups([(units, edges)])[0]


def scan_groups(groups: Sequence[tuple[Sequence[str], Sequence[str] | None]]) -> list[dict[int, set[str]]]:
    """``scan_units`` of each (units, edges) of ``groups`` (many files' texts, say), with the detectors
    run once over all of them: per group, index in its units -> the detectors that flag it, as
    ``scan_units`` of that group alone finds them. No seam joins two groups and a gap line between them
    ends a private key block, so no group's text flags another's. Never raises; linear in the total size.
    """
    sheet = _Sheet()
    spans: list[range] = []
    for units, edges in groups:
        start = spans[-1].stop if spans else 0
        spans.append(range(start, start + len(units)))
        _add_group(sheet, units, edges, start)
    flagged = _flagged(sheet)
    found: list[dict[int, set[str]]] = [{} for _ in groups]
    group_of = {index: (number, span.start) for number, span in enumerate(spans) for index in span}
    for index, names in flagged.items():
        number, start = group_of[index]
        found[number][index - start] = names
    return found


def _add_group(sheet: _Sheet, units: Sequence[str], edges: Sequence[str] | None, start: int) -> None:
    """Put one group's units (numbered from ``start``), what they decode to and their seams on ``sheet``,
    after a gap line when another group is there."""
    normal = [normalise(unit) for unit in units]
    if sheet.lines:
        sheet.add(_GAP, ())
    for index, text in enumerate(normal, start):
        sheet.add(text, (index,))
    for index, text in enumerate(normal, start):
        for line in text.split("\n"):
            for decoded in variants(line):
                sheet.section(decoded, (index,))
    seams = normal if edges is None else [normalise(edge) for edge in edges]
    for index, text in enumerate(seams, start):
        for _, _, joined in _seams(text.split("\n")):
            sheet.section(joined, (index,))
    for first, last, joined in _seams(seams):
        sheet.section(joined, tuple(range(start + first, start + last + 1)))
    for pieces, joined in _token_runs(seams):
        sheet.section(joined, tuple(start + index for index in pieces))


def _token_runs(texts: Sequence[str]) -> Iterator[tuple[tuple[int, ...], str]]:
    """(indexes of the texts it spans, text): each start of a token (:data:`_TOKEN_START`) glued to the
    next one, two, three pieces that may be its rest, from the words that follow it in ``texts`` (a
    token split by a space, over list items, table rows, a frontmatter value and the body, or two
    entries with words between). Only texts holding such a start are split into words."""
    if not any(_TOKEN_START.search(text) for text in texts):
        return
    words = [(index, word.strip(_WORD_TRIM)) for index, text in enumerate(texts) for word in text.split()]
    for position, (index, word) in enumerate(words):
        if not _TOKEN_START.fullmatch(word):
            continue
        joined, pieces = word, [index]
        for after, piece in words[position + 1 : position + 1 + _RUN_WORDS]:
            if not _TOKEN_PIECE.fullmatch(piece) or (
                piece.isalpha() and (piece.islower() or piece.istitle())
            ):
                continue  # a word of prose
            joined += piece
            pieces.append(after)
            yield tuple(sorted(set(pieces))), joined
            if len(pieces) > _MAX_PIECES:
                break


def _flagged(sheet: _Sheet) -> dict[int, set[str]]:
    """Index of a unit -> the detectors that flag it, from one run of the detectors over ``sheet``."""
    flagged: dict[int, set[str]] = {}
    across: dict[tuple[int, ...], set[str]] = {}
    for finding in detect("\n".join(sheet.lines)):
        sources = sheet.sources[finding.line - 1]
        if len(sources) == 1:
            flagged.setdefault(sources[0], set()).add(finding.detector)
        elif sources:
            across.setdefault(sources, set()).add(finding.detector)
    alone = {index: set(names) for index, names in flagged.items()}
    for sources, detectors in across.items():
        # What neither side shows on its own: a token the seam completes (one side's own secret seen
        # again across the seam holds nothing more). Next to a flagged side, a bare value is the
        # neighbour's token glued to a word, not a token of its own.
        seen = set().union(*(alone.get(index, ()) for index in sources))
        new = detectors - seen - (BARE if seen else frozenset())
        for index in sources if new else ():
            flagged.setdefault(index, set()).update(detector + SPLIT for detector in new)
    return flagged


def scan_text(text: str) -> list[Finding]:
    """The lines of ``text`` (split on ``\\n`` only) that hold a secret as a reader sees them, one
    Finding per (1-based line, detector), sorted: see :func:`scan_units`, each line a unit.

    Used on everything that may enter memory or leave the machine as text (an entry ``remember`` writes,
    what handoff hands over, publish's lines). Never raises; linear.
    """
    flagged = scan_units(text.split("\n"))
    return sorted(
        (Finding(index + 1, name) for index, names in flagged.items() for name in names),
        key=lambda f: (f.line, f.detector),
    )

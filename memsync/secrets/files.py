"""What a reader sees in each kind of file memsync publishes, for the scanner (DESIGN "Hostile input",
invariant I6): a memory-file line as its JSON strings decoded (keys and values; ``\\u0041KIA`` and
``\\/`` escapes are what ``memsync show`` prints), with the seams between entries' texts; a daily-log
line as text; a whole file as its text plus its frontmatter's values; a path as its names.

Text memsync cannot read as UTF-8 is never published as text: a line of an append-only file, or a
whole file, that is not UTF-8 is held back like a secret (detector :data:`NOT_UTF8`), since no scanner
can say what it holds (UTF-16 text hid a key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Sequence
from functools import lru_cache
from typing import Any

from memsync.base.layout import kind_of
from memsync.formats import bounded_yaml
from memsync.formats.bounded_json import STRING_LITERAL
from memsync.formats.markdown.frontmatter import frontmatter_yaml, split_frontmatter
from memsync.secrets.allowed import line_hash
from memsync.secrets.shapes import BARE, CONTEXT
from memsync.secrets.text import SPLIT, scan_groups, scan_units

NOT_UTF8 = "not UTF-8 text"
IN_NAME = " (in the file name)"

# What makes YAML read a value otherwise than as the text after "key: ": quoting and escapes, block and
# flow styles, anchors, tags, directives, continuation lines.
_YAML_SYNTAX = re.compile(r"""["'\\|>\[\]{}&*!%@`]|\n[ \t]""")
_TEXT_FIELD = re.compile(r'"text"\s*:\s*("[^"\\]*(?:\\.[^"\\]*)*")', re.DOTALL)


def _first(names: set[str]) -> str:
    """The detector to report of those that flag one thing: a token's own name before its context's
    (``Authorization: token ghp_...`` is a GitHub Token), before a bare value's, before a finding across
    a seam."""

    def rank(name: str) -> tuple[bool, bool, bool, str]:
        own = name.removesuffix(SPLIT)
        return name.endswith(SPLIT), own in BARE, own in CONTEXT, name

    return min(names, key=rank)


def _string(literal: str) -> str:
    """A JSON string literal's value (the literal itself when it does not decode)."""
    try:
        value = json.loads(literal)
    except ValueError:
        return literal
    return value if isinstance(value, str) else literal


def _json_as_read(line: str) -> str:
    """``line`` with every JSON string literal (keys and values) decoded in place, quotes kept: what a
    reader of the memory file sees, and ``"api_key": "..."`` still reads as an assignment."""
    return STRING_LITERAL.sub(
        lambda m: m.group(0) if "\\" not in m.group(0) else f'"{_string(m.group(0))}"', line
    )


def _text_field(line: str) -> str:
    """The ``text`` of a memory-file line as read, "" when it has none: where a token split across two
    entries would continue."""
    match = _TEXT_FIELD.search(line)
    return "" if match is None else _string(match.group(1))


def scan_appended(
    rel: str, lines: Sequence[bytes], context: Sequence[bytes] = (), allowed: Collection[str] = ()
) -> dict[int, str]:
    """Index in ``lines`` -> detector, for the appended lines of the append-only store path ``rel`` that
    must stay on this machine: a secret as read (one detector per line, a token's own first), or a line
    that is not UTF-8 (:data:`NOT_UTF8`). ``lines`` end with ``\\n``; ``context`` are the complete lines
    just before them, scanned with them (a key block or a token split across cycles) and never returned.
    A line whose ``allowed.line_hash`` is in ``allowed`` (a person said it is no secret) is not returned.
    Never raises."""
    memory = kind_of(rel) == "jsonl"
    units: list[str] = []
    edges: list[str] = []
    flagged: dict[int, str] = {}
    for number, raw in enumerate((*context, *lines)):
        try:
            text = raw.rstrip(b"\n").decode("utf-8")
        except UnicodeDecodeError:
            text = ""
            if number >= len(context):
                flagged[number - len(context)] = NOT_UTF8
        units.append(_json_as_read(text) if memory else text)
        edges.append(_text_field(text) if memory else text)
    for number, names in scan_units(units, edges).items():
        if number >= len(context):
            flagged.setdefault(number - len(context), _first(names))
    if allowed:
        return {i: name for i, name in flagged.items() if line_hash(lines[i]) not in allowed}
    return flagged


def _scalars(value: Any, key: str = "") -> Iterator[str]:
    """``key: value`` for every scalar in a loaded frontmatter (nested keys and list items too)."""
    pending = [(key, value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, dict):
            pending.extend((str(k), v) for k, v in item.items())
            yield from (str(k) for k in item)
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend((where, v) for v in item)
        elif item is not None:
            yield f"{where}: {item}" if where else str(item)


def _frontmatter_values(text: str) -> list[str]:
    """The values of the frontmatter of ``text`` as YAML reads them (escapes, folded and quoted scalars
    undone); [] without frontmatter or when it is not valid bounded YAML (its lines are scanned anyway)."""
    yaml = frontmatter_yaml(split_frontmatter(text)[0])
    if not _YAML_SYNTAX.search(yaml):
        return []  # plain "key: value" lines: YAML reads each value as the line's text, scanned as such
    try:
        loaded = bounded_yaml.load(yaml)
    except bounded_yaml.FAILURES:
        return []
    return list(_scalars(loaded))


def scan_whole(data: bytes, allowed: Collection[str] = ()) -> tuple[int, str] | None:
    """(1-based line, detector) of the first thing in the whole file ``data`` that
    must stay on this machine: a secret in its text or frontmatter values as read (a value is reported
    at line 1), or the file not being UTF-8 (the line of its first bad byte, :data:`NOT_UTF8`); None
    when it may be published; a line whose hash is in ``allowed`` does not count. Never raises."""
    return scan_wholes([data], allowed)[0]


def scan_wholes(files: Sequence[bytes], allowed: Collection[str] = ()) -> list[tuple[int, str] | None]:
    """``scan_whole`` of each of ``files`` (whole files' bytes), in order, with the detectors run once
    over all their texts (each file's text scanned as alone: no seam or key block joins two files).
    For a first sync of thousands of small files: one scan per file cost ~25 µs of setup each.
    Never raises; linear in the total size (a caller bounds it, ``memsync.sync.writes``)."""
    verdicts: list[tuple[int, str] | None] = [None] * len(files)
    groups: list[tuple[list[str], list[str] | None]] = []
    scanned: list[tuple[int, int]] = []  # (index in files, number of lines) per group
    for number, data in enumerate(files):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            verdicts[number] = data.count(b"\n", 0, exc.start) + 1, NOT_UTF8
            continue
        lines = text.split("\n")
        values = _frontmatter_values(text) if text.startswith("---") else []
        groups.append(([*lines, *values], [*lines, *[""] * len(values)] if values else None))
        scanned.append((number, len(lines)))
    for (number, count), found in zip(scanned, scan_groups(groups), strict=True):
        if allowed and found:
            raw = files[number].split(b"\n")
            found = {i: names for i, names in found.items() if i >= count or line_hash(raw[i]) not in allowed}
        if found:
            first = min(found)
            verdicts[number] = (first + 1 if first < count else 1), _first(found[first])
    return verdicts


def scan_name(rel: str) -> str | None:
    """The detector that flags a file or directory name on the store path ``rel`` (each name scanned as
    read: normalised and decoded), with :data:`IN_NAME` appended; None for a path whose names may
    enter a store and its commit messages. Each name is scanned once per process (``name_detectors``):
    the directories of thousands of files are shared."""
    found = {name for part in rel.split("/") if part for name in name_detectors(part)}
    return None if not found else _first(found) + IN_NAME


@lru_cache(maxsize=1 << 16)
def name_detectors(part: str) -> frozenset[str]:
    """What flags the one file or directory name ``part`` (and its stem when it has a suffix), one
    detector per unit (``_first``): names are independent units, with no seams between them. Cached per
    process (``name_detectors.cache_clear()`` empties it). Never raises."""
    units = [part, part.rpartition(".")[0]] if "." in part.lstrip(".") else [part]
    return frozenset(_first(names) for names in scan_units(units, [""] * len(units)).values())

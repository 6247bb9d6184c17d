"""The item model of a ``MEMORY.md`` index (skill spec "Write" step 4; DESIGN "Merge drivers", index).

An index is a sequence of blocks. An *item* is a bullet line plus its continuation lines (indented,
non-blank lines right after it, nested bullets included), keyed by :func:`item_key`. Every other line
(titles, headings, blockquote preambles, blank lines, fenced code) is a block of its own with key
``None``. ``render(parse_index(text)) == text`` for every text, so a writer can edit one item and leave
every other byte alone.
"""

from __future__ import annotations

import re

# A list marker at the start of a line: "-", "*", "+" or "1." / "1)", then a blank or the line end.
_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|\r?\n|\Z)")
_FENCE = re.compile(r"(?:```|~~~)")
# The target of an inline markdown link to a .md file: "](slug.md)", "](./a/b.md#part)", "](<x.md> "t")".
_MD_LINK = re.compile(r"\]\(\s*<?([^()\s<>]+?\.md)(#[^()\s<>]*)?>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_LEADING_MARKER = re.compile(r"\A[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]*")
_WHITESPACE = re.compile(r"\s+")
# Lines split at "\n" only: str.splitlines would also split at a bare CR, U+2028 and other separators.
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


class IndexBlock:
    """One block of an index: an item (``key`` from :func:`item_key`) or one non-item line (``key`` None).

    ``text`` holds the block's lines with their line ends, exactly as in the file. Compared and hashed
    by value. A plain class, not a dataclass: the index merge driver, which git starts once per merged
    file, imports this module, and dataclasses' import costs about a third of a bare interpreter start.
    """

    __slots__ = ("key", "text")

    def __init__(self, key: str | None, text: str) -> None:
        self.key, self.text = key, text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexBlock) and (self.key, self.text) == (other.key, other.text)

    def __hash__(self) -> int:
        return hash((self.key, self.text))

    def __repr__(self) -> str:
        return f"IndexBlock(key={self.key!r}, text={self.text!r})"


def item_key(item_text: str) -> str:
    """The identity of an index item: its first ``.md`` link target, else its normalised text.

    ``item_text`` is an item's bullet line plus continuation lines. A link target is returned as written,
    without a leading ``./`` and without a ``#fragment`` (``"[X](./x.md#a)"`` -> ``"x.md"``), so a writer
    finds the item of ``<slug>.md`` by comparing with ``f"{slug}.md"``. Without such a link the key is the
    text without its list marker, whitespace runs (line ends included) collapsed to one space, stripped.
    """
    target = link_target(item_text)
    if target is not None:
        return target
    return _WHITESPACE.sub(" ", _LEADING_MARKER.sub("", item_text, count=1)).strip()


def link_target(item_text: str) -> str | None:
    """The item's first ``.md`` link target as :func:`item_key` gives it (no ``./``, no ``#fragment``),
    None when the item links no ``.md`` file."""
    match = _MD_LINK.search(item_text)
    if match is None:
        return None
    target = match.group(1)
    while target.startswith("./"):
        target = target[2:]
    return target


def links_part(item_text: str) -> bool:
    """Whether the item's first ``.md`` link names a part of its file (``deploy.md#staging``): such an
    item is one of several a file may have, not the file's own index line."""
    match = _MD_LINK.search(item_text)
    return match is not None and match.group(2) is not None


def parse_index(text: str) -> list[IndexBlock]:
    """Split the text of a ``MEMORY.md`` into blocks; ``render`` of the result gives ``text`` back.

    An item starts at a bullet line; indented non-blank lines right after it are its continuation lines
    (an indented bullet there is a sub-item and stays in its parent). A blank line ends an item. Lines
    inside a fenced code block that starts at column 0 are never items. Line ends are kept as they are
    (LF, CRLF, none on the last line).
    """
    blocks: list[IndexBlock] = []
    item_lines: list[str] = []
    in_fence = False

    def flush_item() -> None:
        if item_lines:
            item_text = "".join(item_lines)
            blocks.append(IndexBlock(item_key(item_text), item_text))
            item_lines.clear()

    for match in _LINE.finditer(text):
        line = match.group()
        if in_fence or _FENCE.match(line):
            flush_item()
            if _FENCE.match(line):
                in_fence = not in_fence
            blocks.append(IndexBlock(None, line))
            continue
        if item_lines and line[:1] in (" ", "\t") and line.strip():
            item_lines.append(line)
        elif _BULLET.match(line):
            flush_item()
            item_lines.append(line)
        else:
            flush_item()
            blocks.append(IndexBlock(None, line))
    flush_item()
    return blocks


def render(blocks: list[IndexBlock]) -> str:
    """The text of ``blocks``: their texts concatenated (the inverse of :func:`parse_index`)."""
    return "".join(block.text for block in blocks)

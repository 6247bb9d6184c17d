"""The items of a ``MEMORY.md`` as the skill writes them (seeds/002 "Write" step 4): ``- [name](slug.md) —
description``, read into :class:`IndexItem`, put in place of the item naming the same file, relinked on
a rename.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memsync.formats.markdown.index import IndexBlock, item_key, links_part

# A markdown link to a .md file; the link text may hold backslash-escaped brackets. It holds no bare "[":
# each "[" then starts at most one scan to the next bracket, so a line of brackets costs linear time.
_MD_LINK = re.compile(r"\[((?:\\.|[^\[\]\\])*)\]\(<?([^()\s<>]+?\.md)>?(#[^)\s]*)?\)")
_DESCRIPTION_SEP = re.compile(r"^[\s\u2014\u2013:-]+")  # em dash, en dash, colon, hyphen


@dataclass(frozen=True)
class IndexItem:
    """One item of ``MEMORY.md``: a bullet and its continuation lines starting at 1-based ``line``.

    ``target`` is the first ``.md`` link's target, ``name`` its link text, ``description`` the text after
    the link with whitespace collapsed; all ``None`` for an item without a ``.md`` link.
    """

    line: int
    key: str
    text: str
    name: str | None
    target: str | None
    description: str | None


def link_text(name: str) -> str:
    return name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def index_item(line: int, key: str, text: str) -> IndexItem:
    match = _MD_LINK.search(text)
    if match is None:
        return IndexItem(line, key, text, None, None, None)
    name = re.sub(r"\\(.)", r"\1", match.group(1))
    description = " ".join(_DESCRIPTION_SEP.sub("", text[match.end() :]).split())
    return IndexItem(line, key, text, name, match.group(2), description or None)


def put_index_item(blocks: list[IndexBlock], item: str, keys: set[str]) -> list[IndexBlock]:
    """Replace the first item whose key is in ``keys`` by ``item`` and drop the other such items; else
    append it. Items linking a part of such a file (``#fragment``) are items of their own and stay."""
    result: list[IndexBlock] = []
    placed = False
    for block in blocks:
        if block.key is not None and block.key in keys and not links_part(block.text):
            if not placed:
                result.append(IndexBlock(key=item_key(item), text=item))
                placed = True
            continue
        result.append(block)
    if not placed:
        if result and not result[-1].text.endswith("\n"):
            result[-1] = IndexBlock(result[-1].key, result[-1].text + "\n")
        result.append(IndexBlock(key=item_key(item), text=item))
    return result


def relink_item(item: str, new_name: str, slug: str) -> str:
    """An index item with its first ``.md`` link pointing at ``<slug>.md`` under ``new_name``; a link to a
    part of the file (``#fragment``) keeps its own text and part."""
    match = _MD_LINK.search(item)
    if match is None:
        return item
    if match.group(3) is not None:
        link = f"[{match.group(1)}]({slug}.md{match.group(3)})"
    else:
        link = f"[{link_text(new_name)}]({slug}.md)"
    return item[: match.start()] + link + item[match.end() :]

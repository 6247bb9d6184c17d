"""The ``MEMORY.md`` index merge driver (DESIGN "Merge drivers", index): three-way by item and lossless.
An item is identified by its whole text (two lines linking one file are two items, never one); a side's
new text for a file whose old item that side dropped is that item's new version, so it keeps its place.
"""

from __future__ import annotations

from memsync.formats.markdown.index import IndexBlock, parse_index, render
from memsync.merge.keyed import Block, merge_keyed
from memsync.merge.text import decode, normalise_text, one_sided

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Iterable


def _occurrences(blocks: list[IndexBlock]) -> list[str | None]:
    """Each item's identity by text: ``"<n>\\0<text>"`` for the n-th copy of that text; None for a line
    that is not an item."""
    seen: dict[str, int] = {}
    ids: list[str | None] = []
    for block in blocks:
        if block.key is None:
            ids.append(None)
            continue
        count = seen[block.text] = seen.get(block.text, 0) + 1
        ids.append(f"{count}\0{block.text}")
    return ids


def _identified(base: list[IndexBlock], side: list[IndexBlock]) -> list[Block]:
    """``side``'s blocks as ``(identity, text)``: an item the base holds (by text) has the base item's
    identity; a new text whose item key (``.md`` link target) names a base item this side dropped takes
    that item's identity, first come first paired (it is its edit); any other new text is its own."""
    base_ids = _occurrences(base)
    side_ids = _occurrences(side)
    held = set(side_ids)
    dropped: dict[str, list[str]] = {}
    for block, identity in zip(base, base_ids, strict=True):
        if identity is not None and identity not in held and block.key is not None:
            dropped.setdefault(block.key, []).append(identity)
    known = set(base_ids)
    blocks: list[Block] = []
    for block, identity in zip(side, side_ids, strict=True):
        if (
            identity is not None
            and identity not in known
            and block.key is not None
            and dropped.get(block.key)
        ):
            identity = dropped[block.key].pop(0)
        blocks.append((identity, block.text))
    return blocks


def _both(versions: Iterable[str]) -> str:
    """Two sides' different versions of one item: both kept, the smaller first."""
    return "".join(sorted(versions))


def merge_index(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a ``MEMORY.md`` index item by item (bytes in, bytes out).

    Items (see :mod:`.formats.markdown.index`) are matched by their whole text, so no item either side
    holds is lost: additions from both sides are kept (an item both added comes once), a deletion is
    honoured when the other side kept the item as it was, an item changed on one side is that side's
    version at its place, a deletion loses to a change. An item changed on both sides differently, and
    items written for one file (``deploy.md#staging`` and ``deploy.md#rollback``, or one new slug with two
    descriptions), are all kept, the smaller first: an agent or a person settles them like any edit.
    Lines that are not items (title, headings, preambles, blank lines) keep their place by a symmetric
    diff3; where both sides inserted at one place, both insertions are kept, the smaller first. Line ends
    become LF, a BOM is dropped, the output ends with a newline. Symmetric; never raises. Implements DESIGN
    "Merge drivers" (index).
    """
    trivial = one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    base_blocks, ours_blocks, theirs_blocks = (
        parse_index(decode(normalise_text(data))) for data in (base, ours, theirs)
    )
    merged = merge_keyed(
        _identified(base_blocks, base_blocks),
        _identified(base_blocks, ours_blocks),
        _identified(base_blocks, theirs_blocks),
        pick=_both,
    )
    text = render([IndexBlock(key, text) for key, text in merged])
    return text.encode("utf-8", "surrogateescape")

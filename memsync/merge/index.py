"""The ``MEMORY.md`` index merge driver (DESIGN "Merge drivers", index): three-way by item, keyed by its
first ``.md`` link target, else its normalised text.
"""

from __future__ import annotations

from memsync.formats.markdown.index import IndexBlock, parse_index, render
from memsync.merge.keyed import merge_keyed
from memsync.merge.text import decode, normalise_text, one_sided


def merge_index(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Merge two versions of a ``MEMORY.md`` index item by item (bytes in, bytes out).

    Items (see :mod:`.formats.markdown.index`) are matched by key: additions from both sides are kept, a
    deletion on one side is honoured when the other left the item unchanged (a deletion never beats a
    change), and an item changed on both sides differently keeps the longer text in UTF-8 bytes (ties:
    the greater text) — the same rule picks one line when both sides add the same new slug with different
    descriptions. Several items with one key collapse into one, at the first place. Lines that are
    not items (title, headings, preambles, blank lines) keep their place by a symmetric diff3; where both
    sides inserted at one place, both insertions are kept, the smaller first. Line ends become LF, a BOM
    is dropped, the output ends with a newline. Never raises. Implements DESIGN "Merge drivers" (index).
    """
    trivial = one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    versions = [parse_index(decode(normalise_text(data))) for data in (base, ours, theirs)]
    blocks = [[(block.key, block.text) for block in version] for version in versions]
    merged = merge_keyed(blocks[0], blocks[1], blocks[2])
    text = render([IndexBlock(key, text) for key, text in merged])
    return text.encode("utf-8", "surrogateescape")

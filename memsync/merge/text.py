"""What the markdown merge drivers share: bytes decoded losslessly, text normalised (no BOM, LF line
ends, a final newline) and git's trivial merge when at most one side changed.
"""

from __future__ import annotations

from codecs import BOM_UTF8 as _BOM


def decode(data: bytes) -> str:
    """``data`` as text, every byte kept (invalid UTF-8 as surrogate escapes, encoded back alike)."""
    return data.decode("utf-8", "surrogateescape")


def normalise_text(data: bytes) -> bytes:
    """A markdown file's bytes with a leading UTF-8 BOM dropped, CRLF turned into LF and a final newline."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    data = data.replace(b"\r\n", b"\n")
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def one_sided(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The result when at most one side changed (git's own trivial merge), else None."""
    if ours == theirs or base == theirs:
        return ours
    if base == ours:
        return theirs
    return None

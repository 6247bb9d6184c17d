"""The one frontmatter parser: a markdown file split into its ``---`` fenced YAML block and its body,
losslessly, and that YAML's top-level key lines, each with the lines that belong to it.

The reader (:mod:`.fields`), the entry merge driver and the secret scanner all read frontmatter here,
so they agree on what a key line is. A key line is YAML's: at column 0, not a comment (``#``) or a list
item (``-``), the key is the text before the line's first ``:``, which a blank or the line end (LF or
CRLF) follows. Indented lines and ``- `` list lines right after a key line belong to its block. No YAML
is loaded here: the merge driver imports this module and must start fast.
"""

from __future__ import annotations

import re

_FRONTMATTER = re.compile(r"\A(---[ \t]*\r?\n(?:.*?\r?\n)??---[ \t]*(?:\r?\n|\Z))", re.DOTALL)
# The key of a key line: the text before its first colon (no nested quantifiers: linear on any line).
_KEY = re.compile(r"[^\s#\-][^:]*:")
# Lines split at "\n" only: str.splitlines would also split at a bare CR, U+2028 and other separators.
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")

KeyBlock = tuple[str | None, str]
"""A top-level key (``None`` for a line that is not one, with what belongs to it) and its lines."""


def split_frontmatter(text: str) -> tuple[str, str]:
    """Return ``(head, body)`` with ``head + body == text``.

    ``head`` is the frontmatter block including both ``---`` fence lines (and the closing fence's line
    end), or ``""`` when the text does not start with a fence that is closed later.
    """
    match = _FRONTMATTER.match(text)
    if match is None:
        return "", text
    return match.group(1), text[match.end() :]


def frontmatter_yaml(head: str) -> str:
    """The YAML between the fences of a ``head`` from :func:`split_frontmatter` (``""`` for no head)."""
    if not head:
        return ""
    lines = head.splitlines(keepends=True)
    return "".join(lines[1:-1])


def line_key(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a top-level key line (see the module's rule; ``line`` with or without its line
    end), the value being the rest of the line without surrounding blanks; ``None`` for any other line."""
    content = line.removesuffix("\n").rstrip("\r")
    match = _KEY.match(content)
    if match is None or content[match.end() : match.end() + 1] not in ("", " ", "\t"):
        return None
    return match.group()[:-1].rstrip(" \t"), content[match.end() :].strip(" \t")


def key_blocks(yaml: str) -> list[KeyBlock]:
    """The lines of a frontmatter's ``yaml`` (from :func:`frontmatter_yaml`) as blocks, in order, their
    texts concatenated giving ``yaml`` back: a key line plus the indented and ``- `` lines right after it
    (keyed by :func:`line_key`), and each other line alone (key ``None``)."""
    blocks: list[KeyBlock] = []
    for line in _LINE.findall(yaml):
        attached = line[:1] in (" ", "\t") or line.startswith("- ")
        if blocks and blocks[-1][0] is not None and attached:
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + line)
        else:
            key = line_key(line)
            blocks.append((key[0] if key is not None and not attached else None, line))
    return blocks

"""Split a markdown file into its YAML frontmatter block and its body, losslessly."""

from __future__ import annotations

import re

_FRONTMATTER = re.compile(r"\A(---[ \t]*\r?\n(?:.*?\r?\n)??---[ \t]*(?:\r?\n|\Z))", re.DOTALL)


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

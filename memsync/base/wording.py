"""Counts in messages: ``1 line``, ``2 lines``, never ``1 lines`` or ``line(s)``."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` with ``noun`` (``nouns`` for any count but 1; default: ``noun`` + "s"): ``plural(1,
    "line")`` -> ``1 line``, ``plural(3, "entry", "entries")`` -> ``3 entries``."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"

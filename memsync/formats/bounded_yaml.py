"""The one bounded YAML load for frontmatter, peer content like any other (DESIGN "Hostile input": every
reader of peer content is bounded).

``yaml.safe_load`` builds aliases as shared references: a few lines of ``&a``/``*a`` make a structure
that every walk over it (the secret scan, handoff's tags, a JSON dump) expands to billions of nodes, and
deep flow nesting (``[[[[...``) recurses through PyYAML's composer. Frontmatter holds plain keys and
values, so this load refuses aliases, nesting deeper than ``MAX_DEPTH``, text longer than ``MAX_CHARS``
and strings no UTF-8 writer can write back (a lone surrogate escape); the caller reports such a block
like invalid YAML and reads its keys line by line.
"""

from __future__ import annotations

from typing import Any

import yaml

from memsync.formats.bounded_json import has_lone_surrogate

MAX_CHARS = 64 * 1024
MAX_DEPTH = 16

FAILURES = (yaml.YAMLError, ValueError, OverflowError, RecursionError)
"""What a bounded load can raise: YAML errors (``OutOfBounds`` included) and what constructing odd
scalars raises (a date such as 2026-13-45, an overlong number)."""


class OutOfBounds(yaml.YAMLError):
    """YAML a bounded load refuses; ``problem`` says why (``str(exc)`` too)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and counts nesting while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise OutOfBounds("an alias (*name): frontmatter holds plain values")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise OutOfBounds(f"nested more than {MAX_DEPTH} deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str) -> Any:
    """``text`` (one YAML document) loaded like ``yaml.safe_load``, within the bounds above.

    Raises one of ``FAILURES``: ``OutOfBounds`` for an alias, deep nesting, a text over ``MAX_CHARS``
    characters or a lone surrogate escape in a string, another ``yaml.YAMLError`` for invalid YAML.
    """
    if len(text) > MAX_CHARS:
        raise OutOfBounds(f"{len(text)} characters, more than {MAX_CHARS}")
    loader = _BoundedLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if has_lone_surrogate(data):
        raise OutOfBounds("a lone surrogate escape such as \\ud800 is not a character")
    return data

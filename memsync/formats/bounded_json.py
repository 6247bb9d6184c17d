"""The one bounded JSON decode every reader of peer content uses for a memory-file line (DESIGN "Hostile
input": every reader of peer content is bounded; a line it cannot read is malformed, reported, kept,
never fatal).

A line is read as a JSON object only within bounds: at most ``MAX_LINE_BYTES`` bytes, nesting at most
``MAX_DEPTH`` deep, number literals of at most ``MAX_NUMBER_CHARS`` characters and finite, no
``NaN``/``Infinity``, no lone surrogate escape (``"\\ud800"``, which no UTF-8 writer can write back),
no key given twice in one object (readers disagree on which one wins). Anything else is a reason string,
never an exception, so views, ``check``, the jsonl merge driver, publish's counts, ``log``, handoff and
compaction all treat such a line the same way.
"""

from __future__ import annotations

import json
import math
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from typing import Any

MAX_LINE_BYTES = 1 << 20  # one entry is a sentence: a megabyte line is not one a reader must understand
MAX_DEPTH = 32  # an entry is two levels deep (tags); deep nesting only costs readers stack
MAX_NUMBER_CHARS = 64

# A JSON string literal (its escapes unread), also how the secret scanner finds the strings of a line.
STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(r"[^\[\]{}]+")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _OutOfBounds(ValueError):
    """A value a bounded reader refuses; its message is the reason reported for the line."""


def _reject_constant(name: str) -> Any:
    raise _OutOfBounds(f"{name} is not valid JSON")


def _number(literal: str, convert: type[int] | type[float]) -> Any:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _OutOfBounds(f"a number of {len(literal)} characters (at most {MAX_NUMBER_CHARS})")
    value = convert(literal)
    if not math.isfinite(value):
        raise _OutOfBounds(f"the number {literal} is out of range")
    return value


def _parse_int(literal: str) -> Any:
    return _number(literal, int)


def _parse_float(literal: str) -> Any:
    return _number(literal, float)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _OutOfBounds(f"the key {key[:40]!r} appears twice")
            seen.add(key)
    return obj


def _depth(text: str) -> int:
    """How deep arrays and objects nest in ``text``, counting at most to MAX_DEPTH + 1."""
    depth = deepest = 0
    for bracket in _BRACKETS.sub("", STRING_LITERAL.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                break
    return deepest


def has_lone_surrogate(value: Any) -> bool:
    """True when a string anywhere in ``value`` (nested dicts, lists, sets and tuples; keys too) holds a
    lone surrogate, which no UTF-8 writer can write back (a JSON ``"\\ud800"``, a YAML ``"\\ud800"``)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | set | tuple | frozenset):
            pending.extend(item)
    return False


def decode_object(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON object held by one line ``raw`` (without its line end) read within the bounds above, or
    ``(None, reason)`` with a short reason ("not valid UTF-8 (byte 7)", "nested more than 32 deep", ...).

    Never raises, whatever the bytes; linear in the line's length.
    """
    if len(raw) > MAX_LINE_BYTES:
        return None, f"a line of {len(raw)} bytes, longer than readers accept ({MAX_LINE_BYTES})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start + 1})"
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        return None, f"nested more than {MAX_DEPTH} deep"
    try:
        obj = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
            object_pairs_hook=_unique_keys,
        )
    except _OutOfBounds as exc:
        return None, f"not readable JSON ({exc})"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a {type(obj).__name__})"
    if _SURROGATE_ESCAPE.search(text) and has_lone_surrogate(obj):
        return None, "not readable JSON (a lone surrogate escape such as \\ud800 is not a character)"
    return obj, ""

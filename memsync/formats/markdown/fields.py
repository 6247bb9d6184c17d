"""What a curated entry's frontmatter says (seeds/002 "Write": ``name``, ``description``, ``type``, each on
one line): the YAML loaded within bounds (:mod:`memsync.formats.bounded_yaml`), the skill's fields read
verbatim where YAML would misread them, keys read line by line (:mod:`.frontmatter`) when the YAML is
invalid; and the frontmatter the skill's Write op writes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from memsync.formats import bounded_yaml
from memsync.formats.markdown.frontmatter import frontmatter_yaml, key_blocks, line_key
from memsync.formats.markdown.skill import CURATED_TYPES

# First characters that make a YAML scalar something other than plain text.
_NOT_PLAIN = "\"'|>[{&*!%@`#"
_YAML_FAILURES = bounded_yaml.FAILURES


@dataclass(frozen=True)
class Frontmatter:
    """What a curated entry's frontmatter says.

    ``fields`` is the YAML mapping as loaded (``{}`` when absent or invalid), unknown keys included.
    ``type_source`` names where ``type`` was found: ``type``, ``metadata.type`` or ``metadata.node_type``.
    ``problems`` are ``(line in the file, message)`` pairs.
    """

    fields: Mapping[str, Any]
    name: str | None
    description: str | None
    type: str | None
    type_source: str | None
    problems: tuple[tuple[int, str], ...]


def parse_frontmatter(head: str) -> Frontmatter:
    """Understand a frontmatter block ``head`` (from ``split_frontmatter``; ``""`` for none).

    Uses ``yaml.safe_load`` within bounds (:mod:`bounded_yaml`: no aliases, limited depth and size); a
    plain one-line ``name`` or ``description`` is taken verbatim, so a `` #`` in a description is text,
    not a YAML comment, and "2026-08-10" stays text. ``type`` nested under
    ``metadata:`` (Claude Code) is understood; so is ``metadata.node_type`` when it is one of the four
    types. Invalid YAML is reported with its line and the keys are read line by line instead. Never raises.
    """
    if not head:
        return Frontmatter({}, None, None, None, None, ())
    text = frontmatter_yaml(head)
    top, nested = _scan_keys(text)
    problems: list[tuple[int, str]] = []
    loaded: Any
    try:
        loaded = bounded_yaml.load(text) if text.strip() else {}
    except _YAML_FAILURES as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        reason = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        problems.append((line, f"frontmatter is not valid YAML ({reason}); its keys were read line by line"))
        loaded = None
    if loaded is not None and not isinstance(loaded, dict):
        problems.append((2, "frontmatter is not a YAML mapping of keys to values"))
        loaded = None
    fields: dict[str, Any] = loaded if loaded is not None else {}
    # name and description are free text; type is a word, so YAML's reading (comments dropped) wins there.
    values = {
        key: _field_value(key, fields, top, problems, verbatim=key != "type")
        for key in ("name", "description", "type")
    }
    kind, source = values["type"], "type" if values["type"] is not None else None
    if kind is None:
        metadata = fields.get("metadata") if loaded is not None else nested
        if isinstance(metadata, Mapping):
            if metadata.get("type") is not None:
                kind, source = str(metadata["type"]), "metadata.type"
            elif str(metadata.get("node_type")) in CURATED_TYPES:
                kind, source = str(metadata["node_type"]), "metadata.node_type"
    return Frontmatter(fields, values["name"], values["description"], kind, source, tuple(problems))


def _scan_keys(text: str) -> tuple[dict[str, tuple[str, bool]], dict[str, str]]:
    """Top-level keys -> (raw value, value continues on the next line), and the keys under ``metadata:``
    (the first of each), read by the rules of :mod:`.frontmatter`."""
    top: dict[str, tuple[str, bool]] = {}
    nested: dict[str, str] = {}
    for key, block in key_blocks(text):
        if key is None:
            continue
        first, *rest = block.split("\n")
        following = rest[0].rstrip("\r") if rest else ""
        continues = following[:1] in (" ", "\t") and bool(following.strip())
        _, value = line_key(first) or (key, "")
        top.setdefault(key, (value, continues))
        if key == "metadata":
            for line in rest:
                inner = line_key(line.lstrip(" \t")) if line[:1] in (" ", "\t") else None
                if inner is not None:
                    nested.setdefault(inner[0], _unquote(inner[1]))
    return top, nested


def _field_value(
    key: str,
    fields: Mapping[str, Any],
    top: Mapping[str, tuple[str, bool]],
    problems: list[tuple[int, str]],
    verbatim: bool,
) -> str | None:
    raw, continues = top.get(key, ("", False))
    # YAML would end a plain value at " #" and turn "yes" or a date into other types; the skill means text.
    if raw and raw[0] not in _NOT_PLAIN and not continues and (verbatim or key not in fields):
        return raw
    if key in fields:
        value = fields[key]
        if value is None:
            return None
        if isinstance(value, str | int | float | date):
            return str(value)
        problems.append((1, f"frontmatter {key} is not text"))
        return None
    return _unquote(raw) or None


def _unquote(raw: str) -> str:
    """A quoted YAML scalar's value when it parses as one string, else ``raw`` unchanged."""
    if raw[:1] in ("'", '"'):
        try:
            value = bounded_yaml.load(raw)
        except _YAML_FAILURES:
            return raw
        if isinstance(value, str):
            return value
    return raw


def entry_head(name: str, description: str, type: str) -> str:
    """The frontmatter of a curated entry as the skill's Write op fixes it: exactly name, description and
    type, each on one line (quoted where YAML needs it), the closing fence and one blank line."""
    return f"---\nname: {yaml_scalar(name)}\ndescription: {yaml_scalar(description)}\ntype: {type}\n---\n\n"


def yaml_scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when it reads back the same, else double-quoted.

    In the quoted form every character YAML would refuse or fold (controls, line separators) is escaped.
    """
    fields: dict[str, Any] = {}
    with contextlib.suppress(*_YAML_FAILURES):
        fields = bounded_yaml.load(f"k: {value}") or {}
    if value.isprintable() and value[:1] not in _NOT_PLAIN and fields.get("k") == value and " #" not in value:
        return value
    escaped = "".join("\\" + c if c in '"\\' else c if c.isprintable() else f"\\U{ord(c):08x}" for c in value)
    return f'"{escaped}"'


def with_name(head: str, name: str) -> str:
    """A frontmatter ``head`` with its top-level ``name:`` line set to ``name`` (added first when absent)."""
    lines = head.splitlines(keepends=True)
    for number, line in enumerate(lines[1:-1], start=1):
        key = line_key(line.rstrip("\r\n"))
        if key is not None and key[0] == "name":
            end = line[len(line.rstrip("\r\n")) :]
            lines[number] = f"name: {yaml_scalar(name)}{end}"
            return "".join(lines)
    return lines[0] + f"name: {yaml_scalar(name)}\n" + "".join(lines[1:])

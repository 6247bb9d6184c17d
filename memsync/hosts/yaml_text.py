"""Add, replace or remove one server entry in a YAML config file as text, keeping every other byte
(comments, anchors, quoting, order) as it was (Goose's ``extensions`` mapping, Continue's
``mcpServers`` list). PyYAML would drop comments on a round trip, so memsync writes only its own lines.

The entry sits under the top-level block ``KEY:``: as ``NAME:`` in a mapping, or as the list item
``- name: NAME`` in a list. A new entry goes first in that block, with the block's indentation; a new
``KEY:`` block goes at the end of the file. Removing takes out exactly those lines (and a ``KEY:`` line
left with nothing under it). Each edit is checked by reading the result: it must mean the old file
with only the entry changed, else it is refused, naming the block to add by hand.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from memsync.errors import MemsyncError


def parse(data: bytes, path: Path) -> dict[str, Any]:
    """The top-level mapping of the YAML bytes ``data`` ({} for an empty file); MemsyncError else."""
    try:
        value = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MemsyncError(f"cannot read {path}: not valid YAML ({why}). Fix the file, then retry") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MemsyncError(f"cannot read {path}: it is not a YAML mapping. Fix the file, then retry")
    return value


def _item(name: str, entry: dict[str, Any], listed: bool) -> str:
    value: Any = [{"name": name, **entry}] if listed else {name: entry}
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1 << 16)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def with_entry(
    text: str, key: str, name: str, entry: dict[str, Any] | None, listed: bool, keep: bool = False
) -> str | None:
    """``text`` with memsync's entry set to ``entry`` or, for None, removed (see the module doc;
    ``keep``: a ``KEY:`` line left with nothing under it stays); the other lines unchanged. None when
    ``key`` is written in a way memsync does not edit as text (its value on the ``key:`` line, or the
    key quoted). Pure: :func:`update` checks the result."""
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"^{re.escape(key)}:[ \t]*(#.*)?\r?\n?$")
    other = re.compile(rf"^(?:{re.escape(key)}|[\"']{re.escape(key)}[\"'])[ \t]*:")
    top = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if any(other.match(line) for i, line in enumerate(lines) if i != top):
        return None
    if top is None:
        if entry is None:
            return text
        gap = "\n" if text and not text.endswith("\n") else ""
        return text + gap + f"{key}:\n" + _shift(_item(name, entry, listed), "  ")
    end = next(
        (
            i
            for i in range(top + 1, len(lines))
            if _content(lines[i]) and _indent(lines[i]) == 0 and not (listed and lines[i].startswith("-"))
        ),
        len(lines),
    )
    body = [i for i in range(top + 1, end) if _content(lines[i])]
    indent = " " * _indent(lines[body[0]]) if body else "  "
    mine = f"{indent}- name: {name}" if listed else f"{indent}{name}:"
    start = next((i for i in body if lines[i].rstrip("\r\n").rstrip() == mine), None)
    if start is None:
        if entry is None:
            return text
        return "".join([*lines[: top + 1], _shift(_item(name, entry, listed), indent), *lines[top + 1 :]])
    stop = next(
        (
            i
            for i in body
            if i > start
            and (
                _indent(lines[i]) < len(indent)
                or (_indent(lines[i]) == len(indent) and (not listed or lines[i].lstrip().startswith("-")))
            )
        ),
        end,
    )
    while stop > start + 1 and not _content(lines[stop - 1]):
        stop -= 1  # blank and comment lines lead into what follows
    new = [] if entry is None else [_shift(_item(name, entry, listed), indent)]
    out = [*lines[:start], *new, *lines[stop:]]
    if entry is None and not keep and not any(_content(line) for line in out[top + 1 : end - (stop - start)]):
        del out[top : end - (stop - start)]  # the KEY: block memsync added
    return "".join(out)


def _shift(block: str, indent: str) -> str:
    return "".join(indent + line for line in block.splitlines(keepends=True))


def expected(
    before: dict[str, Any],
    key: str,
    name: str,
    entry: dict[str, Any] | None,
    listed: bool,
    keep: bool = False,
) -> dict[str, Any]:
    """What a file holding ``before`` must hold after :func:`with_entry` (with ``keep``, an emptied
    ``KEY:`` line holds null)."""
    after = copy.deepcopy(before)
    if listed:
        items = [i for i in after.get(key) or [] if not (isinstance(i, dict) and i.get("name") == name)]
        old = after.get(key) or []
        at = next((n for n, i in enumerate(old) if isinstance(i, dict) and i.get("name") == name), 0)
        if entry is not None:
            items.insert(at, {"name": name, **entry})
        after[key] = items
    else:
        servers = dict(after.get(key) or {})
        servers.pop(name, None)
        after[key] = servers if entry is None else {**servers, name: entry}
    if not after[key]:
        if keep:
            after[key] = None
        else:
            del after[key]
    return after


def update(
    path: Path, key: str, name: str, entry: dict[str, Any] | None, listed: bool, keep: bool = False
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``update`` of ``settings_file.edit_file`` that sets or removes the entry as text (``keep``:
    as in :func:`with_entry`) and checks the result (see the module doc). Raises MemsyncError, naming
    the block to add by hand, when the edit would change anything else."""

    def run(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        text = "" if old is None else old.decode("utf-8")
        new = with_entry(text, key, name, entry, listed, keep)
        if new == text:
            return None
        if new is None or parse(new.encode("utf-8"), path) != expected(
            before or {}, key, name, entry, listed, keep
        ):
            block = f"{key}:\n" + _shift(_item(name, entry or {}, listed), "  ")
            raise MemsyncError(
                f"cannot edit {path} without changing more than memsync's entry. "
                f"{'Add' if entry else 'Remove'} by hand: {block!r}, then retry"
            )
        return new.encode("utf-8")

    return run

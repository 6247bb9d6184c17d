"""Edit one table of a TOML file as text, leaving every other byte as it was (Codex's ``config.toml``).

A TOML writer would re-format the whole file and drop its comments; memsync instead replaces, adds or
removes the lines of its own table (``[mcp_servers.memsync]`` and any sub-table of it) and nothing else.
Every edit is checked by parsing the result with ``tomllib``: the file must mean exactly what it meant,
with only that table changed. An edit that would not (the table also written as dotted keys or an inline
table elsewhere) is refused, and the file is left alone.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli_w

from memsync.errors import MemsyncError
from memsync.hosts.settings_file import edit_file

Value = str | Sequence[str] | Mapping[str, str]

_HEADER = re.compile(r"^[ \t]*\[\[?(?P<key>[^\[\]]+)\]\]?[ \t]*(?:#.*)?$")
_KEY_PART = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(text: str) -> tuple[str, ...] | None:
    """The parts of a dotted table key (``mcp_servers."memsync"`` -> ("mcp_servers", "memsync"))."""
    parts: list[str] = []
    pos = 0
    while pos < len(text):
        match = _KEY_PART.match(text, pos)
        if match is None or match.end() == pos:
            return None
        basic, literal, bare = match.groups()
        parts.append(basic if basic is not None else literal if literal is not None else bare)
        pos = match.end()
    return tuple(parts)


def _render_key(part: str) -> str:
    return part if _BARE_KEY.match(part) else _render_value(part)


def _render_value(value: Value) -> str:
    if isinstance(value, str):
        return tomli_w.dumps({"v": value})[len("v = ") :].rstrip("\n")
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_render_key(k)} = {_render_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return "[" + ", ".join(_render_value(item) for item in value) + "]"


def render_table(table: Sequence[str], values: Mapping[str, Value], newline: str = "\n") -> str:
    """The lines of ``[table]`` holding ``values`` (strings, lists of strings, inline string tables)."""
    lines = ["[" + ".".join(_render_key(part) for part in table) + "]"]
    lines += [f"{_render_key(key)} = {_render_value(value)}" for key, value in values.items()]
    return newline.join(lines) + newline


def _spans(lines: list[str], table: tuple[str, ...]) -> list[tuple[int, int]]:
    """[start, end) line ranges of ``table`` and its sub-tables: from a header of theirs to the next
    other header, without the blank and comment lines that end the range (they lead into what follows)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for number, line in enumerate([*lines, "[end-of-file]"]):
        header = _HEADER.match(line.rstrip("\r\n"))
        if header is None:
            continue
        key = _key(header.group("key"))
        ours = key is not None and key[: len(table)] == table and number < len(lines)
        if ours and start is None:
            start = number
        elif not ours and start is not None:
            end = number
            while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
                end -= 1
            spans.append((start, end))
            start = None
    return spans


def with_table(text: str, table: Sequence[str], values: Mapping[str, Value] | None) -> str:
    """``text`` with ``[table]`` set to ``values`` (replaced where it is, else appended after a blank
    line) or, for ``None``, removed with the blank line that separated it (so removing what was added
    gives back the same bytes). Other lines are kept byte for byte. Pure: :func:`edit_table` checks the
    result."""
    key = tuple(table)
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    spans = _spans(lines, key)
    block = [] if values is None else render_table(key, values, newline).splitlines(keepends=True)
    if block and not spans:
        return text + newline + "".join(block) if text else "".join(block)
    out = list(lines)
    for index, (start, end) in reversed(list(enumerate(spans))):
        if index == 0 and block:
            out[start:end] = block
            continue
        if start > 0 and not out[start - 1].strip():
            start -= 1  # the blank line before the table
        elif end == len(out) and start > 0:
            out[start - 1] = out[start - 1].rstrip("\r\n")  # appended to a file without a final newline
        del out[start:end]
    return "".join(out)


def parse_toml(path: Path, data: bytes) -> dict[str, Any]:
    """The TOML document ``data`` (read from ``path``, for messages). Raises MemsyncError."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemsyncError(f"cannot read {path}: not valid TOML ({exc}). Fix the file, then retry") from None
    except RecursionError:
        raise MemsyncError(f"cannot read {path}: it is nested too deeply. Fix the file, then retry") from None


def _without(data: dict[str, Any], table: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without ``table`` and without the parent tables that held nothing else."""
    if len(table) == 1:
        return {k: v for k, v in data.items() if k != table[0]}
    child = data.get(table[0])
    if not isinstance(child, dict):
        return data
    inner = _without(child, table[1:])
    rest = {k: v for k, v in data.items() if k != table[0]}
    return {**rest, table[0]: inner} if inner else rest


def _get(data: dict[str, Any], table: tuple[str, ...]) -> Any:
    for part in table:
        if not isinstance(data, dict):
            return None
        data = data.get(part)  # type: ignore[assignment]
    return data


def edit_table(path: Path, table: Sequence[str], values: Mapping[str, Value] | None) -> bool:
    """Set (``values``) or remove (``None``) ``[table]`` in the TOML file ``path`` (created with its
    directory when missing and there is something to set); returns whether the file changed.

    The rest of the file is kept byte for byte; the write is ``settings_file.edit_file``'s (backup, the
    host's concurrent rewrites, links, modes). Raises MemsyncError when the file is not UTF-8 TOML, or
    when the result would not mean the old file with only ``table`` changed (the table is also defined
    some other way): nothing is written then."""
    return edit_file(path, lambda data: parse_toml(path, data), table_update(path, table, values))


def table_update(
    path: Path, table: Sequence[str], values: Mapping[str, Value] | None
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``update`` of ``settings_file.edit_file`` that :func:`edit_table` runs (see there)."""
    key = tuple(table)

    def update(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        text = "" if old is None else old.decode("utf-8")
        new = with_table(text, key, values)
        if new == text:
            return None
        try:
            after: dict[str, Any] | None = tomllib.loads(new)
        except tomllib.TOMLDecodeError:
            after = None
        if (
            after is None
            or _get(after, key) != (None if values is None else _plain(values))
            or _without(after, key) != _without(before or {}, key)
        ):
            raise MemsyncError(
                f"cannot edit {path}: [{'.'.join(key)}] is also defined there as dotted keys or an inline "
                f"table. Remove that definition by hand, then retry"
            )
        return new.encode("utf-8")

    return update


def _plain(values: Mapping[str, Value]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, str) else dict(v) if isinstance(v, Mapping) else list(v)
        for k, v in values.items()
    }

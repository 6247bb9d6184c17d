"""Codex's own files: its home (``$CODEX_HOME``, else ``~/.codex``), its memories folder, its hooks file,
and edits of its ``config.toml`` (tomlkit: a user's comments and key order stay).

Codex keeps generated memory as markdown in ``<codex home>/memories/`` (``MEMORY.md``,
``memory_summary.md``, ``raw_memories.md``, ``rollout_summaries/``), a folder that is itself a git
repository Codex uses for its own bookkeeping. memsync tracks the folder like any role directory and
leaves its ``.git`` alone: ``layout.is_ignored`` keeps every ``.git`` out of watching, publishing and
delivering (DESIGN "Agent hosts").
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import InlineTable, Item, Table

from memsync.errors import MemsyncError

MEMORIES_STORE_PATH = "codex/memories"
# A value memsync writes into Codex's config: a string, a list of strings, a table of strings.
Value = str | Sequence[str] | Mapping[str, str]


def codex_home() -> Path:
    """Codex's home directory: ``$CODEX_HOME``, else ``~/.codex``."""
    override = os.environ.get("CODEX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".codex"


def memories_dir() -> Path:
    """Where Codex keeps its memories: ``<codex home>/memories``."""
    return codex_home() / "memories"


def hooks_file(project: Path | None = None) -> Path:
    """Codex's hooks file: the user's ``<codex home>/hooks.json``, or ``<project>/.codex/hooks.json``."""
    return (project / ".codex" if project is not None else codex_home()) / "hooks.json"


def parse_config(path: Path, data: bytes) -> dict[str, Any]:
    """The TOML document ``data`` of Codex's ``config.toml`` at ``path`` (for messages), as plain values.
    Raises MemsyncError when it is not UTF-8 TOML or is nested too deeply to read."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MemsyncError(f"cannot read {path}: not valid TOML ({exc}). Fix the file, then retry") from None
    except RecursionError:
        raise MemsyncError(f"cannot read {path}: it is nested too deeply. Fix the file, then retry") from None


def table_update(
    path: Path, table: tuple[str, str], values: Mapping[str, Value] | None, keep: bool = False
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``settings_file.edit_file`` update that sets ``[table]`` of the TOML file ``path`` to
    ``values`` (None: removes it, and its parent table when that holds nothing else, unless ``keep``).

    Edited with tomlkit, so every other byte stays (comments, order, layout): a new table is appended
    after a blank line; removing the table memsync appended gives back the bytes it was appended to. The
    result is parsed again and must mean the old file with only ``table`` changed, else MemsyncError
    (nothing is written)."""

    def update(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        text = "" if old is None else old.decode("utf-8")
        new = _edited(path, text, table, values, keep)
        if new == text:
            return None
        try:
            after: dict[str, Any] | None = tomllib.loads(new)
        except tomllib.TOMLDecodeError:
            after = None
        if (
            after is None
            or _get(after, table) != (None if values is None else _plain(values))
            or _without(after, table) != _without(before or {}, table)
        ):
            raise MemsyncError(
                f"cannot edit {path}: [{'.'.join(table)}] is defined there in a way memsync cannot rewrite. "
                f"Remove that definition by hand, then retry"
            )
        return new.encode("utf-8")

    return update


def _edited(
    path: Path, text: str, table: tuple[str, str], values: Mapping[str, Value] | None, keep: bool
) -> str:
    """``text`` with ``[table]`` set to ``values`` or (None) removed (with a parent table it leaves
    empty, unless ``keep``), as tomlkit keeps the rest."""
    parent, name = table
    try:
        doc = tomlkit.parse(text)
    except (tomlkit.exceptions.ParseError, RecursionError) as exc:
        raise MemsyncError(
            f"cannot edit {path}: tomlkit cannot read it ({exc}). Fix the file, then retry"
        ) from None
    servers = doc.get(parent)
    if not isinstance(servers, dict):
        servers = None  # no parent table, or a value under its name: the check after the edit refuses it
    current = None if servers is None else servers.get(name)
    if isinstance(servers, InlineTable) and values is not None:
        if current is not None and current.unwrap() == _plain(values):
            return text
        # Adding to `parent = { ... }` means rewriting the user's line; a [parent.name] table after it
        # would define `parent` twice.
        raise MemsyncError(
            f"cannot edit {path}: its {parent} is an inline table ({parent} = {{ ... }}), which memsync "
            f"cannot add to without rewriting it. Add inside its braces: {name} = {_item(values).as_string()}"
            ", then retry"
        )
    newline = "\r\n" if "\r\n" in text else "\n"
    if servers is None or current is None:
        if values is None:
            return text
        block = _block(table, values, newline)
        return text + newline + block if text else block
    if values is None:
        # The table memsync appended comes off with the line break it was appended after.
        appended = _block(table, current.unwrap(), newline) if isinstance(current, Table) else None
        if appended is not None and text.endswith(appended):
            rest = text[: -len(appended)]
            return rest[: -len(newline)] if rest.endswith(newline) else rest
        del servers[name]
        if not servers and not keep:
            del doc[parent]
    elif isinstance(current, Table):  # in place: the comments and blank lines inside it stay
        for key in [key for key in current if key not in values]:
            del current[key]
        for key, value in values.items():
            if current.get(key) != _plain({key: value})[key]:
                current[key] = _item(value)
    else:
        servers[name] = _table(values)
    return tomlkit.dumps(doc)


def _item(value: Any) -> Item:
    """``value`` as tomlkit writes it: a table of strings inline (``env = {K = "v"}``)."""
    if isinstance(value, Mapping):
        inline: InlineTable = tomlkit.inline_table()
        inline.update(value)
        return inline
    item: Item = tomlkit.item(value)
    return item


def _table(values: Mapping[str, Any]) -> Table:
    table = tomlkit.table()
    for key, value in values.items():
        table[key] = _item(value)
    return table


def _block(table: tuple[str, str], values: Mapping[str, Any], newline: str) -> str:
    """The lines of ``[table]`` holding ``values``, as memsync appends them."""
    doc = tomlkit.document()
    parent = tomlkit.table(is_super_table=True)
    parent[table[1]] = _table(values)
    doc[table[0]] = parent
    return tomlkit.dumps(doc).replace("\n", newline)


def _plain(values: Mapping[str, Value]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, str) else dict(v) if isinstance(v, Mapping) else list(v)
        for k, v in values.items()
    }


def _get(data: dict[str, Any], table: tuple[str, ...]) -> Any:
    for part in table:
        if not isinstance(data, dict):
            return None
        data = data.get(part)  # type: ignore[assignment]
    return data


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

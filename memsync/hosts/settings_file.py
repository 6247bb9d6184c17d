"""Edit an agent host's JSON settings file in place of the user: keep every other key, write only when
something changed, back up the previous file, replace it atomically (DESIGN "Agent hosts", I5).

Claude Code (``settings.json``, ``~/.claude.json``) and Cursor (``mcp.json``) keep their settings as one
JSON object. memsync adds and removes only its own entries; the rest of the object is written back as it
was read: key order kept, the file's indentation and final newline kept, non-ASCII text unescaped, so a
file in the layout these hosts write (``JSON.stringify(settings, null, 2)``) comes back byte for byte
once memsync's entries are removed again. JSON has no comments to lose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError
from memsync.fsio import atomic_write, writer_lock

BACKUP_SUFFIX = ".memsync-backup"
DEFAULT_INDENT = "  "
_FIRST_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when the file does not exist or is empty).

    Raises ``MemsyncError`` naming the file when it is not UTF-8 JSON or not an object: memsync never
    overwrites a settings file it cannot read.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise MemsyncError(f"cannot read {path}: {exc}. Fix or move the file, then retry") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MemsyncError(f"cannot read {path}: not valid JSON ({exc}). Fix the file, then retry") from exc
    if not isinstance(data, dict):
        raise MemsyncError(
            f"cannot read {path}: it holds a JSON {type(data).__name__}, not an object. "
            "Fix the file, then retry"
        )
    return data


def edit_json_object(path: Path, mutate: Callable[[dict[str, Any]], None]) -> bool:
    """Apply ``mutate`` to the JSON object in ``path`` (created with its parent directory when missing)
    and write the result back; returns whether the file changed.

    Nothing is written when the object is unchanged (so a repeated install is idempotent). Before a
    change, the previous bytes are saved as ``<path>.memsync-backup``. The write is atomic, keeps the
    file's permission bits and happens under memsync's writer lock for ``path``. Raises ``MemsyncError``
    for an unreadable file (see ``read_json_object``) and ``OSError`` from the file system.
    """
    with writer_lock(path):
        before = read_json_object(path)
        after = json.loads(json.dumps(before))
        mutate(after)
        if after == before and path.exists():
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_bytes() if path.exists() else None
        if old is not None:
            atomic_write(path.with_name(path.name + BACKUP_SUFFIX), old)
        atomic_write(path, render_json_object(after, old))
    return True


def render_json_object(data: dict[str, Any], like: bytes | None = None) -> bytes:
    """``data`` as JSON bytes laid out like the file bytes ``like``: its indentation (two spaces when it
    has none, or for a new file) and whether it ends in a newline (a new file does)."""
    text = "" if like is None else like.decode("utf-8", errors="replace")
    found = _FIRST_INDENT.search(text)
    indent = found.group(1) if found else DEFAULT_INDENT
    ending = "\n" if like is None or text.endswith("\n") else ""
    return (json.dumps(data, indent=indent, ensure_ascii=False) + ending).encode("utf-8")

"""Edit an agent host's JSON settings file in place of the user: keep every other key, write only when
something changed, back up the previous file, replace it atomically (DESIGN "Agent hosts", I5).

Claude Code (``settings.json``, ``~/.claude.json``) and Cursor (``mcp.json``) keep their settings as one
JSON object. memsync adds and removes only its own entries; the rest of the object is written back as it
was read (key order kept; JSON has no comments to lose).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError
from memsync.fsio import atomic_write, writer_lock

BACKUP_SUFFIX = ".memsync-backup"


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
        if path.exists():
            atomic_write(path.with_name(path.name + BACKUP_SUFFIX), path.read_bytes())
        atomic_write(path, (json.dumps(after, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return True

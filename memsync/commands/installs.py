"""The record of where memsync wrote into agent hosts' files (hooks, MCP entries), so `memsync uninstall`
visits every place an install or connect touched, even a project directory it would not discover.

A JSON list in memsync's state dir, one entry per (file, what was added): the file, its host, what was
added, whether memsync created the file, the ``--project`` directory (None: the user's settings).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.base.paths import state_dir


@dataclass(frozen=True)
class Install:
    """One place memsync wrote: ``path`` (the host's file), ``host``, ``added`` ("hooks" or "mcp"),
    ``created`` (no file was there before), ``created_dir`` (nor its directory) and ``project`` (None: the
    user's settings)."""

    path: str
    host: str
    added: str
    created: bool
    created_dir: bool
    project: str | None


def record_path() -> Path:
    """The record's file in memsync's state dir."""
    return state_dir() / "installs.json"


def recorded() -> list[Install]:
    """The recorded installs, oldest first; an unreadable or malformed record reads as none (it only
    widens what uninstall visits, which also discovers the usual places)."""
    try:
        raw = json.loads(record_path().read_bytes())
        return [Install(**entry) for entry in raw] if isinstance(raw, list) else []
    except (OSError, ValueError, TypeError):
        return []


def record(
    path: Path, host: str, added: str, *, created: bool, created_dir: bool, project: Path | None
) -> None:
    """Add the install of ``added`` for ``host`` into ``path`` to the record (atomically), once: a later
    install into the same file keeps the first entry, whose ``created`` says who made the file."""
    entries = recorded()
    if any(e.path == str(path) and e.added == added for e in entries):
        return
    where = None if project is None else str(project)
    entries.append(Install(str(path), host, added, created, created_dir, where))
    record_path().parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record_path(), json.dumps([asdict(e) for e in entries], indent=1).encode() + b"\n")


def forget() -> None:
    """Delete the record (after uninstall removed memsync from every place it names)."""
    record_path().unlink(missing_ok=True)

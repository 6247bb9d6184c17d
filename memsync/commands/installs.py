"""The record of where memsync wrote into agent hosts' files (hooks, MCP entries), so `memsync uninstall`
visits every place an install or connect touched, even a project directory it would not discover.

A JSON list in memsync's state dir, one entry per (file, what was added): the file, its host, what was
added, whether memsync created the file, the ``--project`` directory (None: the user's settings).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.base.paths import state_dir
from memsync.hosts.settings_file import BACKUP_SUFFIX


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


def drop(paths: set[Path]) -> None:
    """Remove the entries of the files ``paths`` from the record (after `disconnect` undid them)."""
    entries = [e for e in recorded() if Path(e.path) not in paths]
    if record_path().exists():
        atomic_write(record_path(), json.dumps([asdict(e) for e in entries], indent=1).encode() + b"\n")


def remove_created(entries: list[Install]) -> list[str]:
    """Delete the files of ``entries`` memsync created that hold nothing now memsync's entries are gone
    (an empty JSON object or empty TOML), with their backup, and the directories memsync created for them
    once empty (a directory holding anything, or not memsync's, stays). Returns report lines."""
    lines: list[str] = []
    for entry in entries:
        file = Path(entry.path)
        if entry.created and _empty(file):
            file.unlink()
            # the backup uninstall's edit wrote holds only memsync's entries: restoring it would revive them
            file.with_name(file.name + BACKUP_SUFFIX).unlink(missing_ok=True)
            lines.append(f"deleted {file} and its backup (memsync created it; nothing else was in it)")
        if (
            entry.created_dir
            and not file.exists()
            and file.parent.is_dir()
            and not any(file.parent.iterdir())
        ):
            file.parent.rmdir()
            lines.append(f"deleted the empty directory {file.parent} (memsync created it)")
    return lines


def _empty(file: Path) -> bool:
    """Whether ``file`` holds an empty JSON object or empty TOML (False when absent or unreadable)."""
    try:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".toml":
            return tomllib.loads(text) == {}
        return bool(json.loads(text) == {})
    except (OSError, ValueError):
        return False

"""The record of where memsync wrote into agent hosts' files (hooks, MCP entries), so `memsync uninstall`
visits every place an install or connect touched, even a project directory it would not discover, and
`disconnect` / `uninstall` can leave each file and directory as memsync found it.

A JSON list in memsync's state dir, one entry per (file, what was added): the file, its host, what was
added, whether memsync created the file, the directories it created for it, the ``--project`` directory
(None: the user's settings), and, once `connect` is done with the file (:func:`seal`), the digest of the
bytes it left there and of the backup that holds the file as it was before. A file whose bytes are still
exactly what connect left is put back byte for byte (:func:`restore`): the backup's bytes, or no file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memsync.base.fsio import atomic_write
from memsync.base.paths import state_dir
from memsync.errors import MemsyncError
from memsync.hosts import jsonc_text, yaml_text
from memsync.hosts.settings_file import backup_path, edit_file


@dataclass(frozen=True)
class Install:
    """One place memsync wrote: ``path`` (the host's file), ``host``, ``added`` ("hooks", "mcp" or
    "service"), ``created`` (no file was there before), ``dirs`` (the directories memsync created for it,
    outermost first), ``project`` (None: the user's settings), ``written`` (sha256 of the bytes connect
    left in the file) and ``backup`` (sha256 of the backup holding the file as connect found it; None: no
    such backup)."""

    path: str
    host: str
    added: str
    created: bool
    dirs: tuple[str, ...]
    project: str | None
    written: str | None = None
    backup: str | None = None


def record_path() -> Path:
    """The record's file in memsync's state dir."""
    return state_dir() / "installs.json"


def _entry(raw: dict[str, Any]) -> Install:
    """An entry as stored; one written before directories were listed names its file's directory."""
    if "created_dir" in raw:
        made = raw.pop("created_dir")
        raw["dirs"] = [str(Path(raw["path"]).parent)] if made else []
    return Install(**{**raw, "dirs": tuple(raw.get("dirs", ()))})


def recorded() -> list[Install]:
    """The recorded installs, oldest first; an unreadable or malformed record reads as none (it only
    widens what uninstall visits, which also discovers the usual places)."""
    try:
        raw = json.loads(record_path().read_bytes())
        return [_entry(entry) for entry in raw] if isinstance(raw, list) else []
    except (OSError, ValueError, TypeError, KeyError):
        return []


def _save(entries: list[Install]) -> None:
    if not entries:
        forget()
        return
    record_path().parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record_path(), json.dumps([asdict(e) for e in entries], indent=1).encode() + b"\n")


def new_dirs(path: Path) -> tuple[Path, ...]:
    """The directories above ``path`` that do not exist yet (outermost first): those an edit that creates
    ``path`` will create."""
    missing: list[Path] = []
    # A symlink's target is where an edit writes (a dotfiles manager's link may point into a folder
    # that is not there yet).
    parent = Path(os.path.realpath(path)).parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    return tuple(reversed(missing))


def record(
    path: Path, host: str, added: str, *, created: bool, dirs: tuple[Path, ...], project: Path | None
) -> None:
    """Add the install of ``added`` for ``host`` into ``path`` to the record (atomically), once: a later
    install into the same file keeps the first entry, whose ``created`` and ``dirs`` say who made the file
    and its directories."""
    entries = recorded()
    if any(e.path == str(path) and e.added == added for e in entries):
        return
    where = None if project is None else str(project)
    entries.append(Install(str(path), host, added, created, tuple(map(str, dirs)), where))
    _save(entries)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def set_aside(backup: Path) -> Path | None:
    """Rename the regular file ``backup`` (a ``*.memsync-backup``) to a name of its own beside it,
    ``<name>.<UTC time>``, so that no later edit's backup writes over it; returns the new path (None:
    there was no such file). The copy is then the user's: `uninstall` names it and leaves it."""
    if not backup.is_file() or backup.is_symlink():
        return None
    aside = backup.with_name(f"{backup.name}.{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    backup.rename(aside)
    return aside


def file_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file ``path`` (a symlink followed), None when there is none: absent, a
    directory, a FIFO (never opened: it would block), a device, a link loop. The edit that follows
    names what is wrong with such a path."""
    try:
        return path.read_bytes() if path.is_file() else None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def seal(path: Path, before: bytes | None, clean: bool, kept: bytes | None) -> None:
    """Note in the record, after `connect` edited ``path`` (whose bytes were ``before``; None: no file;
    ``clean``: they held nothing of memsync's; ``kept``: its backup's bytes then, None: none), the bytes
    it left there and, at the first connect that changed a clean file, the backup holding it as it was.
    A later connect keeps that first backup, digest and bytes (an edit saves the file as it found it
    over the backup): it is the file without memsync."""
    after = file_bytes(path)
    if after is None:
        return
    backup = file_bytes(backup_path(path))
    entries = recorded()
    for i, entry in enumerate(entries):
        if entry.path != str(path):
            continue
        first = entry.written is None
        held = entry.backup
        if first:
            held = None
            if clean and before is not None and before != after and backup == before:
                held = _digest(backup)
        elif held is not None and kept is not None and _digest(kept) == held and backup != kept:
            atomic_write(backup_path(path), kept)
            backup = kept
        entries[i] = replace(entry, written=_digest(after), backup=held)
    _save(entries)


def restore(entries: list[Install]) -> tuple[list[str], set[Path]]:
    """Put back, byte for byte, each file of ``entries`` that still holds exactly what `connect` left in
    it: the bytes of its backup (then deleted), or no file when memsync created it. Returns the report
    lines and the files restored (the others, changed since, are edited entry by entry by the caller)."""
    lines: list[str] = []
    done: set[Path] = set()
    for file, mine in _by_file(entries).items():
        now = file_bytes(file)
        if now is None or mine[0].written != _digest(now):
            continue
        backup = backup_path(file)
        if any(e.created for e in mine):
            lines.append(_delete_created(file))
        else:
            saved = _sealed_backup(file, mine)
            if saved is None:
                continue
            # At a symlink's target, into a hard-linked file's own inode, only over what connect left
            # (a host rewriting its file meanwhile keeps its version): the edit's own writer.
            if not edit_file(file, bytes, _put_back(saved, mine[0].written)):
                atomic_write(backup, saved)  # the edit saved what it found over the backup
                continue
            backup.unlink()
            lines.append(
                f"removed memsync's entries from {file}: it is back byte for byte as memsync found it"
            )
        done.add(file)
    return lines, done


def _sealed_backup(path: Path, mine: list[Install]) -> bytes | None:
    """The bytes of ``path``'s backup while it is still the one sealed in its record entries ``mine``
    (the file as memsync first found it), else None."""
    saved = file_bytes(backup_path(path))
    return saved if saved is not None and mine[0].backup == _digest(saved) else None


def _put_back(saved: bytes, left: str | None) -> Callable[[bytes | None, bytes | None], bytes | None]:
    """An ``edit_file`` update giving ``saved`` for a file whose bytes have the digest ``left``."""

    def update(old: bytes | None, _: bytes | None) -> bytes | None:
        return saved if old is not None and _digest(old) == left else None

    return update


def _by_file(entries: list[Install]) -> dict[Path, list[Install]]:
    found: dict[Path, list[Install]] = {}
    for entry in entries:
        found.setdefault(Path(entry.path), []).append(entry)
    return found


def found_before(path: Path) -> dict[str, Any]:
    """What the host file ``path`` (JSON(C), TOML, YAML) held before memsync first edited it, as the
    record knows: the backup sealed then, while it is still that backup. {} when memsync created the
    file, or when the record cannot tell."""
    mine = [e for e in recorded() if e.path == str(path)]
    if not mine or any(e.created for e in mine):
        return {}
    saved = _sealed_backup(path, mine)
    if saved is None:
        return {}
    try:
        if path.suffix == ".toml":
            return tomllib.loads(saved.decode("utf-8"))
        if path.suffix in (".yaml", ".yml"):
            return yaml_text.parse(saved, path)
        return jsonc_text.parse(saved, path)
    except (ValueError, MemsyncError):
        return {}


def remove_dirs(entries: list[Install]) -> list[str]:
    """Delete the directories memsync created for the files of ``entries`` (innermost first) that are
    empty once those files are gone; one holding anything stays, with those above it."""
    lines: list[str] = []
    for directory in sorted(
        {Path(d) for e in entries for d in e.dirs}, key=lambda p: len(p.parts), reverse=True
    ):
        if directory.is_dir() and not directory.is_symlink() and not any(directory.iterdir()):
            directory.rmdir()
            lines.append(f"deleted the empty directory {directory} (memsync created it)")
    return lines


def forget() -> None:
    """Delete the record (after uninstall removed memsync from every place it names)."""
    record_path().unlink(missing_ok=True)


def drop(entries: list[Install]) -> None:
    """Remove ``entries`` from the record (after `disconnect` undid them); the record goes when nothing
    is left in it."""
    if record_path().exists():
        gone = {(e.path, e.added) for e in entries}
        _save([e for e in recorded() if (e.path, e.added) not in gone])


def remove_created(entries: list[Install]) -> list[str]:
    """Delete the files of ``entries`` memsync created that hold nothing now memsync's entries are gone
    (only the empty scaffolding memsync wrote: an empty JSON object, an emptied servers object, an empty
    TOML or YAML document), with their backup. Returns report lines."""
    lines: list[str] = []
    for file, mine in _by_file(entries).items():
        if any(e.created for e in mine) and _empty(file):
            # the backup uninstall's edit wrote holds only memsync's entries: restoring it would revive them
            lines.append(_delete_created(file))
    return lines


def _delete_created(file: Path) -> str:
    """Delete the file memsync created at ``file`` and its backup; returns the report line. Where
    ``file`` is a symlink (a dotfiles manager's link that pointed at nothing yet), memsync created its
    target: that goes, and the link stays as the user made it."""
    if file.is_symlink():
        target = file.resolve()
        target.unlink(missing_ok=True)
        backup_path(file).unlink(missing_ok=True)
        return f"deleted {target} and its backup (memsync created it through the link {file}, which stays)"
    file.unlink()
    backup_path(file).unlink(missing_ok=True)
    return f"deleted {file} and its backup (memsync created it; nothing else was in it)"


def _empty(file: Path) -> bool:
    """Whether ``file`` holds nothing but empty objects, lists or documents (False when absent or
    unreadable)."""
    data = file_bytes(file)
    if data is None:
        return False
    try:
        if file.suffix == ".toml":
            value: Any = tomllib.loads(data.decode("utf-8"))
        elif file.suffix in (".yaml", ".yml"):
            value = yaml_text.parse(data, file)
        else:
            value = json.loads(data)
    except (ValueError, MemsyncError):
        return False
    return _scaffolding(value)


def _scaffolding(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_scaffolding(v) for v in value.values())
    return isinstance(value, list) and not value

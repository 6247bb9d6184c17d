"""Edit an agent host's settings file in place of the user without ever losing what the host wrote
(DESIGN "Agent hosts", I5).

Hosts rewrite their own files while memsync edits them: Claude Code rewrites ``~/.claude.json`` many
times a minute, in place (truncate, then write) or by rename. So an edit (:func:`edit_file`) never takes
an empty or unreadable file for empty settings: it waits a moment for the host to finish, then refuses.
Just before its new version goes in place, it checks that the file is still the version it read (inode,
size, mtime, content hash), swaps the two atomically and checks what it swapped out; on any change it
puts the host's file back and starts over. A symlink (a dotfiles manager's) is edited at its target and
stays a link (a loop is refused); a file with other hard links is written into its own inode; a device,
FIFO or directory is refused; the new file keeps the old one's mode and owner, and the backup
(``<path>.memsync-backup``) the old one's mode. File-system failures (a read-only directory, an
immutable file) are one-line ``MemsyncError`` s.

Claude Code (``settings.json``, ``~/.claude.json``) and Cursor (``mcp.json``) keep their settings as one
JSON object (:func:`edit_json_object`). memsync adds and removes only its own entries; the rest of the
object is written back as it was read: key order kept, the file's indentation and final newline kept,
non-ASCII text unescaped, number text as written (``1e400`` stays ``1e400``, never ``Infinity``), so a
file in the layout these hosts write (``JSON.stringify(settings, null, 2)``) comes back byte for byte
once memsync's entries are removed again. JSON has no comments to lose.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memsync.base.fsio import atomic_write, exchange, fsync_dir, temp_beside, writer_lock
from memsync.errors import MemsyncError

BACKUP_SUFFIX = ".memsync-backup"
DEFAULT_INDENT = "  "
# How long an edit waits for a host to finish rewriting its file before it refuses.
SETTLE_S = 1.5
_PAUSE_S = 0.02


def backup_path(path: Path) -> Path:
    """Where an edit of ``path`` keeps the file as it found it: beside it, ``BACKUP_SUFFIX`` appended."""
    return path.with_name(path.name + BACKUP_SUFFIX)


_FIRST_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)
# A number is read as this tag + its text, a string that no file holds (a fresh nonce per process), and
# written back as the text itself: JSON numbers survive byte for byte, whatever Python makes of them.
_NUMBER_TAG = f"\x00memsync-number-{secrets.token_hex(8)}:"
_TAGGED = re.compile(re.escape(json.dumps(_NUMBER_TAG)[:-1]) + r'([^"\\]*)"')
_SURROGATE = re.compile("[\ud800-\udfff]")

T = TypeVar("T")


class _Unsettled(MemsyncError):
    """The file is empty or unreadable: perhaps a host is rewriting it. Retried, then raised."""


@dataclass(frozen=True)
class _Version:
    """One version of a settings file as read: its bytes and what identifies it on disk."""

    data: bytes
    ident: tuple[int, int, int, int]  # device, inode, size, mtime (ns)
    digest: bytes
    mode: int
    uid: int
    gid: int
    links: int


def _ident(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _target(path: Path) -> Path:
    """The file behind ``path``: a symlink is followed, so its target is edited and the link stays."""
    try:
        target = path.resolve()
        st = target.stat()
    except FileNotFoundError:
        return target
    except (OSError, RuntimeError) as exc:  # a symlink loop, a directory memsync may not enter
        raise MemsyncError(f"cannot edit {path}: {exc}. Fix the path or the link, then retry") from None
    if not stat.S_ISREG(st.st_mode):
        raise MemsyncError(
            f"cannot edit {path}: {target} is not a regular file (a device, FIFO or directory). "
            "Point it at a settings file, or remove it, then retry"
        )
    return target


def _read(target: Path) -> _Version | None:
    """The current version of ``target``, None when there is none. Raises OSError."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{target} is not a regular file")
        data = handle.read()
    digest = hashlib.sha256(data).digest()
    return _Version(data, _ident(st), digest, st.st_mode & 0o777, st.st_uid, st.st_gid, st.st_nlink)


def _same(a: _Version | None, b: _Version | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and a.ident == b.ident and a.digest == b.digest
    )


def _placed(path: Path, target: Path, seen: _Version | None, data: bytes) -> bool:
    """Put ``data`` in place of ``target`` if it is still the version ``seen`` (None: no file), saving
    ``seen`` as the backup first; False (nothing changed) when the file changed meanwhile."""
    mode = seen.mode if seen is not None else 0o644
    tmp = temp_beside(target, data, mode)
    try:
        ours = os.stat(tmp).st_ino
        if seen is not None:
            if (seen.uid, seen.gid) != (os.geteuid(), os.getegid()):
                os.chown(tmp, seen.uid, seen.gid)
            atomic_write(backup_path(path), seen.data, mode=seen.mode)
        if not _same(_read(target), seen):
            return False
        if seen is not None and seen.links > 1:
            _write_in_place(target, data)
            return True
        if seen is None:
            try:
                os.link(tmp, target)  # never over a file a host created meanwhile
            except FileExistsError:
                return False
        elif exchange(tmp, target):
            if not _same(_read(tmp), seen):  # the host wrote in that instant: give its file back,
                if os.stat(target).st_ino == ours:  # unless it has already replaced ours again
                    exchange(tmp, target)
                return False
        else:
            os.replace(tmp, target)
        fsync_dir(target.parent)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def _write_in_place(target: Path, data: bytes) -> None:
    """Write ``data`` into ``target``'s own inode: a file with other hard links (a dotfiles copy) must
    stay one file with them, which a rename would split. Not atomic, but safe enough: it runs only after
    the backup is saved and the file checked unchanged, so a crash or a host writing in that instant
    leaves the backup to restore. Raises OSError."""
    fd = os.open(target, os.O_WRONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(fd)


def edit_file(
    path: Path, parse: Callable[[bytes], T], update: Callable[[bytes | None, T | None], bytes | None]
) -> bool:
    """Replace the settings file ``path`` with ``update(old bytes, parse(old bytes))`` (both None when
    there is no file: it is created, with its directory); returns whether the file changed (``update``
    returns None: nothing to change).

    ``parse`` raises ``MemsyncError`` for bytes it cannot read. An empty or unreadable file is read again
    for ``SETTLE_S`` seconds (a host may be rewriting it), then refused; never taken for empty settings.
    The new version goes in place only over the version read (else the edit starts over, within the same
    time), under memsync's writer lock for ``path`` (see the module doc), taken only when ``update``
    changes the file: an edit that changes nothing writes nothing. Raises ``MemsyncError``, naming
    ``path``, for what cannot be read or written.
    """
    deadline = time.monotonic() + SETTLE_S
    _target(path)  # a link loop is one line here, before the lock resolves the path
    # A first pass reads without the lock: an edit that changes nothing (a status, the removal of an
    # entry that is not there) then writes nothing at all, not even a lock file in memsync's state dir.
    if not _settled(path, parse, update, deadline, place=False):
        return False
    with writer_lock(path):
        return _settled(path, parse, update, deadline, place=True)


def _settled(
    path: Path,
    parse: Callable[[bytes], T],
    update: Callable[[bytes | None, T | None], bytes | None],
    deadline: float,
    *,
    place: bool,
) -> bool:
    """:func:`edit_file`'s loop: whether ``update`` changes the settled file (``place``: and it is now
    changed, in place over the version read). Raises ``MemsyncError`` past ``deadline``."""
    while True:
        target = _target(path)
        try:
            seen = _read(target)
            if seen is not None and not seen.data.strip():
                raise _Unsettled(
                    f"cannot edit {path}: it is empty. If a host is writing it, retry in a moment; "
                    "else delete the empty file, then retry"
                )
            new = update(None, None) if seen is None else update(seen.data, _parsed(parse, seen.data))
            if new is None:
                return False
            if not place or _placed(path, target, seen, new):
                return True
            last = _Unsettled(
                f"cannot edit {path}: it kept changing while memsync edited it. Retry in a moment"
            )
        except _Unsettled as exc:
            last = exc
        except OSError as exc:
            raise MemsyncError(
                f"cannot edit {path}: {exc.strerror or exc}. Check that you may write the file and its "
                "directory (ls -l; lsattr for an immutable file), then retry"
            ) from None
        if time.monotonic() > deadline:
            raise last
        time.sleep(_PAUSE_S)


def _parsed(parse: Callable[[bytes], T], data: bytes) -> T:
    try:
        return parse(data)
    except MemsyncError as exc:
        raise _Unsettled(str(exc)) from None


def parse_json_object(data: bytes, path: Path) -> dict[str, Any]:
    """The JSON object in ``data`` (read from ``path``, for messages), numbers kept as their text (see
    :func:`render_json_object`). Raises ``MemsyncError`` when it is not UTF-8 JSON or not an object."""
    try:
        value = json.loads(data.decode("utf-8"), parse_float=_tag, parse_int=_int_or_tag, parse_constant=_tag)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MemsyncError(f"cannot read {path}: not valid JSON ({exc}). Fix the file, then retry") from None
    except RecursionError:
        raise MemsyncError(f"cannot read {path}: it is nested too deeply. Fix the file, then retry") from None
    if not isinstance(value, dict):
        raise MemsyncError(
            f"cannot read {path}: it holds a JSON {type(value).__name__}, not an object. "
            "Fix the file, then retry"
        )
    return value


def _tag(text: str) -> str:
    return _NUMBER_TAG + text


def _int_or_tag(text: str) -> int | str:
    """An integer as an int (memsync reads timeouts), kept as text when Python would not write it back
    the same (``-0``) or could not read it (more digits than ``int`` takes)."""
    try:
        number = int(text)
    except ValueError:
        return _tag(text)
    return number if str(number) == text else _tag(text)


def read_settled(path: Path, parse: Callable[[bytes], T]) -> T | None:
    """``parse`` of the settings file ``path`` (None when there is none), read as :func:`edit_file` reads
    it: an empty or unreadable file is read again for a moment, then refused with ``MemsyncError``."""
    found: list[T] = []

    def keep(_old: bytes | None, value: T | None) -> None:
        found.extend([] if value is None else [value])

    edit_file(path, parse, keep)
    return found[0] if found else None


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when the file does not exist), read by :func:`read_settled`."""
    return read_settled(path, lambda data: parse_json_object(data, path)) or {}


def edit_json_object(path: Path, mutate: Callable[[dict[str, Any]], None]) -> bool:
    """Apply ``mutate`` to the JSON object in ``path`` and write the result back with :func:`edit_file`;
    returns whether the file changed.

    Nothing is written when the object is unchanged (a repeated install is idempotent, and a missing
    file stays missing). Raises ``MemsyncError`` for a file that cannot be read, edited or written.
    """
    return edit_file(path, lambda data: parse_json_object(data, path), json_update(path, mutate))


def json_update(
    path: Path, mutate: Callable[[dict[str, Any]], None]
) -> Callable[[bytes | None, dict[str, Any] | None], bytes | None]:
    """The ``update`` of :func:`edit_file` that applies ``mutate`` to the JSON object of ``path``: the
    new bytes, None when the object is unchanged. Raises ``MemsyncError`` for a too deeply nested one."""

    def update(old: bytes | None, before: dict[str, Any] | None) -> bytes | None:
        try:
            after = copy.deepcopy(before or {})
            mutate(after)
            if after == (before or {}):
                return None
            return render_json_object(after, old)
        except RecursionError:
            raise MemsyncError(
                f"cannot edit {path}: it is nested too deeply. Fix the file, then retry"
            ) from None

    return update


def preview(
    path: Path, parse: Callable[[bytes], T], update: Callable[[bytes | None, T | None], bytes | None]
) -> tuple[bytes | None, bytes | None]:
    """What :func:`edit_file` would do, doing nothing: ``path``'s bytes (None: no file) and the bytes it
    would write (None: no change). Raises ``MemsyncError`` for a file that cannot be read or parsed."""
    try:
        old = path.read_bytes() if path.exists() else None
    except OSError as exc:
        raise MemsyncError(f"cannot read {path}: {exc.strerror or exc}. Check its permissions") from None
    return old, update(old, None if old is None else parse(old))


def render_json_object(data: dict[str, Any], like: bytes | None = None) -> bytes:
    """``data`` as JSON bytes laid out like the file bytes ``like``: its indentation (two spaces when it
    has none, or for a new file), one line for a one-line file (its separators kept) and whether it ends
    in a newline (a new file does). Numbers read by
    :func:`parse_json_object` come back as written, and a lone surrogate as its ``\\u`` escape."""
    text = "" if like is None else like.decode("utf-8", errors="replace")
    found = _FIRST_INDENT.search(text)
    indent = found.group(1) if found else DEFAULT_INDENT
    ending = "\n" if like is None or text.endswith("\n") else ""
    if text.strip() and "\n" not in text.strip():
        # A one-line file stays one line, with its own separators (compact, or with a space after each).
        spaced = re.search(r'"\s*:\s', text) is not None
        out = json.dumps(data, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))
    else:
        out = json.dumps(data, indent=indent, ensure_ascii=False)
    out = _TAGGED.sub(lambda match: match.group(1), out)
    out = _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", out)
    return (out + ending).encode("utf-8")

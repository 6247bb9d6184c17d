"""Safe writes to files agents may be using: one O_APPEND write, or temp file + rename (DESIGN I5)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import filelock
import platformdirs

TEMP_PREFIX = ".memsync-tmp-"


def append_once(path: Path, data: bytes, *, create: bool = False) -> None:
    """Append ``data`` to ``path`` with one ``write`` on an ``O_APPEND`` descriptor, then fsync.

    One write of a whole number of lines means concurrent appenders never interleave inside a line.
    ``create`` allows creating a missing file (mode 0o644 before umask). Raises ``OSError`` from the OS;
    a short write (disk full) raises ``OSError(ENOSPC)`` after writing what fitted.
    """
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, 0o644)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(28, f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_beside(path: Path, data: bytes, mode: int) -> Path:
    """Write ``data`` to a new fsynced temp file (``mode`` bits) in ``path``'s directory, created if
    missing, and return its path. Its name starts with ``TEMP_PREFIX``, which memsync never syncs.
    Raises ``OSError``; on failure no temp file is left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def fsync_dir(path: Path) -> None:
    """fsync the directory ``path`` so a rename or link in it survives a crash. Raises ``OSError``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: temp file in the same directory, fsync, ``os.replace``.

    Keeps the permission bits of an existing ``path``. Readers see the old or the new bytes, never a mix.
    Raises ``OSError`` from the OS; on failure the temp file is removed and ``path`` is unchanged.
    """
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    tmp = temp_beside(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` whole (fsynced temp file + hard link), or return False when
    ``path`` already exists: a reader never sees it half written, and a file another process created
    first is never overwritten. Mode 0o644 less the umask. Raises ``OSError`` for other failures."""
    mask = os.umask(0o022)
    os.umask(mask)
    tmp = temp_beside(path, data, 0o644 & ~mask)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def writer_lock(path: Path) -> filelock.FileLock:
    """The lock every memsync writer of the live file ``path`` takes (compaction refuses while it is held).

    The lock file lives under ``$XDG_STATE_HOME/memsync/locks/``, never beside the memory file, so it is
    not mistaken for memory. Returns an unacquired ``filelock.FileLock``; use it as a context manager.
    """
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    lock_dir = platformdirs.user_state_path("memsync") / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(lock_dir / f"{digest}.lock")

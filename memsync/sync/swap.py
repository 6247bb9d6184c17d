"""Replacing a live file atomically while learning what it held at that instant (DESIGN I5): the atomic
file primitive deliver needs beyond ``memsync.fsio``."""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

from memsync.fsio import TEMP_PREFIX, atomic_write, fsync_dir, libc, temp_beside

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def replace_keeping(path: Path, data: bytes) -> bytes:
    """Atomically replace ``path`` with ``data``; return the bytes it held at the instant of the swap.

    Uses ``RENAME_EXCHANGE`` so that even an agent's own atomic save in that instant is caught. Where
    that is missing, ``fsio.atomic_write`` with a hard link kept to the old file: in-place writes are
    caught, an agent's rename in the same instant is not. Raises FileNotFoundError when ``path`` is gone.
    """
    mode = path.stat().st_mode & 0o7777
    tmp = temp_beside(path, data, mode)
    try:
        if _exchange(tmp, path):
            old = tmp.read_bytes()
            fsync_dir(path.parent)
            return old
        keep = path.with_name(f"{TEMP_PREFIX}kept-{path.name}")
        keep.unlink(missing_ok=True)
        os.link(path, keep)
        try:
            atomic_write(path, data)
            return keep.read_bytes()
        finally:
            keep.unlink(missing_ok=True)
    finally:
        tmp.unlink(missing_ok=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the directory entries ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    False when the platform or file system lacks it; raises ``OSError`` (e.g. ENOENT) otherwise.
    """
    renameat2 = getattr(libc(), "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))

"""Replacing a live file atomically while learning what it held at that instant (DESIGN I5): the atomic
file primitive deliver needs beyond ``memsync.base.fsio``."""

from __future__ import annotations

import os
from pathlib import Path

from memsync.base.fsio import TEMP_PREFIX, atomic_write, exchange, fsync_dir, temp_beside


def replace_keeping(path: Path, data: bytes) -> bytes:
    """Atomically replace ``path`` with ``data``; return the bytes it held at the instant of the swap.

    Uses ``RENAME_EXCHANGE`` so that even an agent's own atomic save in that instant is caught. Where
    that is missing, ``fsio.atomic_write`` with a hard link kept to the old file: in-place writes are
    caught, an agent's rename in the same instant is not. Raises FileNotFoundError when ``path`` is gone.
    """
    mode = path.stat().st_mode & 0o7777
    tmp = temp_beside(path, data, mode)
    try:
        if exchange(tmp, path):
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

"""A full disk, told apart from other failures and named the same way everywhere: "disk full: PATH"
(DESIGN "Hostile input": a failed step on a full disk leaves everything as it was, and memsync says
which disk to free, then retries).
"""

from __future__ import annotations

import errno
import re
import shutil
import sqlite3
from pathlib import Path

ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# A file system with less free space than this is taken as full when a write on it failed: git does not
# always say why it could not write a file.
FREE_BYTES = 1024 * 1024
ADVICE = "Free some space there; memsync retries (the daemon with backoff) and nothing is lost"
_GIT_SAYS = re.compile(r"No space left on device|Out of diskspace|Disk quota exceeded", re.IGNORECASE)
_QUOTED_PATH = re.compile(r"'(/[^']+)'")


def is_full(exc: BaseException) -> bool:
    """True when ``exc`` is a write refused for want of space or quota (``OSError`` ENOSPC/EDQUOT, SQLite's
    SQLITE_FULL)."""
    if isinstance(exc, OSError):
        return exc.errno in ERRNOS
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return False


def nearly_full(path: Path) -> bool:
    """True when the file system holding ``path`` (or, when it does not exist, its directory) has less
    than ``FREE_BYTES`` free."""
    for place in (path, path.parent):
        try:
            return shutil.disk_usage(place).free < FREE_BYTES
        except OSError:
            continue
    return False


def git_says_full(stderr: str) -> bool:
    """True when git's ``stderr`` says a write failed for want of space or quota."""
    return bool(_GIT_SAYS.search(stderr))


def named(path: Path | str) -> str:
    """The words for a full disk under ``path``: ``disk full: PATH``."""
    return f"disk full: {path}"


def named_by_git(stderr: str, default: Path) -> str:
    """``named`` for the file git's ``stderr`` quotes (an absolute path), else for ``default``."""
    quoted = _QUOTED_PATH.search(stderr)
    return named(quoted[1] if quoted else default)

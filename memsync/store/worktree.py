"""The store's working tree against its last commit: what differs, and putting back what memsync did not
write (DESIGN "Hostile input": the store never commits a working-tree change its own publish did not
write; a file a failed checkout or merge left half-written is restored from the last commit instead).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memsync.base.layout import is_ignored

# The temp files git hands a merge driver, in the worktree root; a killed merge leaves them behind.
GIT_MERGE_TEMP = ".merge_file_*"

# `git status` listing every changed, untracked and .gitignore-hidden file one by one, NUL-separated.
STATUS_ARGS = (
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--ignored=traditional",
    "--no-renames",
)


@dataclass(frozen=True)
class Change:
    """One path of the working tree that differs from the last commit, with git's two status letters
    (``??`` untracked, ``!!`` untracked and hidden by a ``.gitignore``, else index and worktree state)."""

    path: str
    code: str

    @property
    def untracked(self) -> bool:
        """True when neither the last commit nor the index has the path."""
        return self.code in ("??", "!!")

    @property
    def hidden(self) -> bool:
        """True for an untracked file a ``.gitignore`` in the store hides from ``git add -A``."""
        return self.code == "!!"


def parse_status(out: str) -> list[Change]:
    """The changes in the output of ``git`` with ``STATUS_ARGS``."""
    return [Change(entry[3:], entry[:2]) for entry in out.split("\0") if len(entry) > 3]


def put_back(worktree: Path, changes: Sequence[Change], git: Callable[..., object], per_call: int) -> None:
    """Make each of ``changes`` in ``worktree`` what the last commit has: untracked files are deleted
    first (on a full disk that frees space), then the others restored in index and working tree (a path
    the last commit lacks leaves both), ``per_call`` paths per ``git`` call (the OS caps a command
    line). ``git`` runs git with the given arguments and raises ``MemsyncError`` when it fails (a disk
    still full: the caller must not take the working tree for the last commit then)."""
    for change in changes:
        if change.untracked:
            (worktree / change.path).unlink(missing_ok=True)
    tracked = [f":(literal){change.path}" for change in changes if not change.untracked]
    for start in range(0, len(tracked), per_call):
        git("restore", "--source=HEAD", "--staged", "--worktree", "--", *tracked[start : start + per_call])


def never_stored(rel_path: str) -> bool:
    """True for what memsync never commits: editor/temp files and snapshot.md (``layout``), and git's
    leftover merge-driver temp files."""
    return is_ignored(rel_path) or fnmatch.fnmatchcase(PurePosixPath(rel_path).name, GIT_MERGE_TEMP)

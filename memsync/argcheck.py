"""Checks of what a user typed, made before anything is written: a typo is refused in one line that names
the argument, instead of creating directories or config entries nobody meant."""

from __future__ import annotations

import os
from pathlib import Path

from memsync.errors import MemsyncError
from memsync.remote_url import is_local_path, name_problem, url_problem


def _default_roots() -> tuple[Path, ...]:
    """The folders agents and their hosts write into by default (``detect``; Claude Code's ``~/.claude``):
    memsync may track them, and paths in them, before they exist."""
    home = Path(os.path.abspath(Path.home()))
    return (home / ".agents" / "memory", home / ".agent-memory", home / ".claude")


def existing_parent(path: Path, what: str) -> Path:
    """``path`` made absolute (``~`` expanded) when it exists or its parent directory does; a path that
    does not exist yet under an existing directory is fine (it is created later), and so is any path in
    the default memory folders (``~/.agents/memory``, ``~/.agent-memory``, ``~/.claude``), which agents
    and their hosts create.
    ``what`` names the argument in the error (``--file``, ``PATH``). Raises ``MemsyncError`` when the
    parent is missing or is not a directory."""
    absolute = Path(os.path.abspath(path.expanduser()))
    if absolute.exists() or absolute.is_symlink():
        return absolute
    if any(absolute.is_relative_to(root) and absolute != root for root in _default_roots()):
        return absolute
    parent = absolute.parent
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise MemsyncError(
            f"{what} {path}: its directory {parent} {why}. Fix the path, or create the directory first"
        )
    return absolute


def remote_url(url: str, what: str = "URL") -> str:
    """``url`` as the config should hold it: a relative local path made absolute, anything else as
    given. Raises ``MemsyncError`` naming ``what`` when git could not use it (``remote_url``'s rules),
    or when it is a local path whose parent directory does not exist."""
    why = url_problem(url, relative_ok=True)
    if why is not None:
        raise MemsyncError(f"{what} {url!r} {why}. Fix the URL")
    if not is_local_path(url):
        return url
    absolute = existing_parent(Path(url), what)
    return url if url.startswith(("/", "~")) else str(absolute)


def remote_name(name: str) -> str:
    """``name`` when it can name a remote; raises ``MemsyncError`` saying why not otherwise."""
    why = name_problem(name)
    if why is not None:
        raise MemsyncError(f"remote name {name!r} {why}. Pick another name, such as origin or laptop")
    return name

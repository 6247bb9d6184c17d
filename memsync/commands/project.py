"""`memsync project alias PATH NAME`: name a project's identity, so that its memory meets on the machines
that give it the same name (``memsync.projects.identity``): a project without a remote is keyed on its machine
alone until then. The alias goes into ``config.toml``'s ``[projects]`` table (this machine's paths, one
name every machine shares); the key the project had before is folded into the new one (``legacy``), so
nothing stored under it is left behind."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from memsync.base import argcheck
from memsync.base.paths import config_path
from memsync.commands.config_edits import Report, absolute, home_relative, reload_daemon
from memsync.config.file import ALIASES_TABLE
from memsync.errors import MemsyncError
from memsync.projects import identity
from memsync.tracks.resolve import edit_tracks, load_tracks

# Letters, digits and `._-`, in `/`-separated parts: `shop`, `acme/shop`, `git.example.org/org/shop`.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


def alias(path: Path, name: str, config: Path | None = None) -> Report:
    """Record ``name`` as the identity of the project whose folder is ``path`` (replacing an alias it
    had), and tell a running daemon. Returns the lines for the user: the store paths the project's
    tracked memory syncs as now. Raises MemsyncError for a folder that is missing or cannot be a
    project (HOME, the root, a system directory), or a name that is not a plain path of names."""
    cfg_path = config_path() if config is None else config
    project = absolute(path)
    if not project.is_dir():
        raise MemsyncError(f"project alias: {project} is not a directory. Give the project's folder")
    if (why := argcheck.refusal(project)) is not None:
        raise MemsyncError(f"project alias: {project} is {why}, not a project. Give the project's folder")
    if not _NAME.match(name) or ".." in name:
        raise MemsyncError(
            f"project alias: {name!r} is not a project name. Use letters, digits, '.', '_', '-' and '/' "
            "between parts, such as acme/shop"
        )

    def mutate(raw: dict[str, Any]) -> None:
        raw.setdefault(ALIASES_TABLE, {})[home_relative(project)] = name

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    key = identity.identity_name(name)
    lines.append(f"project {project} is {name!r} now: its memory syncs under the key {key}")
    # Read again: the config was checked before the file held the alias, with the key it had then.
    for store in load_tracks(cfg_path).stores.values():
        for track in store.tracks:
            if key in PurePosixPath(track.store_path).parts:
                lines.append(f"{track.live} syncs as {track.store_path} in store {store.name}")
    lines.append(f"on every machine that should share it, run `memsync project alias <its folder> {name}`")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)

"""``memsync remote add`` / ``remote remove``: a store's remotes in the config."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from memsync.base import argcheck
from memsync.base.git import remote_attempt
from memsync.base.paths import config_path
from memsync.base.remote_url import redacted
from memsync.commands.config_edits import (
    DEFAULT_STORE,
    Report,
    reload_daemon,
    store_table,
)
from memsync.config.file import NETWORK_TIMEOUT_S
from memsync.errors import MemsyncError
from memsync.store.remotes import local_remote_path
from memsync.tracks.resolve import edit_tracks, load_stores

# Before a config says otherwise (`network_timeout_s`): the remote's HEAD asked while making the store.
REMOTE_TIMEOUT_S = NETWORK_TIMEOUT_S


def remote_add(name: str, url: str, store: str = DEFAULT_STORE, config: Path | None = None) -> Report:
    """Add remote ``name`` = ``url`` to ``store``; the next cycle fetches, merges and pushes to it. A
    relative local path is made absolute. Raises ``MemsyncError`` (nothing written) for a name git
    refuses, a URL git cannot use, a local path whose directory does not exist, an unknown store, or a
    remote of that name in the store already."""
    cfg_path = config_path() if config is None else config
    name = argcheck.remote_name(name)
    url = argcheck.remote_url(url)

    def mutate(raw: dict[str, Any]) -> None:
        remotes = store_table(raw, store).setdefault("remotes", {})
        if name in remotes:
            raise MemsyncError(
                f"cannot add remote {name}: store {store} already has one of that name "
                f"({redacted(remotes[name])}). Run `memsync remote remove {name} --store {store}` first"
            )
        remotes[name] = url

    edited = edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(f"store {store}: remote {name} = {redacted(url)}")
    warning = _local_remote_warning(url, edited.network_timeout_s)
    if warning:
        lines.append(warning)
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def _local_remote_warning(url: str, timeout_s: float) -> str | None:
    """A warning line when ``url`` is a local path (or ``file://`` URL) with no git repository there, None
    otherwise; network URLs are not contacted (the remote may be offline for now). The remote is added
    anyway: the user may create the repository later."""
    path = local_remote_path(url)
    if path is None:
        return None  # a network URL, or git's scp-like host:path: not contacted
    if not path.exists():
        return (
            f"warning: {url} does not exist (added anyway): create it with "
            f"`git init --bare {shlex.quote(str(path))}`, "
            "or fix the URL with `memsync remote remove` and `memsync remote add`"
        )
    done = remote_attempt("ls-remote", "--heads", str(path), timeout_s=timeout_s)
    if done is not None and done.status != 0:
        return (
            f"warning: {url} is not a git repository (added anyway): syncing fails until it is one. "
            "Fix the URL with `memsync remote remove` and `memsync remote add`"
        )
    return None


def remote_list(store: str | None = None, config: Path | None = None) -> tuple[str, ...]:
    """One line per remote (``store NAME URL``) of ``store``, or of every store when None; a store
    without one says so. Raises ``MemsyncError`` without a store, or for an unknown ``store``."""
    loaded = load_stores(config)
    if store is not None and store not in loaded.stores:
        raise MemsyncError(
            f"cannot list the remotes of store {store!r}: it is not configured. "
            f"Its stores: {', '.join(loaded.stores)}"
        )
    lines: list[str] = []
    for cfg in loaded.stores.values():
        if store is None or cfg.name == store:
            lines.extend(f"{cfg.name} {name} {redacted(url)}" for name, url in cfg.remotes.items())
            if not cfg.remotes:
                lines.append(f"{cfg.name}: no remote (`memsync remote add NAME URL --store {cfg.name}`)")
    return tuple(lines)


def remote_remove(name: str, store: str = DEFAULT_STORE, config: Path | None = None) -> Report:
    """Remove remote ``name`` from ``store``; history already exchanged stays. Raises ``MemsyncError`` if
    there is no such remote."""
    cfg_path = config_path() if config is None else config

    def mutate(raw: dict[str, Any]) -> None:
        remotes = store_table(raw, store).get("remotes", {})
        if name not in remotes:
            raise MemsyncError(
                f"cannot remove remote {name}: store {store} has none of that name. "
                f"Its remotes: {', '.join(remotes) or 'none'}"
            )
        del remotes[name]

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(f"store {store}: remote {name} removed (history already exchanged stays)")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)

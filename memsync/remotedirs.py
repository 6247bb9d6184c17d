"""The remotes of a store that are local paths: their git dirs, whose refs the daemon watches, and whether
one moved since the store last fetched (DESIGN "One sync cycle" step 1: a peer's push to a local remote
is seen at once)."""

from __future__ import annotations

from pathlib import Path

from memsync.config import StoreConfig
from memsync.paths import StoreLayout
from memsync.store.refs import read_ref
from memsync.watch import remote_git_dir


def remote_dirs(store: StoreConfig) -> dict[str, Path]:
    """The git dirs of ``store``'s remotes that are local paths, by remote name."""
    dirs = {name: remote_git_dir(url, store.path) for name, url in store.remotes.items()}
    return {name: path for name, path in dirs.items() if path is not None}


def remote_moved(store: StoreConfig) -> bool:
    """True when a local-path remote of ``store`` has a head the store has not fetched yet (read from the
    ref files, without running git)."""
    ref = f"refs/heads/{store.branch}"
    for remote, git_dir in remote_dirs(store).items():
        theirs = read_ref(git_dir, ref)
        if theirs != read_ref(StoreLayout(store.path).git_dir, f"refs/remotes/{remote}/{store.branch}"):
            return True
    return False

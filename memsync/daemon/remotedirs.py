"""The remotes of a store that are local paths: their git dirs, whose refs the daemon watches, whether
one moved since the store last fetched (DESIGN "One sync cycle" step 1: a peer's push to a local remote
is seen at once), and how long this machine lets such a move settle before its cycle."""

from __future__ import annotations

import hashlib
from pathlib import Path

from memsync.base.paths import StoreLayout
from memsync.base.refs import read_ref
from memsync.config.file import StoreConfig
from memsync.daemon.watch import remote_git_dir

# One push wakes every machine of a team watching the remote: each waits its own fraction of this
# (seconds) before fetching, so their fetches do not all land in the same instant and a busy remote's
# next pushes are taken in by fewer cycles.
REACTION_SPREAD_S = 0.3


def reaction_spread(host: str) -> float:
    """The extra wait, in seconds within ``[0, REACTION_SPREAD_S)``, between a remote's refs moving and
    this machine's cycle: fixed by the host name ``host`` (its SHA-256), so a team's machines are spread
    evenly over it without talking to each other, each always at the same place."""
    fraction = int.from_bytes(hashlib.sha256(host.encode()).digest()[:8], "big") / 2.0**64
    return REACTION_SPREAD_S * fraction


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

"""Registering memsync's merge drivers in a store (DESIGN "Merge drivers"; I8: peers cannot change the
registration, which lives in the git dir, never in history).

Opening a store registers them only when they are missing or name another interpreter, so a daemon that
opens its store again (or a store being made by another process meanwhile) does not rewrite the git
config; each ``Store`` rewrites them once, before its first merge, so the merges run with this memsync's
attributes block. git tells a driver nothing of the commits it merges: ``sides_env`` names their hosts
and times for it."""

from __future__ import annotations

from memsync.base.git import GitError
from memsync.errors import MemsyncError
from memsync.merge.kinds import KINDS
from memsync.merge.labels import OURS, THEIRS, side_variables
from memsync.merge.registration import driver_command, install_merge_drivers
from memsync.store import history
from memsync.store.repo import StoreGit


def ensure(g: StoreGit, config: dict[str, str]) -> None:
    """At open: register the drivers unless the store's local git ``config`` (lower-cased keys, as read)
    runs this memsync's driver for every kind and the attributes file is there. Raises
    ``MemsyncError``."""
    current = all(config.get(f"merge.memsync-{kind}.driver") == driver_command(kind) for kind in KINDS)
    if not (current and (g.git_dir / "info" / "attributes").exists()):
        register(g)


def before_merge(g: StoreGit) -> None:
    """Before a merge: register the drivers if this ``Store`` did not yet. Raises ``MemsyncError``."""
    if not g.drivers_registered:
        register(g)


def register(g: StoreGit) -> None:
    """Write the drivers' git config and attributes block (``registration.install_merge_drivers``; a
    config locked by another process is waited for by ``memsync.base.git``). Raises ``MemsyncError`` naming
    what failed."""
    try:
        install_merge_drivers(g.git_dir)
    except (OSError, GitError) as exc:
        said = exc.stderr if isinstance(exc, GitError) else ""
        why = said.strip().splitlines()[-1:] or [str(exc)]
        raise MemsyncError(
            f"cannot open store {g.name!r}: registering the merge drivers "
            f"failed ({why[0]}). Check that {g.git_dir} is writable"
        ) from exc
    g.drivers_registered = True


def sides_env(g: StoreGit, ours: str, theirs: str) -> dict[str, str]:
    """The environment for a merge whose driver sides are commits ``ours`` (git's %A) and ``theirs`` (%B):
    each side's host (its ``Memsync-Host`` trailer, else its author) and author time (kept by a rebase,
    so a replayed commit says when it was written), for the entry driver's labels (``merge.labels``).
    Raises ``MemsyncError`` when git fails."""
    env: dict[str, str] = {}
    for side, sha in ((OURS, ours), (THEIRS, theirs)):
        record = history.commit(g, sha)
        host = record.host or g.check("log", "--no-walk", "--format=%an", sha).out.strip()
        env |= side_variables(side, host, int(record.date.timestamp()))
    return env

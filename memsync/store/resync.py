"""Adopting a remote's rewritten history (DESIGN "Hostile input": a rewritten remote is left alone until
the user runs `memsync resync`): the branch is reset to the remote's head and the local memory re-applied
on top through the merge drivers, as one commit; interrupted, it is rolled back by the next open
(``recovery``)."""

from __future__ import annotations

import dataclasses
import json

from memsync.base.fsio import atomic_write
from memsync.errors import MemsyncError
from memsync.store import drivers, remotes, storeid
from memsync.store.conflicts import settle_unmerged
from memsync.store.exchange import RemoteOutcome, exchange_one, fetch, unreachable
from memsync.store.recovery import RESYNC_MARKER
from memsync.store.repo import StoreGit, log


def resync(g: StoreGit, remote: str, adopt_unrelated: bool) -> RemoteOutcome:
    """``facade.Store.resync`` on a store on its branch with nothing uncommitted. Raises
    ``MemsyncError``."""
    fetched = fetch(g, remote)
    if fetched.failure is not None:
        raise MemsyncError(
            f"cannot resync with {remote!r}: {unreachable(g, remote, fetched.failure)}. Check the "
            "network and retry"
        )
    theirs = fetched.head
    local = g.rev("HEAD")
    if (
        theirs is not None
        and local is not None
        and not (g.is_ancestor(local, theirs) or g.is_ancestor(theirs, local))
    ):
        unrelated = None if adopt_unrelated else storeid.unrelated(g, remote, local, theirs)
        if unrelated is not None:
            raise MemsyncError(f"cannot resync with {remote!r}: {unrelated}")
        _reapply(g, remote, local, theirs)
    remotes.set_seen(g, remote, None)
    outcome = exchange_one(g, remote)
    if g.rev("HEAD") != local:
        # The re-apply (or the exchange) brought the remote's content: callers deliver on `merged`.
        outcome = dataclasses.replace(outcome, merged=True)
    log.info("store %s: resync with %s: %s", g.name, remote, outcome.message)
    return outcome


def _reapply(g: StoreGit, remote: str, local: str, theirs: str) -> None:
    drivers.before_merge(g)
    marker = g.meta_dir / RESYNC_MARKER
    g.check("update-ref", f"refs/memsync/before-resync/{remote}", local)
    atomic_write(marker, json.dumps({"before": local, "remote": remote}).encode())
    g.check("reset", "-q", "--hard", theirs)
    result = g.run(
        "merge",
        "-q",
        "--squash",
        "--allow-unrelated-histories",
        local,
        env=drivers.sides_env(g, theirs, local),
    )
    if result.status != 0:
        problem = settle_unmerged(g, result, local)
        if problem is not None:
            g.check("reset", "-q", "--hard", local)
            marker.unlink()
            raise MemsyncError(
                f"cannot resync with {remote!r}: re-applying local memory failed "
                f"({problem}); the store is unchanged. Fix the file in {g.worktree}, "
                "then retry"
            )
    if storeid.store_id(g, theirs) is not None:  # an adopted unrelated store: its id, not both
        g.check("checkout", theirs, "--", storeid.STORE_ID_FILE)
    if g.run("diff", "--cached", "--quiet", "--no-ext-diff").status != 0:
        g.check(
            "commit",
            "-q",
            "--no-verify",
            "-m",
            g.message(f"memsync: resync with {remote}: local memory re-applied on its history"),
        )
    (g.git_dir / "SQUASH_MSG").unlink(missing_ok=True)
    marker.unlink()

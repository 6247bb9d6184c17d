"""Bringing a fetched head into the store's branch (DESIGN I9, quiescence): when one side contains the
other, a fast-forward or nothing, never a merge commit; when both have commits, this machine's unpushed
commits replayed on top of the remote's (``replay``, where asked and possible), else one merge commit
joining them through the merge drivers, even if both trees are identical (history must join, and
rewriting commits a peer has seen is not allowed). Rename detection is off (the store's git config): a
deleted entry and a new similar one are never confused. A failed merge or fast-forward is undone,
worktree included."""

from __future__ import annotations

from dataclasses import dataclass

from memsync.store import drivers
from memsync.store.conflicts import settle_conflicts
from memsync.store.recovery import merging
from memsync.store.replay import replay
from memsync.store.repo import StoreGit, log


@dataclass(frozen=True)
class Integrated:
    """What ``integrate`` did: ``merged`` when the branch took commits of the other side; ``problem``
    (one line) when it could not, and was left as it was."""

    merged: bool
    problem: str | None = None


def integrate(g: StoreGit, theirs: str, what: str, *, replay_unpushed: bool = False) -> Integrated:
    """Bring commit ``theirs`` (of ``what``: a remote's name, or words for the commits) into the branch;
    with ``replay_unpushed`` (``theirs`` is a remote's head), commits no remote has are replayed on top
    of it rather than merged when they can be (``replay.replay``). Raises ``MemsyncError`` only when git
    fails where the store itself is broken."""
    head = g.rev("HEAD")
    if head is None:
        g.check("reset", "-q", "--hard", theirs)
        return Integrated(merged=True)
    if g.is_ancestor(theirs, head):
        return Integrated(merged=False)
    if g.is_ancestor(head, theirs):
        with merging(g, head):
            forwarded = g.run("merge", "-q", "--ff-only", theirs)
        if forwarded.status != 0:
            return Integrated(
                False, f"fast-forward to {what} failed ({g.why(forwarded)}); undone, will retry"
            )
        return Integrated(merged=True)
    if replay_unpushed and replay(g, theirs, what):
        return Integrated(merged=True)
    log.debug("store %s: merged %s onto %s", g.name, what, head[:10])
    message = g.message(f"memsync: merge {what}")
    drivers.before_merge(g)
    sides = drivers.sides_env(g, head, theirs)
    with merging(g, head):
        result = g.run(
            "merge",
            "-q",
            "--no-edit",
            "--no-verify",
            "--allow-unrelated-histories",
            "-m",
            message,
            theirs,
            env=sides,
        )
        if result.status == 0:
            return Integrated(merged=True)
        problem = settle_conflicts(g, result)
        if problem is not None:
            problem = problem if g.full(result) is None else g.why(result)
            return Integrated(
                False,
                f"merge with {what} could not complete ({problem}); aborted, both sides kept; will retry",
            )
        g.check("commit", "-q", "--no-verify", "-m", message)
        return Integrated(merged=True)

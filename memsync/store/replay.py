"""Replaying this machine's unpushed commits onto a remote's head instead of merging it (DESIGN "One sync
cycle" step 4, I3, I9): commits no remote has were never seen by a peer, so they may be made again on
top of what the remote holds, and the shared branch stays a line: one commit per write, no merge commits
however many machines push at once.

git's rebase merges each commit through the same merge machinery as a merge, so memsync's drivers (the
store's ``merge=`` attributes) decide the content; the sides are swapped (DESIGN "Git facts"), which the
drivers' symmetry makes moot. A commit whose change the remote already has becomes empty and is dropped,
so a replay never makes a commit that changes nothing. Anything a driver cannot settle, or that needs
memsync's own settling (a modify/delete, a file meeting a directory), aborts the replay: the caller
merges instead (``integrate``), and the store is back where it was.
"""

from __future__ import annotations

from memsync.store import drivers
from memsync.store.recovery import merging
from memsync.store.repo import StoreGit, log


def replayable(g: StoreGit, theirs: str) -> bool:
    """True when every commit of HEAD that commit ``theirs`` lacks can be made again on top of it: there
    is at least one, none is a merge or a root (the histories share a base), and no remote's tracking ref
    has any of them (as of the last fetch or push: no peer saw them). Raises ``MemsyncError`` when git
    fails."""
    ahead = g.check("rev-list", "--parents", "HEAD", "--not", theirs).out.splitlines()
    if not ahead or any(len(line.split()) != 2 for line in ahead):
        return False
    unseen = g.check("rev-list", "--count", "HEAD", "--not", "--remotes").out.strip()
    return unseen == str(len(ahead))


def replay(g: StoreGit, theirs: str, what: str) -> bool:
    """Make this machine's unpushed commits again on top of commit ``theirs`` (of ``what``, a remote's
    name), through the merge drivers; the branch then ends at the last of them (or at ``theirs`` when
    all were already there). True when it did; False when they are not ``replayable`` or the replay
    stopped (undone, worktree included: merge instead). Raises ``MemsyncError`` when git fails where
    the store itself is broken."""
    if not replayable(g, theirs):
        return False
    head = g.rev("HEAD")
    assert head is not None  # replayable: HEAD has commits
    drivers.before_merge(g)
    # A rebase swaps the sides (the remote's head is %A, the commit replayed %B): so do the labels. Each
    # replayed commit is labelled as the last of them (git runs the drivers without saying which).
    sides = drivers.sides_env(g, theirs, head)
    with merging(g, head):
        # A user's rebase settings (global config) must not change what a replay does: other refs it
        # would move, a stash, the backend (--empty takes the merge backend).
        replayed = g.run(
            "rebase", "-q", "--empty=drop", "--no-autostash", "--no-update-refs", theirs, env=sides
        )
        if replayed.status == 0:
            log.debug("store %s: replayed %s onto %s of %s", g.name, head[:10], theirs[:10], what)
            return True
        if (g.git_dir / "rebase-merge").exists() or (g.git_dir / "rebase-apply").exists():
            g.run("rebase", "--abort")
        # A rebase that could not move the branch at its end (its ref locked) leaves HEAD detached on
        # the replayed commits: back on the branch, which still points where the replay started (the
        # worktree follows it when ``merging`` ends).
        g.check("symbolic-ref", "HEAD", f"refs/heads/{g.cfg.branch}")
    log.debug("store %s: replay onto %s stopped (%s); merging", g.name, what, replayed.reason)
    return False

"""Recovering a store from what a killed or failed git left (DESIGN I7, I2): stale lock files, git's
merge-driver temp files, an interrupted merge, rebase, cherry-pick, revert or resync, and a merge written
into worktree or index but never committed."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.errors import MemsyncError
from memsync.store.commit import put_back_strays
from memsync.store.conflicts import unmerged
from memsync.store.repo import StoreGit, log
from memsync.store.worktree import GIT_MERGE_TEMP

# How long commit/exchange/resync wait for another git process (a user's `git status` in the store).
OPERATION_LOCK_WAIT_S = 5.0
# In the meta dir while a resync re-applies local memory: the HEAD it started from (see ``resync``).
RESYNC_MARKER = "resync.json"
# In the meta dir while a merge runs: the HEAD it started from (see ``merging``).
_MERGE_MARKER = "merge.json"
# Lock files a git process killed mid-operation leaves behind; refs/**.lock are found separately.
_TOP_LOCKS = (
    "index.lock",
    "HEAD.lock",
    "ORIG_HEAD.lock",
    "config.lock",
    "packed-refs.lock",
    "FETCH_HEAD.lock",
    "MERGE_HEAD.lock",
    "shallow.lock",
)


def _lock_files(g: StoreGit) -> list[Path]:
    found = [g.git_dir / name for name in _TOP_LOCKS if (g.git_dir / name).exists()]
    refs = g.git_dir / "refs"
    if refs.is_dir():
        found.extend(refs.rglob("*.lock"))
    return found


def _live_git_pid(g: StoreGit) -> int | None:
    """A running git process working in this store (by /proc cwd or command line), else None."""
    proc = Path("/proc")
    worktree = str(g.worktree.resolve())  # /proc shows resolved paths
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if not (entry / "comm").read_text().startswith("git"):
                continue
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if (
            cwd == worktree
            or cwd.startswith(worktree + os.sep)
            or worktree in cmdline
            or str(g.worktree) in cmdline
        ):
            return int(entry.name)
    return None


def recover_locks(g: StoreGit, wait_s: float) -> None:
    """Remove lock files left by a killed git (DESIGN I7); wait up to ``wait_s`` seconds for a live git
    working in the store. Raises ``MemsyncError`` naming that git when the wait ends."""
    deadline = time.monotonic() + wait_s
    while locks := _lock_files(g):
        pid = _live_git_pid(g)
        if pid is None:
            for lock in locks:
                lock.unlink(missing_ok=True)
                log.warning(
                    "store %s: removed stale %s (no git process is running in the store)",
                    g.name,
                    lock.relative_to(g.worktree),
                )
            return
        if time.monotonic() >= deadline:
            raise MemsyncError(
                f"store {g.name!r} is busy: git process {pid} is working in "
                f"{g.worktree} ({locks[0].name} held). Wait for it to finish and retry"
            )
        time.sleep(0.1)


def recover_interrupted(g: StoreGit) -> None:
    """Undo what a killed git or memsync left mid-operation: git's merge-driver temp files; an interrupted
    resync (rolled back); a merge written but not committed (``merging``); an interrupted merge, rebase,
    cherry-pick or revert (aborted: committed work is kept). Raises ``MemsyncError`` when git fails."""
    gd = g.git_dir
    # git's temp files for a merge driver (%A, %B, %O): garbage once no git runs in the store.
    for leftover in g.worktree.glob(GIT_MERGE_TEMP):
        leftover.unlink(missing_ok=True)
    marker = g.meta_dir / RESYNC_MARKER
    if marker.exists():
        before = json.loads(marker.read_text())["before"]
        abort_merges(g)
        g.check("reset", "-q", "--hard", before)
        marker.unlink()
        log.warning("store %s: an interrupted resync was rolled back; run `memsync resync` again", g.name)
        return
    merging_marker = g.meta_dir / _MERGE_MARKER
    if merging_marker.exists():
        _undo_unfinished_merge(g, json.loads(merging_marker.read_text())["before"])
        merging_marker.unlink()
    abort_merges(g)
    if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
        aborted = g.run("rebase", "--abort")
        if aborted.status != 0:
            g.check("am", "--abort")
        log.warning("store %s: aborted an interrupted rebase", g.name)
    for head, command in (("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert")):
        if (gd / head).exists():
            g.check(command, "--abort")
            log.warning("store %s: aborted an interrupted %s", g.name, command)


def abort_merges(g: StoreGit) -> None:
    """Abort a merge git stopped in, or discard a squash merge or conflicted index (committed work is
    kept). Raises ``MemsyncError`` when git fails."""
    gd = g.git_dir
    if (gd / "MERGE_HEAD").exists():
        if g.run("merge", "--abort").status != 0:
            g.check("reset", "-q", "--merge")
        log.warning("store %s: aborted an interrupted merge (committed work kept)", g.name)
    elif (gd / "SQUASH_MSG").exists() or unmerged(g):
        # A squash merge (resync) or a conflicted index without MERGE_HEAD: back to the last commit.
        g.check("reset", "-q", "--merge")
        (gd / "SQUASH_MSG").unlink(missing_ok=True)
        log.warning("store %s: discarded an interrupted merge (committed work kept)", g.name)


@contextmanager
def merging(g: StoreGit, before: str) -> Iterator[None]:
    """Around a merge or fast-forward into ``before`` (a clean worktree: the cycle committed everything
    first): one that git left written into worktree or index but never committed (failed, on a full
    disk say, or killed while it wrote thousands of files, before it recorded MERGE_HEAD) is undone,
    now or, after a kill, by the next ``open``. Otherwise those files (a torn one among them) would be
    committed as local changes without the merge's parent, and the next merge would merge the same
    content again over an older base (DESIGN I2, I7)."""
    marker = g.meta_dir / _MERGE_MARKER
    atomic_write(marker, json.dumps({"before": before}).encode())
    try:
        yield
    finally:
        _undo_unfinished_merge(g, before)
        marker.unlink(missing_ok=True)


def _undo_unfinished_merge(g: StoreGit, before: str) -> None:
    """Back to ``before`` when HEAD is still there but a merge changed worktree or index (see
    ``merging``); a merge that git stopped with MERGE_HEAD is aborted first."""
    if g.rev("HEAD") != before:
        return
    abort_merges(g)
    if g.run("diff", "--quiet", "--no-ext-diff", "HEAD").status != 0:
        g.check("reset", "-q", "--hard", before)
        log.warning("store %s: undid a merge that was written but not committed; it runs again", g.name)
    put_back_strays(g, ())  # the files it added: reset leaves what the index never had

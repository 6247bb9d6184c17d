"""Settling what a merge left unmerged, alike on every peer (DESIGN I1, I4, "Deletions"): a modify/delete
conflict keeps the modified file (memsync never deletes memory to settle a conflict); a file meeting a
directory of the same name moves to a sibling (``layout.aside_name``: ``notes.md`` ->
``notes.conflict-file.md``) and the directory keeps the name. Anything else (a driver failure) is a
problem: the caller aborts the merge, so the store is never left conflicted."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from memsync.base import git
from memsync.base.layout import aside_name
from memsync.store.repo import StoreGit, log

# Where git's merge puts a file whose name a directory took on the other side: `<path>~<side>`.
_GIT_ASIDE = re.compile(r"(.+)~[^/]+")

# Unmerged path -> {stage: (mode, blob sha)} (stage 1 base, 2 ours, 3 theirs).
Unmerged = dict[str, dict[int, tuple[str, str]]]


def unmerged(g: StoreGit) -> Unmerged:
    """The index's unmerged paths with their stages. Raises ``MemsyncError`` when git fails."""
    stages: Unmerged = {}
    for item in g.check("ls-files", "-u", "-z").out.split("\0"):
        if not item:
            continue
        meta, _, path = item.partition("\t")
        mode, sha, stage = meta.split()
        stages.setdefault(path, {})[int(stage)] = (mode, sha)
    return stages


def abort_merge(g: StoreGit) -> None:
    """Abort the merge git stopped in (``merge --abort``, else back to the last commit)."""
    if g.run("merge", "--abort").status != 0:
        g.check("reset", "-q", "--merge")


def settle_conflicts(g: StoreGit, result: git.Result) -> str | None:
    """After a failed merge (``result``): settle what memsync settles (``settle_unmerged``); anything else
    aborts the merge. Returns None when the merge can be committed, else the problem (merge aborted)."""
    if not (g.git_dir / "MERGE_HEAD").exists():
        return result.reason
    problem = settle_unmerged(g, result, "MERGE_HEAD")
    if problem is not None:
        abort_merge(g)
    return problem


def settle_unmerged(g: StoreGit, result: git.Result, theirs: str) -> str | None:
    """Settle, in index and worktree, the paths that merging ``theirs`` into HEAD left unmerged: a file
    that met a directory of the same name is moved aside (``_move_aside``); of a file deleted on one
    side and changed on the other, the change is kept (DESIGN "Deletions"). Returns None when all are
    settled, else the problem (``result`` is the failed merge's); the caller then discards the merge."""
    left = unmerged(g)
    if not left:
        return result.reason
    names = {name for name in g.check("ls-files", "-z").out.split("\0") if name}
    aside = _moved_by_git(g, left, names, theirs)
    others = sorted(
        path for path, stages in left.items() if path not in aside and set(stages) not in ({1, 2}, {1, 3})
    )
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        return f"{others[0]}{more} could not be merged: a merge driver failed"
    for path, stages in sorted(left.items()):
        if path in aside:
            continue
        g.check("checkout", "--ours" if 2 in stages else "--theirs", "--", path)
        g.check("add", "--", path)
        log.info(
            "store %s: %s was deleted on one side and changed on the other; kept the change", g.name, path
        )
    if aside:
        _move_aside(g, aside, left, names - set(aside))
    return None


def _moved_by_git(g: StoreGit, left: Unmerged, names: set[str], theirs: str) -> dict[str, str]:
    """The unmerged paths that are a file git moved out of a directory's way (``<path>~<side>``, a
    name neither side has), each mapped to the path the file had, which a directory among the index's
    ``names`` now holds."""
    moved = {}
    for path, stages in left.items():
        had = _GIT_ASIDE.fullmatch(path)
        if (
            had is None
            or set(stages) not in ({2}, {3}, {1, 2}, {1, 3})
            or not any(name.startswith(had[1] + "/") for name in names)
        ):
            continue
        if all(g.run("cat-file", "-e", f"{side}:{path}").status != 0 for side in ("HEAD", theirs)):
            moved[path] = had[1]
    return moved


def _move_aside(g: StoreGit, moved: dict[str, str], left: Unmerged, names: set[str]) -> None:
    """Put each file git moved out of a directory's way (``moved``: git's name -> the file's path) at
    ``layout.aside_name`` of its path, the first such name not among the merge result's ``names`` (nor
    a directory of them): nothing is lost, and whichever peer merges, the tree is the same (DESIGN I1,
    I4). The content is the side that has the file (deleted by the other side too: the changed one)."""
    taken = names | {parent.as_posix() for name in names for parent in PurePosixPath(name).parents}
    for path, had in sorted(moved.items(), key=lambda item: (item[1], item[0])):
        stages = left[path]
        mode, sha = stages[2] if 2 in stages else stages[3]
        attempt = 1
        while aside_name(had, attempt) in taken:
            attempt += 1
        name = aside_name(had, attempt)
        taken.add(name)
        g.check("update-index", "--force-remove", "--", path)
        (g.worktree / path).unlink(missing_ok=True)
        g.check("update-index", "--add", "--cacheinfo", f"{mode},{sha},{name}")
        g.check("checkout-index", "-f", "--", name)
        log.warning(
            "store %s: %s is a file on one side and a directory on the other; the directory "
            "keeps the name, the file is now %s",
            g.name,
            had,
            name,
        )

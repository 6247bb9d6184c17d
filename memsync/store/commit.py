"""Committing what memsync wrote, and nothing else (DESIGN "Hostile input", I2): every other change in the
working tree (a file a failed or killed git step left half-written, an edit by hand) is put back from the
last commit and reported."""

from __future__ import annotations

from collections.abc import Collection

from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit, log
from memsync.store.worktree import STATUS_ARGS, Change, never_stored, parse_status, put_back

# A commit of at least this many new or changed files has git write their blobs into one pack (git's
# bulk check-in, for blobs over ``core.bigFileThreshold``) instead of one loose object file each: the
# first sync of 10,000 files spent ~4 s creating loose objects and ~1 s in the `gc --auto` they set
# off. Smaller commits keep loose objects, which git folds into packs without a full repack (a pack per
# commit would pass gc.autoPackLimit every 50 commits, and each time repack everything).
BULK_ADD_FILES = 500
# Paths per `git restore` of what is put back: the OS caps a command line (E2BIG).
ADD_PATHS_PER_CALL = 1000
# Stages exactly the paths given on stdin, NUL-separated: new and changed files hashed into the object
# store (with their stat data, so the next `git status` need not read them), deleted ones removed, a
# file replacing a directory (or the reverse) allowed. It knows no ignore rules, so a file a store's
# .gitignore hides is staged like any other.
_STAGE_ARGS = ("update-index", "--add", "--remove", "--replace", "-z", "--stdin")


def changes(g: StoreGit) -> list[Change]:
    """How the working tree differs from the last commit, but for untracked files memsync never stores
    (temp files, ``snapshot.md``). Raises ``MemsyncError`` when git fails."""
    found = parse_status(g.check(*STATUS_ARGS).out)
    return [change for change in found if not (change.untracked and never_stored(change.path))]


def put_back_strays(g: StoreGit, keep: Collection[str]) -> list[Change]:
    """The working tree's changes (``changes``) at paths in ``keep`` (the paths memsync wrote since the
    last commit, ``SyncState.written``), after putting back from the last commit (and reporting) all
    others. Run on an opened store (``Store.open`` recovers its locks) before publish reads it after a
    crash or a failure, so nothing git left half-written is read, appended to or delivered (DESIGN
    "Hostile input", I2). Raises ``MemsyncError`` when git fails (a disk still full): the working tree is
    then not the last commit, and must not be used."""
    found = changes(g)
    strays = [c for c in found if c.path not in keep]
    if strays:
        put_back(g.worktree, strays, g.check, ADD_PATHS_PER_CALL)
        more = f" and {len(strays) - 3} more" if len(strays) > 3 else ""
        log.warning(
            "store %s: put back %s%s as the last commit has it: memsync did not write it (a failed "
            "or killed git step, or an edit by hand), so it is never committed",
            g.name,
            ", ".join(change.path for change in strays[:3]),
            more,
        )
    return [change for change in found if change.path in keep]


def commit_all(g: StoreGit, message: str, written: Collection[str]) -> str | None:
    """Commit the changes at the paths in ``written`` (see ``facade.Store.commit_all``), putting back every
    other change; ``message`` gets this host's trailer. Returns the new commit's sha, None when there was
    nothing to commit. Raises ``MemsyncError`` when git fails."""
    # One `git status` decides; the common idle case ends here. A .gitignore in the store (peer
    # content) must not hide memory from commits: what memsync wrote is staged whatever it says, and
    # what memsync never stores (editor and temp files, snapshot.md) is not among it (``changes``).
    mine = put_back_strays(g, written)
    if not mine:
        return None
    # One git process for every path, on stdin (no command-line cap). `git hash-object --stdin-paths`
    # with `--index-info` measured far worse: it packs each blob on its own past bigFileThreshold
    # (10,000 packs), and leaves the index without stat data (the next status rehashes every file).
    bulk = ["-c", "core.bigFileThreshold=1"] if len(mine) >= BULK_ADD_FILES else []
    paths = b"".join(change.path.encode("utf-8", "surrogateescape") + b"\0" for change in mine)
    g.check(*bulk, *_STAGE_ARGS, stdin=paths)
    committed = g.run("commit", "-q", "--no-verify", "-m", g.message(message))
    if committed.status != 0:
        if g.run("diff", "--cached", "--quiet", "--no-ext-diff").status == 0:
            return None  # nothing to commit
        raise MemsyncError(
            f"store {g.name!r}: `git commit` failed: {g.why(committed)}. "
            f"Check {g.worktree} (run `memsync status`)"
        )
    sha = g.rev("HEAD")
    assert sha is not None
    return sha

"""A store's lifecycle (DESIGN "One sync cycle" step 3, I7, I8): creating it (a new history, or a first
remote's), making an existing one ready for memsync (recovery, its own git config, the merge drivers),
and keeping HEAD on the store's branch."""

from __future__ import annotations

import shutil
from collections.abc import Collection

from memsync.base.fsio import atomic_write
from memsync.base.layout import IGNORED_NAMES
from memsync.base.remote_url import redacted
from memsync.errors import MemsyncError
from memsync.store import drivers, remotes
from memsync.store.commit import changes, commit_all
from memsync.store.exchange import fetch, push
from memsync.store.format import FORMAT_FILE, FORMAT_VERSION, check_format, check_remote_format, is_store
from memsync.store.integrate import integrate
from memsync.store.recovery import recover_interrupted, recover_locks
from memsync.store.remote_head import point_local_head
from memsync.store.repo import StoreGit, log
from memsync.store.storeid import STORE_ID_FILE, ensure_identity, foreign_message, new_id
from memsync.store.worktree import GIT_MERGE_TEMP


def refuse_foreign(g: StoreGit) -> None:
    """Refuse to open what is not a memsync store: no repository at ``cfg.path``, or a git repository
    memsync did not create (memsync would rewrite its config and commit everything in it). Raises
    ``MemsyncError``."""
    if not g.layout.exists:
        raise MemsyncError(
            f"cannot open store {g.name!r}: {g.worktree} is not a memsync store. "
            f"Run `memsync init`, or fix stores.{g.name}.path in the config"
        )
    if not (g.meta_dir.is_dir() or (g.worktree / FORMAT_FILE).is_file()):
        raise MemsyncError(
            f"cannot open store {g.name!r}: {g.worktree} is a git repository memsync did "
            f"not create. Point stores.{g.name}.path at a memsync store or an empty "
            "directory"
        )


def create(g: StoreGit) -> None:
    """Create the store at ``cfg.path`` (missing or an empty directory) and start its history: from the
    first remote's when it has ``cfg.branch``, else a new one (pushed there). A failed attempt removes
    what it made, so the command can be retried. Raises ``MemsyncError``."""
    path = g.worktree
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise MemsyncError(
            f"cannot create store {g.name!r} at {path}: the directory exists and is not "
            "empty. Choose another store path or empty it"
        )
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    try:
        made = g.run("init", "-q", f"--initial-branch={g.cfg.branch}", str(path))
        if made.status != 0:
            raise MemsyncError(
                f"cannot create store {g.name!r} at {path}: git init failed: {made.reason}. "
                "Check that the directory is writable"
            )
        prepare(g, lock_wait_s=0.0)
        _start_history(g)
    except BaseException:
        # The directory was missing or empty: everything in it now is this attempt's.
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        if created:
            path.rmdir()
        raise


def _start_history(g: StoreGit) -> None:
    first = next(iter(g.cfg.remotes), None)
    head = None
    if first is not None:
        fetched = fetch(g, first)
        if fetched.failure is not None:
            raise MemsyncError(
                f"cannot create store {g.name!r}: remote {first!r} "
                f"({redacted(g.cfg.remotes[first])}) is unreachable: {fetched.failure.reason}. "
                "Check the URL and the network, then retry"
            )
        head = fetched.head
    if first is not None and head is not None:
        if not is_store(g, head):  # a store made before ids has the format file: it gets its id below
            raise MemsyncError(foreign_message(first, g.cfg.remotes[first], g.cfg.branch))
        check_remote_format(g, head, first)
        g.check("reset", "-q", "--hard", head)
        remotes.set_seen(g, first, head)
        log.info("store %s: started from %s's history (%s)", g.name, first, head[:10])
        ensure_identity(g)
        return
    atomic_write(g.worktree / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode())
    atomic_write(g.worktree / STORE_ID_FILE, new_id())
    commit_all(g, "memsync: new store", {FORMAT_FILE, STORE_ID_FILE})
    if first is None:
        return
    pushed = push(g, first)
    if not pushed.done:
        reason = pushed.failure.reason if pushed.failure is not None else pushed.refusal
        log.warning("store %s: could not push the new store to %s yet: %s", g.name, first, reason)
        return
    pushed_head = g.rev("HEAD")
    assert pushed_head is not None
    remotes.set_seen(g, first, pushed_head)
    local = remotes.local_remote_path(g.cfg.remotes[first])
    if local is not None:  # a bare remote made with a HEAD for another branch: clone shows this one
        point_local_head(local, g.cfg.branch)


def prepare(g: StoreGit, lock_wait_s: float) -> None:
    """Make the store ready for memsync: its meta dir and excludes; stale locks removed (waiting up to
    ``lock_wait_s`` seconds for a live git) and interrupted operations undone (``recovery``); its own git
    config; the format version checked; the merge drivers registered; HEAD back on the branch. Raises
    ``MemsyncError``."""
    g.meta_dir.mkdir(parents=True, exist_ok=True)
    (g.meta_dir / "no-hooks").mkdir(exist_ok=True)
    (g.meta_dir / "no-excludes").touch(exist_ok=True)
    exclude = g.git_dir / "info" / "exclude"
    patterns = "".join(f"{pattern}\n" for pattern in (*IGNORED_NAMES, GIT_MERGE_TEMP)).encode()
    if not exclude.exists() or exclude.read_bytes() != patterns:
        atomic_write(exclude, patterns)
    recover_locks(g, lock_wait_s)
    recover_interrupted(g)
    config = _configure(g)
    check_format(g)
    drivers.ensure(g, config)
    if not on_branch(g) and not changes(g):  # after the drivers: returning may merge
        # What memsync wrote and did not commit yet must be committed first: commit_all does.
        ensure_branch(g, ())


def _configure(g: StoreGit) -> dict[str, str]:
    """Set the store's own git config where it differs; returns the local config as it was read."""
    wanted = {
        "core.hookspath": str(g.meta_dir / "no-hooks"),
        "core.excludesfile": str(g.meta_dir / "no-excludes"),
        "core.editor": "true",
        "core.autocrlf": "false",
        "core.safecrlf": "false",
        "core.fsmonitor": "false",
        "core.quotepath": "false",
        # A peer's symlink is checked out as a plain file: nothing is read or written outside the
        # store through it (DESIGN I8).
        "core.symlinks": "false",
        "commit.gpgsign": "false",
        "commit.cleanup": "whitespace",
        "tag.gpgsign": "false",
        "push.gpgsign": "false",
        "push.followtags": "false",
        "push.recursesubmodules": "no",
        "log.showsignature": "false",
        "merge.ff": "true",
        "merge.renames": "false",
        "merge.verifysignatures": "false",
        "rerere.enabled": "false",
        "fetch.recursesubmodules": "false",
        "submodule.recurse": "false",
        "gc.autodetach": "false",
        # Not after each fetch, merge, replay and commit (two more git processes per cycle): the cycle
        # runs `git gc --auto` itself every few commits. No copy of notes on a replay (a store has none).
        "maintenance.auto": "false",
        "notes.rewrite.rebase": "false",
        "user.name": g.identity.name,
        "user.email": g.identity.email,
    }
    for name, url in g.cfg.remotes.items():
        wanted[f"remote.{name}.url"] = url
        branch = g.cfg.branch
        wanted[f"remote.{name}.fetch"] = f"+refs/heads/{branch}:refs/remotes/{name}/{branch}"
    current: dict[str, str] = {}
    for item in g.run("config", "--local", "--list", "-z").out.split("\0"):
        key, _, value = item.partition("\n")
        if key:
            current[key.lower()] = value
    known = {key.split(".")[1] for key in current if key.startswith("remote.") and key.count(".") >= 2}
    for stale in sorted(known - set(g.cfg.remotes)):
        g.check("remote", "remove", stale)
    for key, value in wanted.items():
        if current.get(key.lower()) != value:
            g.check("config", "--local", "--replace-all", key, value)
    return current


def on_branch(g: StoreGit) -> bool:
    """True when HEAD is the store's branch (read without starting git: the common case)."""
    try:
        return (g.git_dir / "HEAD").read_text().strip() == f"ref: refs/heads/{g.cfg.branch}"
    except OSError:
        return False


def ensure_branch(g: StoreGit, written: Collection[str]) -> None:
    """Put HEAD back on the store's branch. Someone who inspected the store with git may have left it
    on a detached HEAD or another branch: what memsync wrote (``written``, see ``commit_all``) and
    committed there since is committed and merged into the branch, never abandoned (I1), and never
    taken for a rewritten remote. Raises ``MemsyncError``."""
    if on_branch(g):
        return
    branch = g.cfg.branch
    stray = g.rev("HEAD")
    if stray is not None:
        commit_all(g, "memsync: local changes", written)
        stray = g.rev("HEAD")
    if g.rev(f"refs/heads/{branch}") is not None:
        result = g.run("checkout", "-q", branch)
    elif stray is None:
        result = g.run("symbolic-ref", "HEAD", f"refs/heads/{branch}")
    else:
        result = g.run("checkout", "-q", "-b", branch)
    if result.status != 0:
        raise MemsyncError(
            f"cannot open store {g.name!r}: switching it to branch {branch!r} "
            f"failed: {result.reason}. Check {g.worktree} with git"
        )
    if stray is None:
        return
    merged = integrate(g, stray, f"the commits made off branch {branch}")
    if merged.problem is not None:
        raise MemsyncError(f"store {g.name!r}: {merged.problem}. Check {g.worktree} with git")
    log.warning(
        "store %s: HEAD was not on branch %s (the config names a new branch, or git was used "
        "in the store by hand); switched to it%s",
        g.name,
        branch,
        ", the commits made off it merged" if merged.merged else "",
    )

"""The store: a git working tree only memsync writes, and its exchange with remotes (issue 4 "Store",
"Exchange"; DESIGN "One sync cycle" steps 3-4, I3, I7, I8, I9).

This is the only module that imports GitPython, and no GitPython type leaves it. Every operation opens a
``git.Repo`` and closes it again (GitPython leaks in long-running processes), so a ``Store`` object holds
no git resources and a daemon may keep one for its whole life.

Every git command runs non-interactively (no terminal prompt, ssh in batch mode, an askpass that answers
nothing) and is killed after a timeout, so a dead network or a credential prompt never hangs the caller.

Merging (DESIGN I9, quiescence): when one side contains the other, memsync fast-forwards or does nothing;
it never makes a merge commit then. When both sides have commits, it makes one merge commit joining them,
even if both trees are identical (history must join, and rewriting either side is not allowed); the peer
then fast-forwards to that commit, so a pair of peers with nothing new settles after one exchange each.
Rename detection is off in merges: a deleted entry and a new similar one are never confused, and a
modify/delete conflict is settled by keeping the modified file (memsync never deletes memory to settle a
conflict). A file meeting a directory of the same name is settled alike on every peer: the directory keeps
the name, the file moves to a sibling (``layout.aside_name``: ``notes.md`` -> ``notes.conflict-file.md``).
Any other conflict, or a driver failure, aborts the merge: the store is never left conflicted.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import unquote, urlparse

import git

from memsync.config import NETWORK_TIMEOUT_S, Identity, StoreConfig
from memsync.diskfull import ADVICE, git_says_full, named_by_git, nearly_full
from memsync.errors import MemsyncError
from memsync.fsio import atomic_write
from memsync.git_env import noninteractive_env
from memsync.gitrun import Result as _Result
from memsync.gitrun import run as run_git
from memsync.layout import HOST_TRAILER, IGNORED_NAMES, aside_name, is_ignored
from memsync.merge.kinds import KINDS
from memsync.merge.registration import driver_command, install_merge_drivers
from memsync.remote_head import point_local_head
from memsync.storeid import STORE_ID_FILE, derived_id, new_id, unrelated_message
from memsync.worktree import STATUS_ARGS, Change, parse_status, put_back

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
FORMAT_FILE = ".memsync/format"
LOCAL_TIMEOUT_S = 300.0
PUSH_ATTEMPTS = 3
# How long commit/exchange/resync wait for another git process (a user's `git status` in the store).
OPERATION_LOCK_WAIT_S = 5.0
# A commit of at least this many new or changed files has `git add` write their blobs into one pack
# (git's bulk check-in, for blobs over ``core.bigFileThreshold``) instead of one loose object file each:
# the first sync of 10,000 files spent ~4 s creating loose objects and ~1 s in the `gc --auto` they set
# off. Smaller commits keep loose objects, which git folds into packs without a full repack (a pack per
# commit would pass gc.autoPackLimit every 50 commits, and each time repack everything).
BULK_ADD_FILES = 500
# Paths per `git add` of the files a .gitignore hides: the OS caps a command line (E2BIG).
ADD_PATHS_PER_CALL = 1000

Status = Literal["ok", "offline", "rejected", "diverged", "unrelated", "conflict"]

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
_RETRYABLE_PUSH = re.compile(
    r"fetch first|non-fast-forward|cannot lock ref|failed to update ref|"
    r"incorrect old value|but expected"
)
_NO_REMOTE_BRANCH = re.compile(r"couldn't find remote ref")
# A git killed on the remote's machine leaves its ref lock behind: only a person there can remove it.
_REMOTE_LOCK = re.compile(r"Unable to create '[^']+\.lock': File exists")
# The temp files git hands a merge driver, in the worktree root; a killed merge leaves them behind.
_GIT_MERGE_TEMP = ".merge_file_*"
# Where git's merge puts a file whose name a directory took on the other side: `<path>~<side>`.
_GIT_ASIDE = re.compile(r"(.+)~[^/]+")
# Git dirs whose merge drivers this process registered (see Store._prepare).
_DRIVERS_INSTALLED: set[Path] = set()


# In the meta dir while a merge runs: the HEAD it started from (see Store._merging).
_MERGE_MARKER = "merge.json"


@dataclasses.dataclass(frozen=True)
class RemoteOutcome:
    """What one exchange with one remote did.

    ``status``: ``ok`` (fetched, merged and pushed what there was), ``offline`` (unreachable; ``message``
    says why in one line), ``rejected`` (the remote refused the push), ``diverged`` (its history was
    rewritten; memsync stopped exchanging with it until ``resync``), ``unrelated`` (it holds another
    repository: nothing exchanged, ``resync`` refuses it unless told to adopt it), ``conflict`` (a merge
    could not be completed and was aborted). ``pushed``: commits were pushed; ``merged``: remote commits
    were integrated.
    """

    remote: str
    status: Status
    message: str
    pushed: bool = False
    merged: bool = False


# Told about each remote an exchange contacts: (remote, None) before, (remote, its outcome) after.
Progress = Callable[[str, RemoteOutcome | None], None]


@dataclasses.dataclass(frozen=True)
class LogRecord:
    """One commit of the store's history: who (``host`` from the ``Memsync-Host`` trailer, None when the
    commit has none), when (``date``, the author date, timezone-aware), what (``message`` without the
    trailer, ``files`` changed; empty for merge commits)."""

    sha: str
    host: str | None
    date: datetime
    message: str
    files: tuple[str, ...]


def local_remote_path(url: str) -> Path | None:
    """The directory of a remote whose URL is a local path or ``file://`` URL, else None (ssh, https).

    Used to watch a local remote's refs so a peer's push is seen at once. Never raises.
    """
    if url.startswith("file://"):
        return Path(unquote(urlparse(url).path))
    if "://" in url or re.match(r"^[^/]+:", url):
        return None
    return Path(url).expanduser()


class Store:
    """A memsync store: see the module docstring. Create with ``Store.open`` or ``Store.init_or_clone``."""

    def __init__(
        self,
        cfg: StoreConfig,
        host: str,
        identity: Identity,
        *,
        network_timeout_s: float = NETWORK_TIMEOUT_S,
        stop: threading.Event | None = None,
    ) -> None:
        """Bind to the store at ``cfg.path`` without checking or changing it. Enough for reading
        (``log``, ``files``, ``ahead_behind``, ``gc_auto``); use ``open``/``init_or_clone`` to write.
        ``network_timeout_s`` bounds every fetch, push and probe of a remote (seconds); once ``stop`` is
        set, every git command raises ``gitrun.Stopped`` (the daemon is stopping)."""
        self.cfg = cfg
        self.host = host
        self.identity = identity
        self.network_timeout_s = network_timeout_s
        self.stop = stop
        self._env = self._git_env()

    # ----------------------------------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        cfg: StoreConfig,
        host: str,
        identity: Identity,
        *,
        network_timeout_s: float = NETWORK_TIMEOUT_S,
        lock_wait_s: float = 10.0,
        stop: threading.Event | None = None,
    ) -> Store:
        """Open the existing store at ``cfg.path`` and make it ready for memsync (issue 4 "Store", I7, I8).

        Refuses a store whose format version is newer than this memsync's; removes stale git lock files
        when no git process works in the store (waits up to ``lock_wait_s`` seconds for a live one, then
        raises); rolls back an interrupted resync; aborts an interrupted merge/rebase/cherry-pick/revert
        (committed work is kept); sets the store's own git config (no hooks, no signing, no editor, this
        host's identity, fast-forward merges, no rename detection, byte-exact files); syncs the git
        remotes with ``cfg.remotes``; registers the merge drivers; gives a store made before store ids one
        (``storeid``). ``network_timeout_s`` and ``stop``: see ``Store``. Raises ``MemsyncError``.
        """
        store = cls(cfg, host, identity, network_timeout_s=network_timeout_s, stop=stop)
        if not (cfg.path / ".git").is_dir():
            raise MemsyncError(
                f"cannot open store {cfg.name!r}: {cfg.path} is not a memsync store. "
                f"Run `memsync init`, or fix stores.{cfg.name}.path in the config"
            )
        if not (store.meta_dir.is_dir() or (cfg.path / FORMAT_FILE).is_file()):
            # Someone else's repository: memsync would rewrite its config and commit everything in it.
            raise MemsyncError(
                f"cannot open store {cfg.name!r}: {cfg.path} is a git repository memsync did "
                f"not create. Point stores.{cfg.name}.path at a memsync store or an empty "
                "directory"
            )
        store._prepare(lock_wait_s)
        return store

    @classmethod
    def init_or_clone(
        cls,
        cfg: StoreConfig,
        identity: Identity,
        host: str | None = None,
        *,
        network_timeout_s: float = NETWORK_TIMEOUT_S,
    ) -> Store:
        """Create the store at ``cfg.path`` (or open it if it is already a store) and return it opened.

        With remotes: fetch the first one; if it has ``cfg.branch``, the store starts from its history;
        otherwise the store gets an initial commit (the format-version file ``.memsync/format``) which is
        pushed there. Without remotes: a new store with the initial commit. ``host`` defaults to this
        machine's host name. Raises ``MemsyncError`` when the directory exists and is not empty, or the
        first remote cannot be reached (the half-made store is removed so the command can be retried).
        """
        host = host or os.uname().nodename
        path = cfg.path
        if (path / ".git").is_dir():
            return cls.open(cfg, host, identity, network_timeout_s=network_timeout_s)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise MemsyncError(
                f"cannot create store {cfg.name!r} at {path}: the directory exists and is not "
                "empty. Choose another store path or empty it"
            )
        created = not path.exists()
        path.mkdir(parents=True, exist_ok=True)
        store = cls(cfg, host, identity, network_timeout_s=network_timeout_s)
        try:
            made = run_git(
                ["init", "-q", f"--initial-branch={cfg.branch}", str(path)],
                cwd=path,
                env=store._env,
                timeout=LOCAL_TIMEOUT_S,
            )
            if made.status != 0:
                raise MemsyncError(
                    f"cannot create store {cfg.name!r} at {path}: git init failed: {made.reason}. "
                    "Check that the directory is writable"
                )
            store._prepare(lock_wait_s=0.0)
            with store._repo() as repo:
                store._start_history(repo)
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
        return store

    def _start_history(self, repo: git.Repo) -> None:
        first = next(iter(self.cfg.remotes), None)
        head = None
        if first is not None:
            fetched = self._fetch(repo, first)
            if isinstance(fetched, _Result):
                raise MemsyncError(
                    f"cannot create store {self.cfg.name!r}: remote {first!r} "
                    f"({self.cfg.remotes[first]}) is unreachable: {fetched.reason}. "
                    "Check the URL and the network, then retry"
                )
            head = fetched
        if head is not None:
            self._check_remote_format(repo, head, first or "")
            self._git(repo, "reset", "-q", "--hard", head)
            self._state_set(first or "", seen=head)
            log.info("store %s: started from %s's history (%s)", self.cfg.name, first, head[:10])
            if not (self.worktree / FORMAT_FILE).is_file():  # a repository that memsync did not start
                atomic_write(self.worktree / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode())
                self._commit_all(repo, "memsync: store format version", {FORMAT_FILE})
            self._ensure_identity(repo)
            return
        atomic_write(self.worktree / FORMAT_FILE, f"{FORMAT_VERSION}\n".encode())
        atomic_write(self.worktree / STORE_ID_FILE, new_id())
        self._commit_all(repo, "memsync: new store", {FORMAT_FILE, STORE_ID_FILE})
        if first is not None:
            refused = self._push(repo, first)
            if refused is not None:
                reason = refused.reason if isinstance(refused, _Result) else refused
                log.warning(
                    "store %s: could not push the new store to %s yet: %s", self.cfg.name, first, reason
                )
            else:
                head = self._rev(repo, "HEAD")
                assert head is not None
                self._state_set(first, seen=head)
                local = local_remote_path(self.cfg.remotes[first])
                if (
                    local is not None
                ):  # a bare remote made with a HEAD for another branch: clone shows this one
                    point_local_head(local, self.cfg.branch)

    def _prepare(self, lock_wait_s: float) -> None:
        self.meta_dir.mkdir(parents=True, exist_ok=True)
        (self.meta_dir / "no-hooks").mkdir(exist_ok=True)
        (self.meta_dir / "no-excludes").touch(exist_ok=True)
        exclude = self.git_dir / "info" / "exclude"
        patterns = "".join(f"{pattern}\n" for pattern in (*IGNORED_NAMES, _GIT_MERGE_TEMP)).encode()
        if not exclude.exists() or exclude.read_bytes() != patterns:
            atomic_write(exclude, patterns)
        self._recover_locks(lock_wait_s)
        with self._repo() as repo:
            self._recover_interrupted(repo)
            current = self._configure(repo)
            self._check_format()
        # Register on the first open in this process, and again whenever the registration is gone, so a
        # daemon that opens its store every cycle does not rewrite the git config every cycle.
        registered = (
            all(current.get(f"merge.memsync-{kind}.driver") == driver_command(kind) for kind in KINDS)
            and (self.git_dir / "info" / "attributes").exists()
        )
        if self.git_dir not in _DRIVERS_INSTALLED or not registered:
            try:
                install_merge_drivers(self.git_dir)
            except (OSError, subprocess.SubprocessError) as exc:
                said = getattr(exc, "stderr", None) or b""
                why = said.decode("utf-8", "replace").strip().splitlines()[-1:] or [str(exc)]
                raise MemsyncError(
                    f"cannot open store {self.cfg.name!r}: registering the merge drivers "
                    f"failed ({why[0]}). Check that {self.git_dir} is writable"
                ) from exc
            _DRIVERS_INSTALLED.add(self.git_dir)
        if not self._on_branch():
            with self._repo() as repo:  # after the drivers: returning may merge
                # What memsync wrote and did not commit yet must be committed first: commit_all does.
                if not self._changes(repo):
                    self._ensure_branch(repo, ())

    def _git_env(self) -> dict[str, str]:
        name, email = self.identity.name, self.identity.email
        return {
            **noninteractive_env(self.network_timeout_s),
            "GIT_EDITOR": "true",
            "GIT_MERGE_AUTOEDIT": "no",
            "GIT_OPTIONAL_LOCKS": "0",
            # A caller running inside a git hook passes GIT_DIR & co.; pin them to the store, and drop
            # inherited `git -c` settings, so git never acts on another repository or another config.
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.worktree),
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_OBJECT_DIRECTORY": str(self.git_dir / "objects"),
            "GIT_CONFIG_PARAMETERS": "",
            "GIT_CONFIG_COUNT": "0",
            # Environment identity outranks user.name/user.email: pin it so inherited values never win.
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }

    def _configure(self, repo: git.Repo) -> dict[str, str]:
        """Set the store's own git config where it differs; returns the local config as it was read."""
        wanted = {
            "core.hookspath": str(self.meta_dir / "no-hooks"),
            "core.excludesfile": str(self.meta_dir / "no-excludes"),
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
            "user.name": self.identity.name,
            "user.email": self.identity.email,
        }
        for name, url in self.cfg.remotes.items():
            wanted[f"remote.{name}.url"] = url
            branch = self.cfg.branch
            wanted[f"remote.{name}.fetch"] = f"+refs/heads/{branch}:refs/remotes/{name}/{branch}"
        current: dict[str, str] = {}
        listing = self._run(repo, "config", "--local", "--list", "-z")
        for item in listing.out.split("\0"):
            key, _, value = item.partition("\n")
            if key:
                current[key.lower()] = value
        known = {key.split(".")[1] for key in current if key.startswith("remote.") and key.count(".") >= 2}
        for stale in sorted(known - set(self.cfg.remotes)):
            self._git(repo, "remote", "remove", stale)
        for key, value in wanted.items():
            if current.get(key.lower()) != value:
                self._git(repo, "config", "--local", "--replace-all", key, value)
        return current

    def _on_branch(self) -> bool:
        """True when HEAD is the store's branch (read without starting git: the common case)."""
        try:
            return (self.git_dir / "HEAD").read_text().strip() == f"ref: refs/heads/{self.cfg.branch}"
        except OSError:
            return False

    def _ensure_branch(self, repo: git.Repo, written: Collection[str]) -> None:
        """Put HEAD back on the store's branch. Someone who inspected the store with git may have left it
        on a detached HEAD or another branch: what memsync wrote (``written``, see ``commit_all``) and
        committed there since is committed and merged into the branch, never abandoned (I1), and never
        taken for a rewritten remote."""
        if self._on_branch():
            return
        branch = self.cfg.branch
        stray = self._rev(repo, "HEAD")
        if stray is not None:
            self._commit_all(repo, "memsync: local changes", written)
            stray = self._rev(repo, "HEAD")
        if self._rev(repo, f"refs/heads/{branch}") is not None:
            result = self._run(repo, "checkout", "-q", branch)
        elif stray is None:
            result = self._run(repo, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
        else:
            result = self._run(repo, "checkout", "-q", "-b", branch)
        if result.status != 0:
            raise MemsyncError(
                f"cannot open store {self.cfg.name!r}: switching it to branch {branch!r} "
                f"failed: {result.reason}. Check {self.worktree} with git"
            )
        if stray is None:
            return
        merged = self._integrate(repo, stray, f"the commits made off branch {branch}")
        if isinstance(merged, str):
            raise MemsyncError(f"store {self.cfg.name!r}: {merged}. Check {self.worktree} with git")
        log.warning(
            "store %s: HEAD was not on branch %s (the config names a new branch, or git was used "
            "in the store by hand); switched to it%s",
            self.cfg.name,
            branch,
            ", the commits made off it merged" if merged else "",
        )

    def _check_format(self) -> None:
        path = self.worktree / FORMAT_FILE
        try:
            text = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            raise MemsyncError(
                f"cannot open store {self.cfg.name!r}: {path} is unreadable ({exc}). Restore it with git"
            ) from exc
        self._refuse_format(text, f"store {self.cfg.name!r} at {self.worktree}")

    def _check_remote_format(self, repo: git.Repo, commit: str, remote: str) -> None:
        shown = self._run(repo, "show", f"{commit}:{FORMAT_FILE}")
        if shown.status == 0:
            self._refuse_format(shown.out.strip(), f"remote {remote!r} of store {self.cfg.name!r}")

    @staticmethod
    def _refuse_format(text: str, what: str) -> None:
        if not text.isdigit():
            raise MemsyncError(
                f"cannot use {what}: its format version {text!r} is not a number. "
                f"Restore {FORMAT_FILE} with git"
            )
        if int(text) > FORMAT_VERSION:
            raise MemsyncError(
                f"cannot use {what}: it uses store format {text}, this memsync supports up to "
                f"{FORMAT_VERSION}. Upgrade memsync on this machine"
            )

    # ---------------------------------------------------------------------------------------- recovery

    def _lock_files(self) -> list[Path]:
        found = [self.git_dir / name for name in _TOP_LOCKS if (self.git_dir / name).exists()]
        refs = self.git_dir / "refs"
        if refs.is_dir():
            found.extend(refs.rglob("*.lock"))
        return found

    def _live_git_pid(self) -> int | None:
        """A running git process working in this store (by /proc cwd or command line), else None."""
        proc = Path("/proc")
        worktree = str(self.worktree.resolve())  # /proc shows resolved paths
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
                or str(self.worktree) in cmdline
            ):
                return int(entry.name)
        return None

    def _recover_locks(self, wait_s: float) -> None:
        """Remove lock files left by a killed git (DESIGN I7, field case 6); wait for a live git."""
        deadline = time.monotonic() + wait_s
        while locks := self._lock_files():
            pid = self._live_git_pid()
            if pid is None:
                for lock in locks:
                    lock.unlink(missing_ok=True)
                    log.warning(
                        "store %s: removed stale %s (no git process is running in the store)",
                        self.cfg.name,
                        lock.relative_to(self.worktree),
                    )
                return
            if time.monotonic() >= deadline:
                raise MemsyncError(
                    f"store {self.cfg.name!r} is busy: git process {pid} is working in "
                    f"{self.worktree} ({locks[0].name} held). Wait for it to finish and retry"
                )
            time.sleep(0.1)

    def _recover_interrupted(self, repo: git.Repo) -> None:
        gd = self.git_dir
        # git's temp files for a merge driver (%A, %B, %O): garbage once no git runs in the store.
        for leftover in self.worktree.glob(_GIT_MERGE_TEMP):
            leftover.unlink(missing_ok=True)
        marker = self.meta_dir / "resync.json"
        if marker.exists():
            before = json.loads(marker.read_text())["before"]
            self._abort_merges(repo)
            self._git(repo, "reset", "-q", "--hard", before)
            marker.unlink()
            log.warning(
                "store %s: an interrupted resync was rolled back; run `memsync resync` again", self.cfg.name
            )
            return
        merging = self.meta_dir / _MERGE_MARKER
        if merging.exists():
            self._undo_unfinished_merge(repo, json.loads(merging.read_text())["before"])
            merging.unlink()
        self._abort_merges(repo)
        if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
            aborted = self._run(repo, "rebase", "--abort")
            if aborted.status != 0:
                self._git(repo, "am", "--abort")
            log.warning("store %s: aborted an interrupted rebase", self.cfg.name)
        for head, command in (("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert")):
            if (gd / head).exists():
                self._git(repo, command, "--abort")
                log.warning("store %s: aborted an interrupted %s", self.cfg.name, command)

    def _abort_merges(self, repo: git.Repo) -> None:
        gd = self.git_dir
        if (gd / "MERGE_HEAD").exists():
            if self._run(repo, "merge", "--abort").status != 0:
                self._git(repo, "reset", "-q", "--merge")
            log.warning("store %s: aborted an interrupted merge (committed work kept)", self.cfg.name)
        elif (gd / "SQUASH_MSG").exists() or self._unmerged(repo):
            # A squash merge (resync) or a conflicted index without MERGE_HEAD: back to the last commit.
            self._git(repo, "reset", "-q", "--merge")
            (gd / "SQUASH_MSG").unlink(missing_ok=True)
            log.warning("store %s: discarded an interrupted merge (committed work kept)", self.cfg.name)

    # --------------------------------------------------------------------------------------- properties

    @property
    def worktree(self) -> Path:
        """The store's working tree (``cfg.path``)."""
        return self.cfg.path

    @property
    def git_dir(self) -> Path:
        """The store's git directory (``<worktree>/.git``)."""
        return self.cfg.path / ".git"

    @property
    def meta_dir(self) -> Path:
        """memsync's own directory inside the git dir (state, status, locks); never part of history."""
        return self.git_dir / "memsync"

    # ------------------------------------------------------------------------------------------ commits

    def commit_all(self, message: str, written: Collection[str]) -> str | None:
        """Commit the working-tree changes at the store paths memsync wrote since its last commit
        (``written``: ``SyncState.written``, or the paths a caller just wrote itself), if there are any.

        Every other change found (a file a failed or killed git step left half-written, an edit by hand)
        is put back from the last commit and reported, never committed (DESIGN "Hostile input", I2).
        ``message`` gets a ``Memsync-Host: <host>`` trailer. Returns the new commit's sha, or None when
        there was nothing to commit. Stale git lock files are removed first; a live git process in the
        store is waited for up to ``OPERATION_LOCK_WAIT_S`` seconds. Files memsync never stores (editor
        and temp files, ``snapshot.md``) are left out, even when a ``.gitignore`` would hide others.
        Raises ``MemsyncError`` when git fails (e.g. disk full: nothing is lost, the caller retries with
        the same ``written``) or the store stays busy.
        """
        self._recover_locks(OPERATION_LOCK_WAIT_S)
        with self._repo() as repo:
            self._ensure_branch(repo, written)
            return self._commit_all(repo, message, written)

    def restore(self, keep: Collection[str] = ()) -> None:
        """Put back from the last commit every working-tree change of the store not at a path in ``keep``
        (the paths memsync wrote since that commit, ``SyncState.written``), reporting what it put back:
        run before publish reads the store after a crash or a failure, so nothing git left half-written
        is read, appended to or delivered (DESIGN "Hostile input", I2). Raises ``MemsyncError`` when git
        fails (a disk still full): the working tree is then not the last commit, and must not be used."""
        self._recover_locks(OPERATION_LOCK_WAIT_S)
        with self._repo() as repo:
            self._put_back_strays(repo, keep)

    def _put_back_strays(self, repo: git.Repo, keep: Collection[str]) -> list[Change]:
        """The working tree's changes (``_changes``) at paths in ``keep``, after putting back (and
        reporting) all others."""
        changes = self._changes(repo)
        strays = [c for c in changes if c.path not in keep]
        if strays:
            put_back(self.worktree, strays, functools.partial(self._git, repo), ADD_PATHS_PER_CALL)
            more = f" and {len(strays) - 3} more" if len(strays) > 3 else ""
            log.warning(
                "store %s: put back %s%s as the last commit has it: memsync did not write it (a failed "
                "or killed git step, or an edit by hand), so it is never committed",
                self.cfg.name,
                ", ".join(change.path for change in strays[:3]),
                more,
            )
        return [change for change in changes if change.path in keep]

    def _changes(self, repo: git.Repo) -> list[Change]:
        """How the working tree differs from the last commit, but for untracked files memsync never
        stores (temp files, ``snapshot.md``)."""
        changes = parse_status(self._git(repo, *STATUS_ARGS).out)
        return [change for change in changes if not (change.untracked and _never_stored(change.path))]

    def _commit_all(self, repo: git.Repo, message: str, written: Collection[str]) -> str | None:
        # One `git status` decides; the common idle case ends here. A .gitignore in the store (peer
        # content) must not hide memory from commits: what it hides is added by force, except what
        # memsync never stores (editor and temp files, snapshot.md; see info/exclude).
        mine = self._put_back_strays(repo, written)
        if not mine:
            return None
        hidden = [change.path for change in mine if change.hidden]
        bulk = ["-c", "core.bigFileThreshold=1"] if len(mine) >= BULK_ADD_FILES else []
        self._git(repo, *bulk, "add", "-A", "--", ".")
        for start in range(0, len(hidden), ADD_PATHS_PER_CALL):
            self._git(repo, *bulk, "add", "-f", "--", *hidden[start : start + ADD_PATHS_PER_CALL])
        committed = self._run(repo, "commit", "-q", "--no-verify", "-m", self._message(message))
        if committed.status != 0:
            if self._run(repo, "diff", "--cached", "--quiet", "--no-ext-diff").status == 0:
                return None  # nothing to commit
            raise MemsyncError(
                f"store {self.cfg.name!r}: `git commit` failed: {self._why(committed)}. "
                f"Check {self.worktree} (run `memsync status`)"
            )
        sha = self._rev(repo, "HEAD")
        assert sha is not None
        return sha

    def ensure_identity(self) -> None:
        """Give a store made before store ids the id its peers derive alike (``storeid.derived_id``),
        committed; nothing when it has one (or its history has several roots). Call it with nothing
        uncommitted that memsync wrote (after ``commit_all``): other changes are put back. Raises
        ``MemsyncError`` when git fails."""
        with self._repo() as repo:
            self._ensure_identity(repo)

    def _ensure_identity(self, repo: git.Repo) -> None:
        head = self._rev(repo, "HEAD")
        if head is None or self._store_id(repo, head) is not None:
            return
        derived = derived_id(self._git(repo, "rev-list", "--max-parents=0", "HEAD").out.split())
        if derived is not None:
            atomic_write(self.worktree / STORE_ID_FILE, derived)
            self._commit_all(repo, "memsync: store id", {STORE_ID_FILE})

    def _store_id(self, repo: git.Repo, commit: str) -> str | None:
        """The store id commit ``commit`` carries (``storeid.STORE_ID_FILE``), None when it has none."""
        shown = self._run(repo, "show", f"{commit}:{STORE_ID_FILE}")
        return (shown.out.strip() or None) if shown.status == 0 else None

    def _message(self, message: str) -> str:
        return f"{message.rstrip()}\n\n{HOST_TRAILER}: {self.host}\n"

    def head(self) -> str | None:
        """The sha of the store's current commit (None before the first commit)."""
        with self._repo() as repo:
            return self._rev(repo, "HEAD")

    def files(self) -> list[str]:
        """Every file in the store's current commit (POSIX paths relative to the worktree, sorted)."""
        with self._repo() as repo:
            out = self._git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").out
        return sorted(name for name in out.split("\0") if name)

    # ----------------------------------------------------------------------------------------- exchange

    def exchange(
        self, remotes: Iterable[str] | None = None, progress: Progress | None = None
    ) -> list[RemoteOutcome]:
        """Exchange with each remote (default: all of ``cfg.remotes``, in config order): fetch, merge with
        the drivers (fast-forward where possible), push; one ``RemoteOutcome`` per remote.

        The exchange takes the last commit: commit first (``commit_all``). A rejected push is retried
        after a new fetch and merge (up to 3 attempts); never forced. A remote whose history no longer
        contains the last head memsync saw there reports ``diverged`` and is left alone until
        ``resync``; one whose history is unrelated to the store's (no commit in common, another store
        id) reports ``unrelated``, and nothing is merged from it or pushed to it, unless this is the
        first exchange with it and it holds another memsync store: that one is joined (a second machine
        with memory of its own given the first one's remote; ``_join``). A failed merge or
        fast-forward is undone, worktree included. ``progress(remote, None)`` is called as each remote
        is contacted and ``progress(remote, outcome)`` after; without it each outcome is logged.
        Network problems are outcomes (``offline``), not exceptions; raises ``MemsyncError`` only when
        the store itself is broken, e.g. a failed merge cannot be undone on a full disk (the worktree
        is then not the last commit: nothing may be delivered from it).
        """
        names = list(self.cfg.remotes) if remotes is None else list(remotes)
        outcomes = []
        self._recover_locks(OPERATION_LOCK_WAIT_S)
        with self._repo() as repo:
            self._ensure_branch(repo, ())
            for name in names:
                if name not in self.cfg.remotes:
                    raise MemsyncError(
                        f"cannot exchange with {name!r}: store {self.cfg.name!r} has no such "
                        "remote. Check the config"
                    )
                if progress is not None:
                    progress(name, None)
                try:
                    outcome = self._exchange_one(repo, name)
                except MemsyncError as exc:
                    # A git step failed mid-merge: leave the store as it was before the merge.
                    self._abort_merges(repo)
                    self._put_back_strays(repo, ())
                    outcome = RemoteOutcome(name, "conflict", str(exc))
                if progress is not None:
                    progress(name, outcome)
                else:
                    log.log(
                        logging.INFO if outcome.status == "ok" else logging.WARNING,
                        "store %s: %s %s: %s",
                        self.cfg.name,
                        name,
                        outcome.status,
                        outcome.message,
                    )
                outcomes.append(outcome)
        return outcomes

    def _exchange_one(self, repo: git.Repo, remote: str) -> RemoteOutcome:
        merged = False
        refused: str | _Result | None = None
        for _attempt in range(PUSH_ATTEMPTS):
            fetched = self._fetch(repo, remote)
            if isinstance(fetched, _Result):
                return RemoteOutcome(remote, "offline", self._unreachable(remote, fetched), merged=merged)
            head = self._rev(repo, "HEAD")
            seen = self._state_seen(remote)
            if fetched is not None and fetched != seen:
                known = seen is not None and self._is_ancestor(repo, seen, fetched)
                if not known and head is not None:
                    unrelated = self._unrelated(repo, remote, head, fetched)
                    if unrelated is not None and (seen is not None or not self._is_store(repo, fetched)):
                        return RemoteOutcome(remote, "unrelated", unrelated, merged=merged)
                    if unrelated is not None:
                        self._join(repo, remote, head, fetched)
                if seen is not None and not known:
                    return RemoteOutcome(
                        remote,
                        "diverged",
                        (
                            f"the history of {remote} was rewritten (it no longer contains {seen[:10]}); "
                            f"memsync stopped exchanging with it. Run `memsync resync {remote}` to adopt its "
                            "history (if another machine ran `memsync purge`, what it removed stays removed "
                            "here too)"
                        ),
                        merged=merged,
                    )
                try:
                    self._check_remote_format(repo, fetched, remote)
                except MemsyncError as exc:
                    return RemoteOutcome(remote, "conflict", str(exc), merged=merged)
            if fetched is not None and fetched != head:
                problem = self._integrate(repo, fetched, remote)
                if isinstance(problem, str):
                    return RemoteOutcome(remote, "conflict", problem, merged=merged)
                merged = merged or problem
                head = self._rev(repo, "HEAD")
            if fetched is not None and fetched != seen:
                self._state_set(remote, seen=fetched)
            if fetched is not None and head == fetched:
                return RemoteOutcome(remote, "ok", "merged" if merged else "up to date", merged=merged)
            refused = self._push(repo, remote)
            if refused is None:
                assert head is not None
                self._state_set(remote, seen=head)
                return RemoteOutcome(
                    remote, "ok", "merged and pushed" if merged else "pushed", pushed=True, merged=merged
                )
            if isinstance(refused, _Result):
                return RemoteOutcome(remote, "offline", self._unreachable(remote, refused), merged=merged)
            if not _RETRYABLE_PUSH.search(refused):
                return RemoteOutcome(
                    remote, "rejected", f"{remote} refused the push: {refused}", merged=merged
                )
            log.info("store %s: push to %s rejected (%s); fetching again", self.cfg.name, remote, refused)
        return RemoteOutcome(
            remote,
            "rejected",
            f"{remote} refused {PUSH_ATTEMPTS} pushes in a row (last: {refused}); will retry",
            merged=merged,
        )

    def _unrelated(self, repo: git.Repo, remote: str, head: str, theirs: str) -> str | None:
        """Why the history ``theirs`` of ``remote`` is not this store's (``storeid``), None when it is:
        the two share a commit, or carry the same store id."""
        if self._run(repo, "merge-base", head, theirs).status == 0:
            return None
        ours, their_id = self._store_id(repo, head), self._store_id(repo, theirs)
        if ours is not None and ours == their_id:
            return None
        return unrelated_message(remote, self.cfg.remotes[remote], ours, their_id)

    def _is_store(self, repo: git.Repo, commit: str) -> bool:
        """True when ``commit`` is a memsync store's (it has the format file)."""
        return self._run(repo, "cat-file", "-e", f"{commit}:{FORMAT_FILE}").status == 0

    def _join(self, repo: git.Repo, remote: str, head: str, theirs: str) -> None:
        """Before the first merge with ``remote``, another memsync store made apart from this one (a second
        machine that used memsync alone, then was given the first one's remote): this store takes its
        store id, so both sides add the same id file and the merge joins the two histories into one store."""
        their_id = self._store_id(repo, theirs)
        if their_id is not None and their_id != self._store_id(repo, head):
            atomic_write(self.worktree / STORE_ID_FILE, f"{their_id}\n".encode())
            self._commit_all(
                repo, f"memsync: store id of {remote}, whose history this store joins", {STORE_ID_FILE}
            )
        log.info(
            "store %s: joining the history of %s, another memsync store, at first contact",
            self.cfg.name,
            remote,
        )

    def unrelated(self, remote: str) -> str | None:
        """Fetch ``remote`` and say why its history is unrelated to the store's (no commit in common,
        another store id), None when it is related or empty. Raises ``MemsyncError`` when the remote is
        unknown or cannot be reached."""
        theirs = self.fetch(remote)
        with self._repo() as repo:
            head = self._rev(repo, "HEAD")
            if theirs is None or head is None:
                return None
            return self._unrelated(repo, remote, head, theirs)

    def probe(self, remote: str) -> str | None:
        """Ask ``remote`` for its branch head (``git ls-remote``, within ``network_timeout_s``) without
        touching the store: None when it answers, else why not, in one line. Lets a daemon wait for a
        dead remote to answer again without holding the store meanwhile."""
        with self._repo() as repo:
            asked = self._run(
                repo,
                "ls-remote",
                "--heads",
                remote,
                f"refs/heads/{self.cfg.branch}",
                timeout=self.network_timeout_s,
            )
        return None if asked.status == 0 else self._unreachable(remote, asked)

    def _unreachable(self, remote: str, result: _Result) -> str:
        """One line for a fetch, push or probe of ``remote`` that failed with ``result``."""
        if result.timed_out is not None:
            return (
                f"cannot reach {remote} ({self.cfg.remotes[remote]}): no answer within "
                f"{result.timed_out:g} s (network_timeout_s in the config)"
            )
        if self._full(result) is not None:
            return f"cannot fetch from {remote}: {self._why(result)}"
        return f"cannot reach {remote}: {result.reason}"

    def _full(self, result: _Result) -> Path | None:
        """Where a disk is full when ``result`` failed for want of space (git says so, or the disk under
        the working tree or the objects has next to nothing free), else None."""
        for place in (self.worktree, self.git_dir / "objects"):
            if nearly_full(place):
                return place
        return self.worktree if git_says_full(result.err) else None

    def _why(self, result: _Result) -> str:
        """The reason of a failed git step; a full disk named the same way everywhere (``diskfull``)."""
        full = self._full(result)
        return result.reason if full is None else named_by_git(result.err, full)

    def _fetch(self, repo: git.Repo, remote: str) -> str | _Result | None:
        """Fetch ``remote``'s branch: its head sha, None when it has no such branch, a failed _Result."""
        branch = self.cfg.branch
        tracking = f"refs/remotes/{remote}/{branch}"
        result = self._run(
            repo,
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote,
            f"+refs/heads/{branch}:{tracking}",
            timeout=self.network_timeout_s,
        )
        if result.status != 0:
            if _NO_REMOTE_BRANCH.search(result.err):
                self._run(repo, "update-ref", "-d", tracking)
                return None
            return result
        return self._rev(repo, tracking)

    def _push(self, repo: git.Repo, remote: str) -> str | _Result | None:
        """Push the branch (never forced): None when done, else the rejection text or a failed _Result."""
        branch = self.cfg.branch
        result = self._run(
            repo,
            "push",
            "--porcelain",
            "--no-verify",
            remote,
            f"refs/heads/{branch}:refs/heads/{branch}",
            timeout=self.network_timeout_s,
        )
        if result.status == 0:
            return None
        for line in result.out.splitlines():
            if line.startswith("!"):
                refusal = line.split("\t")[-1].strip()
                lock = _REMOTE_LOCK.search(result.err)
                return f"{refusal}: {lock.group(0)} (remove it if no git runs there)" if lock else refusal
        return result

    def _integrate(self, repo: git.Repo, theirs: str, remote: str) -> bool | str:
        """Bring ``theirs`` into the branch: False if already contained, True once merged, or a problem."""
        head = self._rev(repo, "HEAD")
        if head is None:
            self._git(repo, "reset", "-q", "--hard", theirs)
            return True
        if self._is_ancestor(repo, theirs, head):
            return False
        if self._is_ancestor(repo, head, theirs):
            with self._merging(repo, head):
                forwarded = self._run(repo, "merge", "-q", "--ff-only", theirs)
            if forwarded.status != 0:
                return f"fast-forward to {remote} failed ({self._why(forwarded)}); undone, will retry"
            return True
        message = self._message(f"memsync: merge {remote}")
        with self._merging(repo, head):
            result = self._run(
                repo,
                "merge",
                "-q",
                "--no-edit",
                "--no-verify",
                "--allow-unrelated-histories",
                "-m",
                message,
                theirs,
            )
            if result.status == 0:
                return True
            problem = self._settle_conflicts(repo, result)
            if problem is not None:
                problem = problem if self._full(result) is None else self._why(result)
                return (
                    f"merge with {remote} could not complete ({problem}); aborted, both sides kept; "
                    "will retry"
                )
            self._git(repo, "commit", "-q", "--no-verify", "-m", message)
            return True

    @contextmanager
    def _merging(self, repo: git.Repo, before: str) -> Iterator[None]:
        """Around a merge or fast-forward into ``before`` (a clean worktree: the cycle committed everything
        first): one that git left written into worktree or index but never committed (failed, on a full
        disk say, or killed while it wrote thousands of files, before it recorded MERGE_HEAD) is undone,
        now or, after a kill, by the next ``open``. Otherwise those files (a torn one among them) would be
        committed as local changes without the merge's parent, and the next merge would merge the same
        content again over an older base (DESIGN I2, I7)."""
        marker = self.meta_dir / _MERGE_MARKER
        atomic_write(marker, json.dumps({"before": before}).encode())
        try:
            yield
        finally:
            self._undo_unfinished_merge(repo, before)
            marker.unlink(missing_ok=True)

    def _undo_unfinished_merge(self, repo: git.Repo, before: str) -> None:
        """Back to ``before`` when HEAD is still there but a merge changed worktree or index (see
        ``_merging``); a merge that git stopped with MERGE_HEAD is aborted first."""
        if self._rev(repo, "HEAD") != before:
            return
        self._abort_merges(repo)
        if self._run(repo, "diff", "--quiet", "--no-ext-diff", "HEAD").status != 0:
            self._git(repo, "reset", "-q", "--hard", before)
            log.warning(
                "store %s: undid a merge that was written but not committed; it runs again", self.cfg.name
            )
        self._put_back_strays(repo, ())  # the files it added: reset leaves what the index never had

    def _settle_conflicts(self, repo: git.Repo, result: _Result) -> str | None:
        """After a failed merge: settle what memsync settles (``_settle_unmerged``); anything else aborts
        the merge. Returns None when the merge can be committed, else the problem (merge aborted)."""
        if not (self.git_dir / "MERGE_HEAD").exists():
            return result.reason
        problem = self._settle_unmerged(repo, result, "MERGE_HEAD")
        if problem is not None:
            self._abort_merge(repo)
        return problem

    def _settle_unmerged(self, repo: git.Repo, result: _Result, theirs: str) -> str | None:
        """Settle, in index and worktree, the paths that merging ``theirs`` into HEAD left unmerged: a file
        that met a directory of the same name is moved aside (``_move_aside``); of a file deleted on one
        side and changed on the other, the change is kept (DESIGN "Deletions"). Returns None when all are
        settled, else the problem (``result`` is the failed merge's); the caller then discards the merge."""
        unmerged = self._unmerged(repo)
        if not unmerged:
            return result.reason
        names = {name for name in self._git(repo, "ls-files", "-z").out.split("\0") if name}
        aside = self._moved_by_git(repo, unmerged, names, theirs)
        others = sorted(
            path
            for path, stages in unmerged.items()
            if path not in aside and set(stages) not in ({1, 2}, {1, 3})
        )
        if others:
            more = f" and {len(others) - 1} more" if len(others) > 1 else ""
            return f"{others[0]}{more} could not be merged: a merge driver failed"
        for path, stages in sorted(unmerged.items()):
            if path in aside:
                continue
            self._git(repo, "checkout", "--ours" if 2 in stages else "--theirs", "--", path)
            self._git(repo, "add", "--", path)
            log.info(
                "store %s: %s was deleted on one side and changed on the other; kept the change",
                self.cfg.name,
                path,
            )
        if aside:
            self._move_aside(repo, aside, unmerged, names - set(aside))
        return None

    def _moved_by_git(
        self, repo: git.Repo, unmerged: dict[str, dict[int, tuple[str, str]]], names: set[str], theirs: str
    ) -> dict[str, str]:
        """The unmerged paths that are a file git moved out of a directory's way (``<path>~<side>``, a
        name neither side has), each mapped to the path the file had, which a directory among the index's
        ``names`` now holds."""
        moved = {}
        for path, stages in unmerged.items():
            had = _GIT_ASIDE.fullmatch(path)
            if (
                had is None
                or set(stages) not in ({2}, {3}, {1, 2}, {1, 3})
                or not any(name.startswith(had[1] + "/") for name in names)
            ):
                continue
            if all(
                self._run(repo, "cat-file", "-e", f"{side}:{path}").status != 0 for side in ("HEAD", theirs)
            ):
                moved[path] = had[1]
        return moved

    def _move_aside(
        self,
        repo: git.Repo,
        moved: dict[str, str],
        unmerged: dict[str, dict[int, tuple[str, str]]],
        names: set[str],
    ) -> None:
        """Put each file git moved out of a directory's way (``moved``: git's name -> the file's path) at
        ``layout.aside_name`` of its path, the first such name not among the merge result's ``names`` (nor
        a directory of them): nothing is lost, and whichever peer merges, the tree is the same (DESIGN I1,
        I4). The content is the side that has the file (deleted by the other side too: the changed one)."""
        taken = names | {parent.as_posix() for name in names for parent in PurePosixPath(name).parents}
        for path, had in sorted(moved.items(), key=lambda item: (item[1], item[0])):
            stages = unmerged[path]
            mode, sha = stages[2] if 2 in stages else stages[3]
            attempt = 1
            while aside_name(had, attempt) in taken:
                attempt += 1
            name = aside_name(had, attempt)
            taken.add(name)
            self._git(repo, "update-index", "--force-remove", "--", path)
            (self.worktree / path).unlink(missing_ok=True)
            self._git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{sha},{name}")
            self._git(repo, "checkout-index", "-f", "--", name)
            log.warning(
                "store %s: %s is a file on one side and a directory on the other; the directory "
                "keeps the name, the file is now %s",
                self.cfg.name,
                had,
                name,
            )

    def _abort_merge(self, repo: git.Repo) -> None:
        if self._run(repo, "merge", "--abort").status != 0:
            self._git(repo, "reset", "-q", "--merge")

    def _unmerged(self, repo: git.Repo) -> dict[str, dict[int, tuple[str, str]]]:
        """Unmerged path -> {stage: (mode, blob sha)} (stage 1 base, 2 ours, 3 theirs)."""
        stages: dict[str, dict[int, tuple[str, str]]] = {}
        for item in self._git(repo, "ls-files", "-u", "-z").out.split("\0"):
            if not item:
                continue
            meta, _, path = item.partition("\t")
            mode, sha, stage = meta.split()
            stages.setdefault(path, {})[int(stage)] = (mode, sha)
        return stages

    def fetch(self, remote: str) -> str | None:
        """Fetch ``remote``'s branch into its tracking ref (``refs/remotes/<remote>/<branch>``) and merge
        nothing: returns the remote's head sha, None when it has no such branch. `memsync resync` reads
        the purge records of a rewritten remote this way before adopting it. Raises ``MemsyncError`` when
        the remote is unknown or cannot be reached."""
        if remote not in self.cfg.remotes:
            raise MemsyncError(
                f"cannot fetch from {remote!r}: store {self.cfg.name!r} has no such remote. Check the config"
            )
        self._recover_locks(OPERATION_LOCK_WAIT_S)
        with self._repo() as repo:
            fetched = self._fetch(repo, remote)
        if isinstance(fetched, _Result):
            raise MemsyncError(f"cannot fetch from {remote!r}: {fetched.reason}. Check the network and retry")
        return fetched

    def resync(self, remote: str, *, adopt_unrelated: bool = False) -> RemoteOutcome:
        """Adopt ``remote``'s rewritten history: the branch is reset to the remote's head, then the local
        memory is re-applied on top through the merge drivers as one commit (base: the last common
        commit, so the remote's deletions of old content are honoured and nothing added locally is lost),
        the new remote head is recorded, and the result is pushed. The old branch head stays reachable
        as ``refs/memsync/before-resync/<remote>``. Interrupted, it is rolled back on the next open. When
        one history contains the other there is nothing to rewrite: the remote is simply trusted again
        and a normal exchange follows (commits the remote dropped are pushed again: nothing is lost).
        A remote rewritten by `memsync purge` needs ``purge.adopt_purge_records`` first (``cycle.resync``
        calls it), or the lines it purged come back with the re-applied local memory. A remote whose
        history is unrelated to the store's (``storeid``) is refused unless ``adopt_unrelated``; adopted,
        the store takes its store id. Commit first (``commit_all``): the resync takes the last commit.
        Raises ``MemsyncError`` when the remote is unknown, unreachable or unrelated (and not adopted),
        or the re-apply hits a conflict no driver resolves (the branch is then back where it was).
        """
        if remote not in self.cfg.remotes:
            raise MemsyncError(
                f"cannot resync with {remote!r}: store {self.cfg.name!r} has no such remote. Check the config"
            )
        self._recover_locks(OPERATION_LOCK_WAIT_S)
        with self._repo() as repo:
            self._ensure_branch(repo, ())
            fetched = self._fetch(repo, remote)
            if isinstance(fetched, _Result):
                raise MemsyncError(
                    f"cannot resync with {remote!r}: {self._unreachable(remote, fetched)}. Check the "
                    "network and retry"
                )
            local = self._rev(repo, "HEAD")
            if (
                fetched is not None
                and local is not None
                and not (self._is_ancestor(repo, local, fetched) or self._is_ancestor(repo, fetched, local))
            ):
                unrelated = None if adopt_unrelated else self._unrelated(repo, remote, local, fetched)
                if unrelated is not None:
                    raise MemsyncError(f"cannot resync with {remote!r}: {unrelated}")
                self._reapply(repo, remote, local, fetched)
            self._state_set(remote, seen=None)
            outcome = self._exchange_one(repo, remote)
            if self._rev(repo, "HEAD") != local:
                # The re-apply (or the exchange) brought the remote's content: callers deliver on `merged`.
                outcome = dataclasses.replace(outcome, merged=True)
        log.info("store %s: resync with %s: %s", self.cfg.name, remote, outcome.message)
        return outcome

    def _reapply(self, repo: git.Repo, remote: str, local: str, theirs: str) -> None:
        marker = self.meta_dir / "resync.json"
        self._git(repo, "update-ref", f"refs/memsync/before-resync/{remote}", local)
        atomic_write(marker, json.dumps({"before": local, "remote": remote}).encode())
        self._git(repo, "reset", "-q", "--hard", theirs)
        result = self._run(repo, "merge", "-q", "--squash", "--allow-unrelated-histories", local)
        if result.status != 0:
            problem = self._settle_unmerged(repo, result, local)
            if problem is not None:
                self._git(repo, "reset", "-q", "--hard", local)
                marker.unlink()
                raise MemsyncError(
                    f"cannot resync with {remote!r}: re-applying local memory failed "
                    f"({problem}); the store is unchanged. Fix the file in {self.worktree}, "
                    "then retry"
                )
        if self._store_id(repo, theirs) is not None:  # an adopted unrelated store: its id, not both
            self._git(repo, "checkout", theirs, "--", STORE_ID_FILE)
        if self._run(repo, "diff", "--cached", "--quiet", "--no-ext-diff").status != 0:
            self._git(
                repo,
                "commit",
                "-q",
                "--no-verify",
                "-m",
                self._message(f"memsync: resync with {remote}: local memory re-applied on its history"),
            )
        (self.git_dir / "SQUASH_MSG").unlink(missing_ok=True)
        marker.unlink()

    # ---------------------------------------------------------------------------------- history, counts

    def log(self, selector: str | None = None, limit: int | None = None) -> list[LogRecord]:
        """The store's history, newest first, optionally at most ``limit`` commits.

        ``selector``: None for everything; a store path (file or directory) for the commits that changed
        it; otherwise an entry id (or any text) for the commits whose diffs add or remove it
        (``git log -S``). With a selector, each record's ``files`` are the changed files it matched.
        Raises ``MemsyncError`` when git fails.
        """
        args = ["log", "--no-ext-diff", "--no-color", "--format=%x1e%H%x1f%aI%x1f%B%x1f", "--name-only", "-z"]
        if limit is not None:
            args.append(f"-n{limit}")
        with self._repo() as repo:
            if self._rev(repo, "HEAD") is None:
                return []
            if selector is None:
                out = self._git(repo, *args).out
            else:
                out = self._git(repo, *args, "--", selector).out
                if not out.strip():
                    out = self._git(repo, *args, f"-S{selector}").out
        return [_log_record(chunk) for chunk in out.split("\x1e") if chunk.strip()]

    def introduced(self, text: str, path: str) -> LogRecord | None:
        """The oldest commit whose change to store path ``path`` adds or removes ``text`` (``git log -S``,
        merges skipped: a merged line is credited to the commit that wrote it), None when there is none.
        Raises ``MemsyncError`` when git fails."""
        args = ["log", "--reverse", "--no-ext-diff", "--no-color", "--format=%x1e%H%x1f%aI%x1f%B%x1f"]
        with self._repo() as repo:
            if self._rev(repo, "HEAD") is None:
                return None
            out = self._git(repo, *args, f"-S{text}", "--", path).out
        first = next((chunk for chunk in out.split("\x1e") if chunk.strip()), None)
        return None if first is None else _log_record(first)

    def ahead_behind(self, remote: str) -> tuple[int, int]:
        """(commits here not on ``remote``, commits on ``remote`` not here) as of the last fetch."""
        tracking = f"refs/remotes/{remote}/{self.cfg.branch}"
        with self._repo() as repo:
            both = self._run(repo, "rev-list", "--left-right", "--count", f"HEAD...{tracking}")
            if both.status == 0:
                ahead, behind = both.out.split()
                return int(ahead), int(behind)
            # The remote has no copy yet (or this store no commit): everything here is ahead.
            alone = self._run(repo, "rev-list", "--count", "HEAD")
        return (int(alone.out) if alone.status == 0 else 0), 0

    def unpushed_count(self, remote: str) -> int:
        """How many commits of this store ``remote`` lacks, as of the last fetch or push."""
        return self.ahead_behind(remote)[0]

    def gc_auto(self) -> None:
        """Run ``git gc --auto`` (cheap when there is nothing to do); failures are logged, not raised."""
        with self._repo() as repo:
            result = self._run(repo, "gc", "--auto", "--quiet")
        if result.status != 0:
            log.warning("store %s: git gc --auto failed: %s", self.cfg.name, result.reason)

    # ------------------------------------------------------------------------------------ remote state

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.meta_dir / "remotes.json").read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _state_seen(self, remote: str) -> str | None:
        entry = self._state().get(remote)
        if (
            not isinstance(entry, dict)
            or entry.get("url") != self.cfg.remotes[remote]
            or entry.get("branch") != self.cfg.branch
        ):
            return None
        seen = entry.get("seen")
        return seen if isinstance(seen, str) else None

    def _state_set(self, remote: str, *, seen: str | None) -> None:
        """Record the last remote head memsync integrated or pushed (force-push detection)."""
        state = self._state()
        state[remote] = {"url": self.cfg.remotes[remote], "branch": self.cfg.branch, "seen": seen}
        atomic_write(self.meta_dir / "remotes.json", json.dumps(state, indent=1, sort_keys=True).encode())

    # ---------------------------------------------------------------------------------------- git calls

    @contextmanager
    def _repo(self) -> Iterator[git.Repo]:
        try:
            repo = git.Repo(self.worktree)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise MemsyncError(
                f"cannot open store {self.cfg.name!r}: {self.worktree} is not a git "
                "repository. Run `memsync init`"
            ) from exc
        with repo:
            yield repo

    def _run(self, repo: git.Repo, *args: str, timeout: float = LOCAL_TIMEOUT_S) -> _Result:
        return run_git(args, cwd=self.worktree, env=self._env, timeout=timeout, stop=self.stop)

    def _git(self, repo: git.Repo, *args: str, timeout: float = LOCAL_TIMEOUT_S) -> _Result:
        result = self._run(repo, *args, timeout=timeout)
        if result.status != 0:
            command = args[2] if args[0] == "-c" else args[0]  # `git -c key=value add`: "add"
            if self._full(result) is not None:
                raise MemsyncError(
                    f"store {self.cfg.name!r}: `git {command}` failed: {self._why(result)}. {ADVICE}"
                )
            raise MemsyncError(
                f"store {self.cfg.name!r}: `git {command}` failed: {result.reason}. "
                f"Check {self.worktree} (run `memsync status`)"
            )
        return result

    def _rev(self, repo: git.Repo, ref: str) -> str | None:
        result = self._run(repo, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
        return result.out.strip() if result.status == 0 else None

    def _is_ancestor(self, repo: git.Repo, ancestor: str, descendant: str) -> bool:
        result = self._run(repo, "merge-base", "--is-ancestor", ancestor, descendant)
        if result.status > 1:
            # The ancestor commit is unknown here (pruned, or another repository's): not contained.
            return False
        return result.status == 0


def _never_stored(rel_path: str) -> bool:
    """Editor/temp files and snapshot.md (layout), and git's leftover merge-driver temp files."""
    return is_ignored(rel_path) or fnmatch.fnmatchcase(PurePosixPath(rel_path).name, _GIT_MERGE_TEMP)


def _log_record(chunk: str) -> LogRecord:
    sha, date, body, names = chunk.split("\x1f", 3)
    host = None
    kept = []
    for line in body.strip().splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == HOST_TRAILER:
            host = value.strip()
        else:
            kept.append(line)
    files = tuple(name.strip("\n") for name in names.split("\0") if name.strip("\n"))
    return LogRecord(
        sha=sha.strip(),
        host=host,
        date=datetime.fromisoformat(date),
        message="\n".join(kept).strip(),
        files=files,
    )

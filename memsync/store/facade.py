"""The store: a git working tree only memsync writes, and its exchange with remotes (DESIGN "One sync
cycle" steps 3-4, I3, I7, I8, I9). ``Store`` is the one entry point; each job is a module beside it
(``open``, ``recovery``, ``commit``, ``exchange``, ``integrate``, ``conflicts``, ``resync``, ``history``,
``remotes``, ``rewrite``), and git runs only through ``repo.StoreGit`` (``memsync.base.git``).

A ``Store`` holds no git resources, so a daemon may keep one for its whole life. Merging (I9): a
fast-forward or nothing when one side contains the other; else one merge commit, the peer then
fast-forwards to it. A modify/delete conflict keeps the modified file; a file meeting a directory moves
aside; any other conflict, or a driver failure, aborts the merge: the store is never left conflicted.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Collection, Iterable
from pathlib import Path

from memsync.base.paths import StoreLayout
from memsync.config.file import NETWORK_TIMEOUT_S, Identity, StoreConfig
from memsync.crypt.members import Member, Members
from memsync.errors import MemsyncError
from memsync.store import exchange as exchanging
from memsync.store import history, sealed, storeid
from memsync.store import open as lifecycle
from memsync.store import resync as resyncing
from memsync.store.commit import commit_all, put_back_strays
from memsync.store.exchange import Progress, RemoteOutcome
from memsync.store.format import is_store
from memsync.store.history import LogRecord
from memsync.store.recovery import OPERATION_LOCK_WAIT_S, abort_merges, recover_locks
from memsync.store.repo import StoreGit, log


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
        (``log``, ``files``, ``ahead_behind``, ``git.gc_auto``); use ``open``/``init_or_clone`` to write.
        ``network_timeout_s`` bounds every fetch, push and probe of a remote (seconds); once ``stop`` is
        set, every git command raises ``git.Stopped`` (the daemon is stopping)."""
        self._g = StoreGit(cfg, host, identity, network_timeout_s, stop)

    @property
    def cfg(self) -> StoreConfig:
        """The store's config."""
        return self._g.cfg

    @property
    def host(self) -> str:
        """This machine's host name, as commit trailers carry it."""
        return self._g.host

    @property
    def identity(self) -> Identity:
        """The author and committer of this machine's commits."""
        return self._g.identity

    @property
    def network_timeout_s(self) -> float:
        """The bound on every command that contacts a remote (seconds)."""
        return self._g.network_timeout_s

    @property
    def stop(self) -> threading.Event | None:
        """Set when the process stops: every git command then raises ``git.Stopped``."""
        return self._g.stop

    @property
    def layout(self) -> StoreLayout:
        """Where the store's files are."""
        return self._g.layout

    @property
    def worktree(self) -> Path:
        """The store's working tree (``cfg.path``)."""
        return self._g.worktree

    @property
    def git_dir(self) -> Path:
        """The store's git directory (``<worktree>/.git``)."""
        return self._g.git_dir

    @property
    def meta_dir(self) -> Path:
        """memsync's own directory inside the git dir (state, status, locks); never part of history."""
        return self._g.meta_dir

    @property
    def git(self) -> StoreGit:
        """git in the store (``repo.StoreGit``), for the store's jobs that work on an opened store:
        ``commit.put_back_strays``, ``storeid.ensure_identity``, ``rewrite.Rewriter``, ``gc_auto``."""
        return self._g

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
        """Open the existing store at ``cfg.path`` and make it ready for memsync (I7, I8).

        Refuses what is not a memsync store, and a store whose format version is newer than this
        memsync's; removes stale git lock files when no git process works in the store (waits up to
        ``lock_wait_s`` seconds for a live one, then raises); rolls back an interrupted resync; aborts an
        interrupted merge/rebase/cherry-pick/revert (committed work is kept); sets the store's own git
        config (no hooks, no signing, no editor, this host's identity, fast-forward merges, no rename
        detection, byte-exact files); syncs the git remotes with ``cfg.remotes``; registers the merge
        drivers; gives a store made before store ids one (``storeid``). ``network_timeout_s`` and
        ``stop``: see ``Store``. Raises ``MemsyncError``.
        """
        store = cls(cfg, host, identity, network_timeout_s=network_timeout_s, stop=stop)
        lifecycle.refuse_foreign(store._g)
        lifecycle.prepare(store._g, lock_wait_s)
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
        if StoreLayout(cfg.path).exists:
            return cls.open(cfg, host, identity, network_timeout_s=network_timeout_s)
        store = cls(cfg, host, identity, network_timeout_s=network_timeout_s)
        lifecycle.create(store._g)
        return store

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
        self._ready()
        lifecycle.ensure_branch(self._g, written)
        return commit_all(self._g, message, written)

    # ----------------------------------------------------------------------------------------- exchange

    def exchange(
        self, remotes: Iterable[str] | None = None, progress: Progress | None = None
    ) -> list[RemoteOutcome]:
        """Exchange with each remote (default: all of ``cfg.remotes``, in config order): fetch, merge with
        the drivers (fast-forward where possible), push; one ``RemoteOutcome`` per remote.

        The exchange takes the last commit: commit first (``commit_all``). A rejected push is retried
        after a random pause, a new fetch and a replay of the unpushed commits on top of the remote's
        head (``replay``), or a merge where they cannot be replayed (up to ``exchange.PUSH_ATTEMPTS``
        attempts); never forced. A remote whose history no longer
        contains the last head memsync saw there reports ``diverged`` and is left alone until
        ``resync``; one whose history is unrelated to the store's (no commit in common, another store
        id) reports ``unrelated``, and nothing is merged from it or pushed to it, unless this is the
        first exchange with it and it holds another memsync store: that one is joined (a second machine
        with memory of its own given the first one's remote; ``storeid.join``). A failed merge or
        fast-forward is undone, worktree included. ``progress(remote, None)`` is called as each remote
        is contacted and ``progress(remote, outcome)`` after; without it each outcome is logged.
        Network problems are outcomes (``offline``), not exceptions; raises ``MemsyncError`` only when
        the store itself is broken, e.g. a failed merge cannot be undone on a full disk (the worktree
        is then not the last commit: nothing may be delivered from it).
        """
        names = list(self.cfg.remotes) if remotes is None else list(remotes)
        outcomes = []
        self._ready()
        lifecycle.ensure_branch(self._g, ())
        for name in names:
            self._known_remote(name, "exchange with")
            if progress is not None:
                progress(name, None)
            try:
                outcome = exchanging.exchange_one(self._g, name)
            except MemsyncError as exc:
                # A git step failed mid-merge: leave the store as it was before the merge.
                abort_merges(self._g)
                put_back_strays(self._g, ())
                outcome = RemoteOutcome(name, "conflict", str(exc))
            if progress is not None:
                progress(name, outcome)
            else:
                level = logging.INFO if outcome.status == "ok" else logging.WARNING
                log.log(level, "store %s: %s %s: %s", self.cfg.name, name, outcome.status, outcome.message)
            outcomes.append(outcome)
        return outcomes

    def fetch(self, remote: str) -> str | None:
        """Fetch ``remote``'s branch into its tracking ref (``refs/remotes/<remote>/<branch>``) and merge
        nothing: returns the remote's head sha, None when it has no such branch. `memsync resync` reads
        the purge records of a rewritten remote this way before adopting it. Raises ``MemsyncError`` when
        the remote is unknown or cannot be reached."""
        self._known_remote(remote, "fetch from")
        self._ready()
        fetched = exchanging.fetch(self._g, remote)
        if fetched.failure is not None:
            raise MemsyncError(
                f"cannot fetch from {remote!r}: {fetched.failure.reason}. Check the network and retry"
            )
        return fetched.head

    def unrelated(self, remote: str) -> str | None:
        """Fetch ``remote`` and say why its history is unrelated to the store's (no commit in common,
        another store id), None when it is related or empty. Raises ``MemsyncError`` when the remote is
        unknown or cannot be reached."""
        theirs = self.fetch(remote)
        head = self._g.rev("HEAD")
        if theirs is None or head is None:
            return None
        return storeid.unrelated(self._g, remote, head, theirs)

    def foreign(self, remote: str) -> bool:
        """Fetch ``remote`` (just added to this store) and say whether its branch holds history that is
        not a memsync store's and shares no commit with this store's (a code repository): exchanging
        would merge its files in and push memory onto its branch. Its tracking ref is then removed.
        False when it is related, another memsync store (joined at first contact), empty, or cannot be
        reached now (the exchange says so then). Raises ``MemsyncError`` for an unknown remote."""
        self._known_remote(remote, "fetch from")
        self._ready()
        theirs = exchanging.fetch(self._g, remote).head
        head = self._g.rev("HEAD")
        if theirs is None or head is None or is_store(self._g, theirs):
            return False
        if storeid.unrelated(self._g, remote, head, theirs) is None:
            return False
        self._g.run("update-ref", "-d", f"refs/remotes/{remote}/{self.cfg.branch}")
        return True

    def reseal(self, remote: str, *, add: Member | None = None, remove: str | None = None) -> None:
        """Change the members of the encrypted ``remote``: exchange with it, then push the whole
        history sealed and signed for its members plus ``add`` and less the one with recipient
        ``remove`` (``sealed.push``), so an added device reads all history and a removed one nothing
        from then on, and its signature is refused (a notice sealed for it alone tells it);
        a push another device beat is done again. Raises ``MemsyncError`` when the store is not
        encrypted, the remote is unknown or unreachable, or the exchange or push fails."""
        self._known_remote(remote, "change the keys of")
        if not self.cfg.encrypt:
            raise MemsyncError(
                f"cannot change the keys of {remote}: store {self.cfg.name!r} is not encrypted. "
                f"Run `memsync encrypt {self.cfg.name}` first"
            )
        for _ in range(exchanging.PUSH_ATTEMPTS):
            outcome = self.exchange([remote])[0]
            if outcome.status != "ok":
                raise MemsyncError(f"cannot change the keys of {remote}: {outcome.message}. Retry")
            pushed = sealed.push(self._g, remote, add=add, remove=remove)
            if pushed.ok and remove is not None and add is None:
                self._notify_removed(remote, remove)
            if pushed.ok:
                return
            if "[rejected]" not in pushed.out:
                raise MemsyncError(f"cannot change the keys of {remote}: {pushed.reason}. Retry")
        raise MemsyncError(f"cannot change the keys of {remote}: other devices kept pushing first. Retry")

    def _notify_removed(self, remote: str, recipient: str) -> None:
        """Tell the device with ``recipient``, just removed from ``remote``, by a notice sealed for it
        alone (``sealed.notify_removed``). A push between the removal and the notice (another device's)
        puts the notice on top after an exchange; the members then name it once as unreadable."""
        for _ in range(exchanging.PUSH_ATTEMPTS):
            if sealed.notify_removed(self._g, remote, recipient).ok:
                return
            self.exchange([remote])
        log.warning(
            "store %s: %s: the removed device could not be told: others kept pushing", self.cfg.name, remote
        )

    def removed(self, remote: str) -> str | None:
        """What a member's verified removal notice told this device about the encrypted ``remote`` (one
        line: who removed it, how to rejoin), as of its last fetch; None when it was not removed. Reads
        local refs only."""
        self._require()
        return sealed.vault(self._g, remote).removed if self.cfg.encrypt else None

    def members(self, remote: str) -> Members:
        """The members of the encrypted ``remote`` as of a fetch now (none: it holds no signed bundle this
        device took yet). Raises ``MemsyncError`` when the remote is unknown or unreachable."""
        self._known_remote(remote, "list the keys of")
        self._ready()
        failure = exchanging.fetch(self._g, remote).failure
        if failure is not None:
            raise MemsyncError(
                f"cannot list the keys of {remote}: {failure.reason}. Check the network and retry"
            )
        held = sealed.vault(self._g, remote).members
        return Members(()) if held is None else Members.parse(held)

    def probe(self, remote: str) -> str | None:
        """Ask ``remote`` for its branch head (``git ls-remote``, within ``network_timeout_s``) without
        touching the store: None when it answers, else why not, in one line. Lets a daemon wait for a
        dead remote to answer again without holding the store meanwhile."""
        self._require()
        asked = self._g.remote("ls-remote", "--heads", remote, f"refs/heads/{self.cfg.branch}")
        return None if asked.status == 0 else exchanging.unreachable(self._g, remote, asked)

    def resync(self, remote: str, *, adopt_unrelated: bool = False) -> RemoteOutcome:
        """Adopt ``remote``'s rewritten history: the branch is reset to the remote's head, then the local
        memory is re-applied on top through the merge drivers as one commit (base: the last common
        commit, so the remote's deletions of old content are honoured and nothing added locally is lost),
        the new remote head is recorded, and the result is pushed. The old branch head stays reachable
        as ``refs/memsync/before-resync/<remote>``. Interrupted, it is rolled back on the next open. When
        one history contains the other there is nothing to rewrite: the remote is simply trusted again
        and a normal exchange follows (commits the remote dropped are pushed again: nothing is lost).
        A remote rewritten by `memsync purge` needs ``purge.adopt_purge_records`` first (``commands.resync``
        calls it), or the lines it purged come back with the re-applied local memory. A remote whose
        history is unrelated to the store's (``storeid``) is refused unless ``adopt_unrelated``; adopted,
        the store takes its store id. Commit first (``commit_all``): the resync takes the last commit.
        Raises ``MemsyncError`` when the remote is unknown, unreachable or unrelated (and not adopted),
        or the re-apply hits a conflict no driver resolves (the branch is then back where it was).
        """
        self._known_remote(remote, "resync with")
        self._ready()
        lifecycle.ensure_branch(self._g, ())
        return resyncing.resync(self._g, remote, adopt_unrelated)

    # ------------------------------------------------------------------------------------------ history

    def head(self) -> str | None:
        """The sha of the store's current commit (None before the first commit)."""
        self._require()
        return self._g.rev("HEAD")

    def files(self) -> list[str]:
        """Every file in the store's current commit (POSIX paths relative to the worktree, sorted)."""
        self._require()
        out = self._g.check("ls-tree", "-r", "-z", "--name-only", "HEAD").out
        return sorted(name for name in out.split("\0") if name)

    def log(self, selector: str | None = None, limit: int | None = None) -> list[LogRecord]:
        """The store's history, newest first, optionally at most ``limit`` commits.

        ``selector``: None for everything; a store path (file or directory) for the commits that changed
        it; otherwise an entry id (or any text) for the commits whose diffs add or remove it
        (``git log -S``). With a selector, each record's ``files`` are the changed files it matched.
        Raises ``MemsyncError`` when git fails.
        """
        self._require()
        args = [*history.LOG_ARGS, "--name-only", "-z"]
        if limit is not None:
            args.append(f"-n{limit}")
        if self._g.rev("HEAD") is None:
            return []
        if selector is None:
            return history.records(self._g.check(*args).out)
        if history.may_be_path(selector):
            found = history.records(self._g.check(*args, "--", selector).out)
            if found:
                return found
        searched = history.searched(self._g, selector, ())
        return list(searched if limit is None else itertools.islice(searched, limit))

    def introduced(self, text: str, path: str) -> LogRecord | None:
        """``history.introduced`` in this store; None before its first commit. Raises ``MemsyncError``
        when the store is missing or git fails."""
        self._require()
        return None if self._g.rev("HEAD") is None else history.introduced(self._g, text, path)

    def added_lines(self, sha: str) -> list[bytes]:
        """The lines commit ``sha`` adds (its diff's ``+`` lines, without the ``+``); [] when git cannot
        show it. Raises ``MemsyncError`` when the store is missing."""
        self._require()
        shown = self._g.run(
            "show", "--format=", "--no-ext-diff", "--no-color", "--unified=0", sha, timeout=60
        )
        lines = shown.stdout.splitlines() if shown.ok else []
        return [raw[1:] for raw in lines if raw.startswith(b"+") and not raw.startswith(b"+++")]

    def ahead_behind(self, remote: str) -> tuple[int, int]:
        """(commits here not on ``remote``, commits on ``remote`` not here) as of the last fetch."""
        self._require()
        tracking = f"refs/remotes/{remote}/{self.cfg.branch}"
        both = self._g.run("rev-list", "--left-right", "--count", f"HEAD...{tracking}")
        if both.status == 0:
            ahead, behind = both.out.split()
            return int(ahead), int(behind)
        # The remote has no copy yet (or this store no commit): everything here is ahead.
        alone = self._g.run("rev-list", "--count", "HEAD")
        return (int(alone.out) if alone.status == 0 else 0), 0

    def missing_from(self, sha: str) -> int:
        """How many commits of this store's history commit ``sha`` does not contain (what the host that
        wrote ``sha`` had not pulled when it wrote it); 0 when git does not know ``sha``."""
        self._require()
        counted = self._g.run("rev-list", "--count", "HEAD", f"^{sha}")
        return int(counted.out) if counted.status == 0 else 0

    def unpushed_count(self, remote: str) -> int:
        """How many commits of this store ``remote`` lacks, as of the last fetch or push."""
        return self.ahead_behind(remote)[0]

    def changes(self, old: str, new: str) -> dict[str, int | None]:
        """Store path -> its size in bytes at commit ``old`` (None where it did not exist there), for every
        path whose content differs between commits ``old`` and ``new`` (renames as a deletion and an
        addition). Two git commands, whatever the store's size: the diff and one ``cat-file`` for the old
        sizes. Raises ``git.GitError`` (a ``MemsyncError``) when git fails (a commit unknown here)."""
        self._require()
        g = self._g
        raw = g.check("diff", "--raw", "-z", "--no-renames", "--no-ext-diff", "--abbrev=40", old, new).out
        fields = raw.split("\0")
        old_blobs: dict[str, str] = {}
        found: dict[str, int | None] = {}
        # Each change is ":<old mode> <new mode> <old blob> <new blob> <status>" then the path.
        for header, path in zip(fields[0::2], fields[1::2], strict=False):
            if not header.startswith(":"):
                continue
            blob = header.split()[2]
            found[path] = None
            if blob != history.NO_BLOB:
                old_blobs[path] = blob
        if old_blobs:
            listed = "".join(f"{blob}\n" for blob in old_blobs.values()).encode("ascii")
            sizes = g.check("cat-file", "--batch-check=%(objectsize)", stdin=listed).out.split()
            for path, size in zip(old_blobs, sizes, strict=True):
                found[path] = int(size)
        return found

    # ---------------------------------------------------------------------------------------- internals

    def _require(self) -> None:
        if not self.layout.exists:
            raise MemsyncError(
                f"cannot open store {self.cfg.name!r}: {self.worktree} is not a git "
                "repository. Run `memsync init`"
            )

    def _ready(self) -> None:
        """Before a write: stale locks gone (a live git waited for), the store there."""
        recover_locks(self._g, OPERATION_LOCK_WAIT_S)
        self._require()

    def _known_remote(self, remote: str, doing: str) -> None:
        if remote not in self.cfg.remotes:
            raise MemsyncError(
                f"cannot {doing} {remote!r}: store {self.cfg.name!r} has no such remote. Check the config"
            )

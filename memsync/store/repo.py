"""The store's own git: every command pinned to the store's repository and config, run without asking
anything and killed after a timeout (DESIGN "One sync cycle" step 4, I7), so a dead network or a
credential prompt never hangs the caller, and a caller inside a git hook never acts on another
repository."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from memsync.base import git
from memsync.base.diskfull import ADVICE, git_says_full, named_by_git, nearly_full
from memsync.base.layout import HOST_TRAILER, trailer_host
from memsync.base.paths import StoreLayout
from memsync.config.file import Identity, StoreConfig

# One logger for the whole store: the daemon folds its repeated warnings there (``cli.sync``).
log = logging.getLogger("memsync.store")

LOCAL_TIMEOUT_S = 300.0


class StoreGit:
    """git in the store at ``cfg.path``, as ``host`` with ``identity``: ``run`` (a ``git.Result``),
    ``check`` (raises), the few questions every part of the store asks (``rev``, ``is_ancestor``), and
    ``gc_auto``.
    ``network_timeout_s`` bounds every command that contacts a remote; once ``stop`` is set, every command
    raises ``git.Stopped``. Holds no git resources."""

    def __init__(
        self,
        cfg: StoreConfig,
        host: str,
        identity: Identity,
        network_timeout_s: float,
        stop: threading.Event | None,
    ) -> None:
        self.cfg = cfg
        self.host = host
        self.identity = identity
        self.network_timeout_s = network_timeout_s
        self.stop = stop
        self.layout = StoreLayout(cfg.path)
        self.env = self._env()
        # Whether this Store wrote the merge drivers' registration (``drivers``).
        self.drivers_registered = False

    @property
    def name(self) -> str:
        """The store's name in the config."""
        return self.cfg.name

    @property
    def worktree(self) -> Path:
        """The store's working tree (``cfg.path``)."""
        return self.layout.worktree

    @property
    def git_dir(self) -> Path:
        """The store's git directory (``<worktree>/.git``)."""
        return self.layout.git_dir

    @property
    def meta_dir(self) -> Path:
        """memsync's own directory inside the git dir (state, status, locks); never part of history."""
        return self.layout.meta_dir

    def _env(self) -> dict[str, str]:
        name, email = self.identity.name, self.identity.email
        return {
            **git.noninteractive_env(self.network_timeout_s),
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

    def run(
        self,
        *args: str,
        timeout: float = LOCAL_TIMEOUT_S,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> git.Result:
        """``git ARGS`` in the store, whatever its exit status, with ``env`` added to the store's
        environment (say, what a merge driver is told). Raises ``git.Stopped``, ``OSError``."""
        full = self.env if env is None else {**self.env, **env}
        return git.run(args, cwd=self.worktree, env=full, timeout=timeout, stop=self.stop, stdin=stdin)

    def remote(self, *args: str) -> git.Result:
        """``run`` bounded by ``network_timeout_s``: for a command that contacts a remote."""
        return self.run(*args, timeout=self.network_timeout_s)

    def check(self, *args: str, timeout: float = LOCAL_TIMEOUT_S, stdin: bytes | None = None) -> git.Result:
        """``run``, raising ``git.GitError`` (a ``MemsyncError``: a full disk named as ``diskfull`` does)
        when git fails."""
        result = self.run(*args, timeout=timeout, stdin=stdin)
        if result.status != 0:
            command = args[2] if args[0] == "-c" else args[0]  # `git -c key=value add`: "add"
            if self.full(result) is not None:
                message = f"store {self.name!r}: `git {command}` failed: {self.why(result)}. {ADVICE}"
            else:
                message = (
                    f"store {self.name!r}: `git {command}` failed: {result.reason}. "
                    f"Check {self.worktree} (run `memsync status`)"
                )
            raise git.GitError(message, args, result.status, result.err)
        return result

    def rev(self, ref: str) -> str | None:
        """The commit ``ref`` names, None when it names none."""
        result = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
        return result.out.strip() if result.status == 0 else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when commit ``ancestor`` is in ``descendant``'s history."""
        result = self.run("merge-base", "--is-ancestor", ancestor, descendant)
        if result.status > 1:
            # The ancestor commit is unknown here (pruned, or another repository's): not contained.
            return False
        return result.status == 0

    def gc_auto(self) -> None:
        """Run ``git gc --auto`` (cheap when there is nothing to do); a failure is logged, not raised."""
        result = self.run("gc", "--auto", "--quiet")
        if result.status != 0:
            log.warning("store %s: git gc --auto failed: %s", self.name, result.reason)

    def message(self, message: str) -> str:
        """``message`` with this host's ``Memsync-Host`` trailer."""
        return f"{message.rstrip()}\n\n{HOST_TRAILER}: {trailer_host(self.host)}\n"

    def full(self, result: git.Result) -> Path | None:
        """Where a disk is full when ``result`` failed for want of space (git says so, or the disk under
        the working tree or the objects has next to nothing free), else None."""
        for place in (self.worktree, self.git_dir / "objects"):
            if nearly_full(place):
                return place
        return self.worktree if git_says_full(result.err) else None

    def why(self, result: git.Result) -> str:
        """The reason of a failed git step; a full disk named the same way everywhere (``diskfull``)."""
        full = self.full(result)
        return result.reason if full is None else named_by_git(result.err, full)

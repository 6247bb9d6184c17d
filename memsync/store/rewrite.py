"""Rewriting a store's whole history without some lines (`memsync purge`, DESIGN I6): every ref through
``git fast-export --all`` -> the lines dropped from every blob and message -> ``git fast-import
--force``, then the reflogs expired and the old objects pruned, so no object holding the lines is left.
The rewrite is deterministic: two machines dropping the same lines from the same commits get the same
new commits, so their histories still join. Its force push is the only one memsync makes, and runs
non-interactively like every other git (``memsync.base.git``)."""

from __future__ import annotations

import hashlib
from typing import Protocol

from memsync.base import git
from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit

REWRITE_TIMEOUT_S = 300.0


class LineFilter(Protocol):
    """What a rewrite drops: a line ``matches``, and ``drop_lines`` splits data into kept bytes and the
    dropped lines (with their line ends)."""

    def matches(self, line: bytes) -> bool:
        """True when the raw ``line`` (with or without its line end) must go."""
        ...

    def drop_lines(self, data: bytes) -> tuple[bytes, list[bytes]]:
        """``data`` without the matching lines, and the dropped lines."""
        ...


def line_hash(line: bytes) -> str:
    """The hex SHA-256 of ``line`` without its line end (LF, CRLF or CR): what a purge record holds for
    each removed line. The whole line is hashed, so the digest of a line holding a short PIN among other
    words cannot be reversed by trying every PIN; a line that is nothing but a short secret could be."""
    return hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()


def filter_stream(stream: bytes, lines: LineFilter) -> tuple[bytes, int, frozenset[str]]:
    """A ``git fast-export`` stream with the matching lines dropped from every ``data`` payload (blobs,
    commit and tag messages); returns the new stream, how many payloads changed and the
    :func:`line_hash` of every dropped line. Pure function."""
    out = bytearray()
    hashes: set[str] = set()
    changed = pos = 0
    while pos < len(stream):
        end = stream.find(b"\n", pos)
        end = len(stream) if end < 0 else end
        line = stream[pos:end]
        if line.startswith(b"data ") and not line.startswith(b"data <<"):
            size = int(line[5:])
            payload = stream[end + 1 : end + 1 + size]
            kept, dropped = lines.drop_lines(payload)
            changed += bool(dropped)
            hashes.update(line_hash(gone) for gone in dropped)
            out += b"data %d\n" % len(kept) + kept
            pos = end + 1 + size
        else:
            out += line + b"\n"
            pos = end + 1
    return bytes(out), changed, frozenset(hashes)


class Rewriter:
    """The git steps of a history rewrite in one store (`memsync purge`, on ``Store.git``); each raises
    ``MemsyncError`` ("cannot purge store ...") when git fails or passes its timeout."""

    def __init__(self, g: StoreGit) -> None:
        self._g = g

    def _run(
        self, *args: str, stdin: bytes | None = None, check: bool = True, remote: str | None = None
    ) -> git.Result:
        """``git ARGS`` in the store; a command that contacts ``remote`` is bounded by the store's
        ``network_timeout_s``, any other by ``REWRITE_TIMEOUT_S``."""
        timeout = REWRITE_TIMEOUT_S if remote is None else self._g.network_timeout_s
        if remote is not None and self._g.cfg.encrypt:
            # Its remote holds sealed bundles only: a force push of the branch would put plaintext there.
            raise MemsyncError(
                f"cannot purge {remote} of store {self._g.name!r}: it is encrypted, and purging sealed "
                "history is not supported. Purge the local store only (remove the remote first)"
            )
        result = self._g.run(*args, timeout=timeout, stdin=stdin)
        if result.timed_out is not None:
            late = (
                f"`git {args[0]}` took more than {timeout:g} s"
                if remote is None
                else f"{remote} gave no answer to `git {args[0]}` within {timeout:g} s (network_timeout_s)"
            )
            raise MemsyncError(f"cannot purge store {self._g.name!r}: {late}. Retry")
        if check and not result.ok:
            reason = result.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"]
            raise git.GitError(
                f"cannot purge store {self._g.name!r}: `git {args[0]}` failed: "
                f"{reason[-1]}. Check {self._g.worktree} with `memsync status`",
                args,
                result.status,
                result.err,
            )
        return result

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is in ``descendant``'s history."""
        return self._run("merge-base", "--is-ancestor", ancestor, descendant, check=False).ok

    def has_commit(self, sha: str) -> bool:
        """True when the store has commit ``sha``."""
        return self._run("cat-file", "-e", f"{sha}^{{commit}}", check=False).ok

    def show(self, commit: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, None when it has no such file (or no such commit)."""
        shown = self._run("show", f"{commit}:{path}", check=False)
        return shown.stdout if shown.ok else None

    def rewrite(self, lines: LineFilter) -> tuple[int, frozenset[str]]:
        """Rewrite every ref without the matching lines; drop the old objects. Returns how many payloads
        changed and the :func:`line_hash` of every dropped line."""
        exported = self._run(
            "fast-export", "--all", "--signed-tags=strip", "--tag-of-filtered-object=rewrite", "--reencode=no"
        ).stdout
        filtered, changed, hashes = filter_stream(exported, lines)
        if not changed:
            return 0, hashes
        self._run("fast-import", "--force", "--quiet", stdin=filtered)
        self._run("reset", "-q", "--hard")
        for leftover in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "SQUASH_MSG"):
            (self._g.git_dir / leftover).unlink(missing_ok=True)
        self._run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        self._run("gc", "-q", "--prune=now")
        return changed, hashes

    def holds(self, head: str, lines: LineFilter) -> bool:
        """True when any blob reachable from ``head`` has a matching line."""
        listing = self._run("rev-list", "--objects", head).stdout.split()
        shas = [word for word in listing if len(word) == 40]
        batch = self._run("cat-file", "--batch", stdin=b"".join(sha + b"\n" for sha in shas)).stdout
        pos = 0
        while pos < len(batch):
            header_end = batch.index(b"\n", pos)
            _, kind, size = batch[pos:header_end].split()
            data = batch[header_end + 1 : header_end + 1 + int(size)]
            pos = header_end + 1 + int(size) + 1
            if kind == b"blob" and any(lines.matches(line) for line in data.splitlines()):
                return True
        return False

    def remote_head(self, remote: str) -> str | None:
        """The head of the store's branch on ``remote`` (``git ls-remote``), None when it has none."""
        listed = self._run("ls-remote", remote, f"refs/heads/{self._g.cfg.branch}", remote=remote).out.split()
        return listed[0] if listed else None

    def fetch(self, remote: str) -> None:
        """Fetch ``remote``'s branch into its tracking ref."""
        branch = self._g.cfg.branch
        self._run(
            "fetch",
            "-q",
            "--no-tags",
            remote,
            f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}",
            remote=remote,
        )

    def force_push(self, remote: str, lease: str) -> None:
        """Push HEAD to ``remote``'s branch by force, with a lease on its head ``lease``: the one force
        push memsync makes."""
        branch = self._g.cfg.branch
        self._run(
            "push",
            "--quiet",
            "--no-verify",
            f"--force-with-lease=refs/heads/{branch}:{lease}",
            remote,
            f"HEAD:refs/heads/{branch}",
            remote=remote,
        )

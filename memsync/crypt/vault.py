"""The ciphertext repository of one encrypted remote: all the remote ever receives.

A bare repository (in the store's meta dir) whose branch, named like the store's, is a line of commits,
each adding one sealed bundle: its tree holds ``data.age`` (that bundle) and the store format file
saying ``encrypted``; who it is sealed for travels inside it (``members``).
Its first commit sits on top of the remote's plaintext history when a store switched to encryption.
Authors, committers and messages are the same on every commit (``GENERIC``, "sealed"), and each
commit's date is its parent's plus one second (``_FIRST_DATE`` for the first): it says only the commit's
place on the branch, which the branch shows anyway. The remote learns when a push happened and how big
it was to within a size bucket, nothing else. A push is a fast-forward of the remote's branch by one
commit, never forced: when another device pushed first, the caller fetches, reads its commit and
appends on top of it. ``refs/read`` marks the last commit this
device has read (or written; when nothing moves with it, in a file on top of ``refs/read``:
``memsync-read``), so a fetch reads only what is new;
``refs/members`` (moved with it) the member list as of that commit, which judges the signer of the
next; ``refs/removed`` (moved with it) what a member's verified removal notice told this device, while
it stays removed. A device's first fetch takes the tip commit alone (``--depth=1``) and deepens only
until it reaches a whole-history bundle it can read (a snapshot), so its cost does not grow with the
branch's history.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from memsync.base import git, refs
from memsync.base.fsio import atomic_write
from memsync.errors import MemsyncError

DATA = "data.age"
# The store format file (``memsync.store.format``) of every ciphertext commit: a memsync whose store is
# not set to encrypt refuses to merge such a head instead of taking the ciphertext files for memory.
FORMAT_DIR, FORMAT_NAME, SEALED_FORMAT = ".memsync", "format", "encrypted"
_TIP = "refs/tip"
_READ = "refs/read"
_MEMBERS = "refs/members"
# A commit as of which this device must not push: bundles up to it build on one it could not read (what
# it pushed would not build on the remote's memory).
_STALLED = "refs/stalled"
# What a verified removal notice said (one line): this device no longer pushes to the remote.
_REMOVED = "refs/removed"
_PENDING = "refs/pending"
_LOCAL_TIMEOUT_S = 300.0
# The author and committer of every ciphertext commit: the same for every device.
GENERIC = "memsync <memsync@invalid>"
# The date of the branch's first commit (2000-01-01 UTC); each later one is dated a second after its
# parent. Git's walks between two commits (a fetch's or push's `A --not B`) stop once the dates fall
# below the uninteresting side's: a date shared by every commit made each walk descend the whole
# branch, so a cycle's fetch and push grew with the number of bundles ever pushed.
_FIRST_DATE = 946684800
_COMMITTED = re.compile(rb"^committer [^\n]* (\d{1,12}) [+-]\d{4}$", re.MULTILINE)
# A parent dated after this (2100-01-01) is a peer's odd commit, not a branch's place: the next commit
# takes ``_FIRST_DATE`` again (only git's walks slow down) rather than a date git would refuse.
_LAST_DATE = 4102444800
_NO_REMOTE_BRANCH = re.compile(r"couldn't find remote ref")
# Present while this device's next push is to make a snapshot (a whole-history bundle) too.
_DUE = "memsync-snapshot-due"
# The tip's bundle is read by the same git as the refs (a fetch that brings one bundle then runs one git
# here, not two) unless the tip last seen here was bigger than this (bytes): a snapshot, most likely
# still the tip, is not read again for nothing at each fetch.
_TIP_WITH_REFS = 64 * 1024
# The read mark when only it moves (a bundle read or pushed, the member list and the other refs as they
# were): "<refs/read> <commit read>" in this file, written without git; it holds while ``refs/read`` is
# still what it names (a ref transaction that moves the others moves ``refs/read`` too and so voids it).
# A crash before it is written only makes the next fetch read those bundles again, which changes nothing.
_READ_FILE = "memsync-read"
_HEX = re.compile(git.OBJECT_ID)


@dataclass(frozen=True)
class _Refs:
    """What one read of the ciphertext repository's refs found: ``tip`` and ``read`` (None: absent), the
    tip's parents, the member list as of ``read`` (None: none known), the commit ``stalled`` marks,
    what a removal notice said (None: this device was not removed), the tip's ``data.age`` (None: not
    read with the refs), ``refs/read`` itself (``read`` is the read mark's file when it holds) and the
    blobs the member list and the notice were read from."""

    tip: str | None
    read: str | None
    parents: tuple[str, ...]
    members: bytes | None
    stalled: str | None
    removed: bytes | None
    tip_data: bytes | None = None
    read_ref: str | None = None
    members_blob: str | None = None
    removed_blob: str | None = None


@dataclass(frozen=True)
class Sealed:
    """One commit of the ciphertext branch: its sha, the bytes of its ``data.age``, and its parent (None:
    the branch's first), which its signature covers."""

    commit: str
    data: bytes
    parent: str | None = None


class Vault:
    """The ciphertext repository at ``git_dir`` for the remote at ``url`` (branch ``branch``); network
    steps bounded by ``network_timeout_s``, every git step stopped by ``stop`` (``git.Stopped``)."""

    def __init__(
        self, git_dir: Path, url: str, branch: str, network_timeout_s: float, stop: threading.Event | None
    ) -> None:
        self.git_dir = git_dir
        self.url = url
        self.branch = branch
        self.network_timeout_s = network_timeout_s
        self.stop = stop
        self.env = {
            **git.noninteractive_env(network_timeout_s),
            "GIT_DIR": str(git_dir),
            "GIT_CONFIG_PARAMETERS": "",
            # No `git maintenance run --auto` after each fetch (one git more per cycle): ``gc_auto`` runs
            # about one fetch with news and one push in 16.
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "maintenance.auto",
            "GIT_CONFIG_VALUE_0": "false",
        }
        self._known: _Refs | None = None
        # The size of the tip's bundle as last read here (0: none read yet).
        self._tip_size = 0
        # What ``cat-file`` last read of the refs: its member list and notice serve while their blobs stay.
        self._last: _Refs | None = None
        # The last commit whose date is known here (read with the refs, or appended), and that date: the
        # next ``append`` on top of it needs no git to read it.
        self._dated: tuple[str, int] | None = None

    def _run(self, *args: str, timeout: float = _LOCAL_TIMEOUT_S, stdin: bytes | None = None) -> git.Result:
        if not (self.git_dir / "HEAD").exists():
            git.run(
                ["init", "-q", "--bare", str(self.git_dir)], env=self.env, timeout=timeout, stop=self.stop
            )
        return git.run(args, cwd=self.git_dir, env=self.env, timeout=timeout, stop=self.stop, stdin=stdin)

    def _check(self, *args: str, stdin: bytes | None = None) -> git.Result:
        result = self._run(*args, stdin=stdin)
        if not result.ok:
            raise git.GitError(
                f"ciphertext repository {self.git_dir}: `git {args[0]}` failed: {result.reason}. "
                "Check the disk; deleting that directory makes memsync fetch it again",
                args,
                result.status,
                result.err,
            )
        return result

    def _refs(self) -> _Refs:
        """``refs/tip`` (with its parents), ``refs/read``, ``refs/members``, ``refs/stalled``,
        ``refs/removed`` and the tip's bundle (unless the last tip seen was big), read by one git (none
        when ``_unchanged`` has them), kept until a step moves a ref."""
        if self._known is None:
            self._known = self._unchanged()
        if self._known is None:
            with_data = self._tip_size <= _TIP_WITH_REFS
            wanted = f"{_TIP}\n{_READ}\n{_MEMBERS}\n{_STALLED}\n{_REMOVED}\n".encode()
            tip, read, members, stalled, removed, *data = _batch(
                self._check(
                    "cat-file", "--batch", stdin=wanted + (f"{_TIP}:{DATA}\n".encode() if with_data else b"")
                ).stdout
            )
            tip_data = data[0][1] if data and data[0] else None
            if tip:
                self._dated = (tip[0].decode(), _date(tip[1]))
            if tip_data is not None:
                self._tip_size = len(tip_data)
            read_ref = read[0].decode() if read else None
            self._known = _Refs(
                tip[0].decode() if tip else None,
                self._read_mark(read_ref),
                _parents(tip[1]) if tip else (),
                members[1] if members else None,
                stalled[0].decode() if stalled else None,
                removed[1] if removed else None,
                tip_data,
                read_ref,
                members[0].decode() if members else None,
                removed[0].decode() if removed else None,
            )
            self._last = self._known
        return self._known

    def _unchanged(self) -> _Refs | None:
        """The refs read from their files without git when nothing new is there to read: the tip is the
        commit last read, and the member list and the notice are the blobs ``cat-file`` last read. None
        otherwise (then one git reads them)."""
        last = self._last
        if last is None:
            return None
        tip, read_at, members, stalled, removed = (
            refs.read_ref(self.git_dir, ref) for ref in (_TIP, _READ, _MEMBERS, _STALLED, _REMOVED)
        )
        read = self._read_mark(read_at)
        if tip is None or not _HEX.fullmatch(tip) or tip != read:
            return None
        if (members, removed) != (last.members_blob, last.removed_blob):
            return None
        return replace(last, tip=tip, read=read, parents=(), stalled=stalled, tip_data=None, read_ref=read_at)

    def _read_mark(self, read_ref: str | None) -> str | None:
        """The last commit read here: the read mark's file (``_READ_FILE``) while ``refs/read`` is still
        ``read_ref``, the one it was written on, else ``read_ref``."""
        try:
            on, _, mark = (self.git_dir / _READ_FILE).read_text().strip().partition(" ")
        except OSError:
            return read_ref
        return mark if on == (read_ref or "-") and _HEX.fullmatch(mark) else read_ref

    def _move_read(self, known: _Refs, commit: str) -> None:
        """Record ``commit`` as read in the read mark's file, on top of ``refs/read`` as ``known``."""
        atomic_write(self.git_dir / _READ_FILE, f"{known.read_ref or '-'} {commit}\n".encode(), durable=False)

    def fetch(self, deepen: int = 0) -> git.Result | None:
        """Fetch the remote's ciphertext branch (``tip``): the tip commit alone on this repository's first
        fetch, ``deepen`` more commits of its history when given. None when done (the remote may have no
        branch yet), else the failed git's result."""
        self._known = None
        depth = (
            (f"--deepen={deepen}",) if deepen else () if (self.git_dir / "HEAD").exists() else ("--depth=1",)
        )
        result = self._run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            *depth,
            self.url,
            f"+refs/heads/{self.branch}:{_TIP}",
            timeout=self.network_timeout_s,
        )
        if result.ok:
            return None
        if _NO_REMOTE_BRANCH.search(result.err):
            self._run("update-ref", "-d", _TIP)
            return None
        return result

    @property
    def tip(self) -> str | None:
        """The remote's ciphertext head as of the last fetch or push, None when it has none."""
        return self._refs().tip

    @property
    def shallow(self) -> bool:
        """True while this repository lacks the older part of the branch (a first fetch takes the tip)."""
        return (self.git_dir / "shallow").exists()

    @property
    def snapshot_due(self) -> bool:
        """True when this device's next push is to make a snapshot too (``due``)."""
        return (self.git_dir / _DUE).exists()

    def due(self, snapshot: bool) -> None:
        """Record whether this device's next push is to make a snapshot too (a hint: a lost write only
        delays one, or makes one more)."""
        if snapshot and not self.snapshot_due:
            atomic_write(self.git_dir / _DUE, b"", durable=False)
        elif not snapshot:
            (self.git_dir / _DUE).unlink(missing_ok=True)

    @property
    def read(self) -> str | None:
        """The last commit this device read or wrote, None when it never did."""
        return self._refs().read

    def unread(self) -> list[Sealed]:
        """The commits after ``refs/read`` up to ``tip``, oldest first, with their sealed bundles (empty:
        a commit without one). Raises ``MemsyncError`` when the remote's ciphertext history no longer
        contains what this device read (rewritten: memsync never follows a rewrite silently)."""
        refs = self._refs()
        tip, read = refs.tip, refs.read
        if tip is None or tip == read:
            return []
        if read is not None and refs.parents == (read,):  # one commit since the last read: no walk
            data = refs.tip_data if refs.tip_data is not None else self._blobs([f"{tip}:{DATA}"])[0]
            self._tip_size = len(data)
            return [Sealed(tip, data, read)]
        # One git lists the new commits with their parents: ``read`` is in the tip's history exactly when
        # it is the parent of one of them (the first commit after it on any path from the tip).
        span = [tip] if read is None else [tip, "--not", read]
        listed = [
            line.split() for line in self._check("rev-list", "--reverse", "--parents", *span).out.splitlines()
        ]
        if read is not None and not any(read in parents[1:] for parents in listed):
            raise MemsyncError(
                f"the ciphertext history of {self.url} was rewritten (it no longer contains {read[:10]}): "
                "nothing read from it. Ask who force-pushed; memsync never does"
            )
        found = self._blobs([f"{parents[0]}:{DATA}" for parents in listed])
        self._tip_size = len(found[-1]) if found else 0
        if self.shallow and listed and len(listed[0]) == 1:
            # The oldest commit fetched is a shallow one: git hides its parent, which its signature covers.
            commit = self._blobs([listed[0][0]])[0]
            listed[0] += [line[7:].decode() for line in commit.splitlines() if line.startswith(b"parent ")][
                :1
            ]
        return [
            Sealed(parents[0], data, parents[1] if len(parents) > 1 else None)
            for parents, data in zip(listed, found, strict=True)
        ]

    def _blobs(self, names: list[str]) -> list[bytes]:
        """The contents of the objects ``names`` (``<commit>:<path>``) by one git; b"" for a missing one."""
        wanted = "".join(f"{name}\n" for name in names).encode()
        return [
            each[1] if each else b""
            for each in _batch(self._check("cat-file", "--batch", stdin=wanted).stdout)
        ]

    def gc_auto(self) -> None:
        """``git gc --auto`` here: the loose objects of many pushes and fetches packed; never raises."""
        self._run("gc", "--auto", "--quiet")

    @property
    def members(self) -> bytes | None:
        """The member list (serialized) as of ``read``, None when this device knows none yet."""
        return self._refs().members

    @property
    def stalled(self) -> bool:
        """True when this device must not push on top of ``tip`` (``mark_read``'s ``stalled``)."""
        refs = self._refs()
        return refs.tip is not None and refs.stalled == refs.tip

    @property
    def removed(self) -> str | None:
        """What a member's verified removal notice told this device (one line), None when it was not
        removed (or was added again since)."""
        said = self._refs().removed
        return None if said is None else said.decode("utf-8", "replace")

    def sealed(self, commit: str) -> bool:
        """True when ``commit`` holds a sealed bundle (not the plaintext history before encryption)."""
        return self._run("cat-file", "-e", f"{commit}:{DATA}").ok

    def mark_read(
        self, commit: str, members: bytes | None, *, stalled: bool = False, removed: str | None = None
    ) -> None:
        """Record ``commit`` as read, ``members`` (serialized; None: none known yet) as the member list as
        of it, whether this device is ``stalled`` as of it (must not push: missing a bundle those
        before it build on) and what a removal notice told it (``removed``; None: not removed), in one
        ref transaction, or in the read mark's file alone when nothing else moves: the next ``unread``
        starts after it. The refs kept in memory move with it (the tip does not), so the cycle's next
        question of them runs no git."""
        known = self._refs()
        if (
            (members is None or members == known.members)
            and not stalled
            and removed is None
            and known.removed is None
        ):
            self._move_read(known, commit)
            self._known = replace(known, read=commit)
            return
        moves = {_READ: commit, **({_STALLED: commit} if stalled else {})}
        script = self._moves(moves, members)
        if removed is not None:
            said = self._check("hash-object", "-w", "--stdin", stdin=removed.encode()).out.strip()
            script += f"update {_REMOVED} {said}\n".encode()
        elif known.removed is not None:
            script += f"delete {_REMOVED}\n".encode()
        self._known = None  # unknown until the transaction is done: a failed one leaves nothing assumed
        self._check("update-ref", "--stdin", stdin=script)
        self._known = replace(
            known,
            read=commit,
            members=known.members if members is None else members,
            stalled=commit if stalled else known.stalled,
            removed=None if removed is None else removed.encode(),
        )

    def _moves(self, refs: dict[str, str], members: bytes | None) -> bytes:
        """An ``update-ref --stdin`` script moving ``refs``, and ``refs/members`` to a blob of ``members``
        when they differ from the list kept (no git to write an unchanged one)."""
        if members is not None and members != self._refs().members:
            refs = {**refs, _MEMBERS: self._check("hash-object", "-w", "--stdin", stdin=members).out.strip()}
        return "".join(f"update {ref} {sha}\n" for ref, sha in refs.items()).encode()

    def append(self, sealed: bytes) -> str:
        """A new commit on top of ``tip`` holding ``sealed``, dated a second after it; returns its sha
        (not pushed; no ref moved but a scratch one). One ``git fast-import`` writes it all (and one
        ``cat-file`` reads the tip's date when neither the refs' read nor the last append gave it)."""
        tip = self.tip
        if tip is None:
            when = _FIRST_DATE
        elif self._dated is not None and self._dated[0] == tip:
            when = self._dated[1] + 1
        else:
            when = _date(self._blobs([tip])[0]) + 1
        stream = b"".join(
            [
                f"reset {_PENDING}\ncommit {_PENDING}\nmark :1\n".encode(),
                f"author {GENERIC} {when} +0000\ncommitter {GENERIC} {when} +0000\n".encode(),
                b"data 6\nsealed\n",
                f"from {tip}\n".encode() if tip is not None else b"",
                *(
                    f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
                    for path, data in (
                        (DATA, sealed),
                        (f"{FORMAT_DIR}/{FORMAT_NAME}", f"{SEALED_FORMAT}\n".encode()),
                    )
                ),
                b"\nget-mark :1\ndone\n",
            ]
        )
        commit = self._check("fast-import", "--quiet", "--force", "--done", stdin=stream).out.strip()
        self._dated = (commit, when)
        return commit

    def push(self, commit: str, members: bytes) -> git.Result:
        """Push ``commit`` (made by ``append``) to the remote's branch, never forced; on success it is the
        ``tip`` and read, and ``members`` (serialized) the member list as of it. Returns git's result
        (``--porcelain``: a refused push has a line starting with ``!``)."""
        result = self._run(
            "push",
            "--porcelain",
            "--no-verify",
            self.url,
            f"{commit}:refs/heads/{self.branch}",
            timeout=self.network_timeout_s,
        )
        known = self._refs()
        if result.ok and members == known.members:
            # The list unchanged: only the read mark moves (its file); the next fetch moves ``refs/tip``.
            self._move_read(known, commit)
            self._known = replace(
                known, tip=commit, read=commit, parents=(known.tip,) if known.tip else (), tip_data=None
            )
        elif result.ok:
            self._check("update-ref", "--stdin", stdin=self._moves({_TIP: commit, _READ: commit}, members))
            self._known = None
        if result.ok and commit.startswith("0"):
            self.gc_auto()  # a device that only pushes folds its loose objects too
        return result


def _parents(commit: bytes) -> tuple[str, ...]:
    """The parents named by the commit object ``commit``."""
    return tuple(
        line[7:].decode() for line in commit.split(b"\n\n", 1)[0].splitlines() if line.startswith(b"parent ")
    )


def _date(commit: bytes) -> int:
    """The committer date (seconds) of the commit object ``commit``; ``_FIRST_DATE`` when it names none
    or one after ``_LAST_DATE`` (the remote's bytes, whatever they are, never stop a push)."""
    found = _COMMITTED.search(commit.split(b"\n\n", 1)[0])
    date = int(found.group(1)) if found else _FIRST_DATE
    return date if date < _LAST_DATE else _FIRST_DATE


def _batch(out: bytes) -> list[tuple[bytes, bytes] | None]:
    """``git cat-file --batch``'s answers, in order: each object's sha and content, None when missing."""
    found: list[tuple[bytes, bytes] | None] = []
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) == 3:
            size = int(header[2])
            found.append((header[0], out[at : at + size]))
            at += size + 1
        else:
            found.append(None)
    return found

"""Design B of encrypted remotes, a measured prototype (not product code; the product builds design A,
``memsync/store/sealed.py``): per-file deterministic encryption through git's clean/smudge filters.

- **Content.** A clean filter seals each file with AES-SIV (``cryptography``): deterministic, so the same
  plaintext always gives the same blob and git sees no change where there is none (a nonce-random cipher
  such as age would make every ``git status`` see every file changed). The file's (sealed) name is the
  associated data, so equal contents in two files do not give equal blobs. Mode ``file``: the whole file
  is one ciphertext, its plaintext framed and padded with zeros to a power of two (at least 512 bytes).
  Mode ``line``: each line is sealed alone (its index in the associated data, so repeated lines differ)
  and written as one base64 line, so an append leaves the earlier lines' ciphertext as it was and git can
  delta it; line lengths and counts show.
- **Names.** The working tree holds each file under its sealed store path (AES-SIV, base32), in one flat
  folder: the remote sees neither names nor folders.
- **Keys.** One store secret (32 random bytes, in the git dir: never pushed) per store, shared by every
  device (a product would seal it to each device's age key, as design A seals bundles); HKDF derives the
  content key and the name key from it.
- **Merges.** git hands a merge driver the blobs as stored, ciphertext: the driver registered here opens
  the three versions, runs memsync's driver for the plain path's kind (``memsync.merge.kinds``) and seals
  the result. Commits carry generic metadata (author, committer, date 2000-01-01, message ``sync``).

The filters and the driver are this file run as a script: ``clean|smudge KEYFILE MODE NAME`` (stdin to
stdout) and ``merge KEYFILE MODE %O %A %B %P``. :class:`Peer` is one device's repository.
"""

from __future__ import annotations

import base64
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MODES = ("file", "line")
KEY_FILE = "memsync-b.key"
FORMAT = b"\x01"  # the first byte of a sealed whole file: the format version
MIN_BUCKET = 512
GENERIC = {
    "GIT_AUTHOR_NAME": "memsync",
    "GIT_AUTHOR_EMAIL": "memsync@invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "memsync",
    "GIT_COMMITTER_EMAIL": "memsync@invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


class SealError(Exception):
    """A blob or name that these keys cannot open (another store's, changed, cut, not sealed)."""


@dataclass(frozen=True)
class Keys:
    """The two AES-SIV keys of a store, derived from its secret."""

    content: AESSIV
    name: AESSIV

    @classmethod
    def derive(cls, secret: bytes) -> Keys:
        """The content and name keys (64 bytes each: AES-256-SIV) derived from ``secret`` by HKDF."""

        def key(info: bytes) -> AESSIV:
            return AESSIV(HKDF(SHA256(), 64, salt=None, info=info).derive(secret))

        return cls(key(b"memsync design b content"), key(b"memsync design b name"))

    @classmethod
    def load(cls, path: Path) -> Keys:
        """The keys of the secret in file ``path``."""
        return cls.derive(path.read_bytes())


def _bucket(size: int) -> int:
    return max(MIN_BUCKET, 1 << (size - 1).bit_length())


def seal(keys: Keys, mode: str, name: str, plain: bytes) -> bytes:
    """The blob stored for ``plain``, the content of the file sealed as ``name``; deterministic. An empty
    file stays empty (git's absent base of a merge is one too)."""
    if not plain:
        return b""
    if mode == "file":
        framed = len(plain).to_bytes(8, "big") + plain
        padded = framed + bytes(_bucket(len(framed)) - len(framed))
        return FORMAT + keys.content.encrypt(padded, [name.encode()])
    lines = plain.splitlines(keepends=True)
    return b"".join(
        base64.b64encode(keys.content.encrypt(line, [name.encode(), str(i).encode()])) + b"\n"
        for i, line in enumerate(lines)
    )


def unseal(keys: Keys, mode: str, name: str, blob: bytes) -> bytes:
    """The plaintext of ``blob`` (see :func:`seal`). Raises ``SealError`` when it cannot be opened."""
    if not blob:
        return b""
    try:
        if mode == "file":
            if blob[:1] != FORMAT:
                raise SealError(f"{name}: not a sealed file (format byte {blob[:1]!r})")
            framed = keys.content.decrypt(blob[1:], [name.encode()])
            return framed[8 : 8 + int.from_bytes(framed[:8], "big")]
        return b"".join(
            keys.content.decrypt(base64.b64decode(line, validate=True), [name.encode(), str(i).encode()])
            for i, line in enumerate(blob.splitlines())
        )
    except (InvalidTag, ValueError) as exc:
        raise SealError(f"{name}: cannot be opened with this store's key ({exc!r})") from exc


def seal_name(keys: Keys, rel: str) -> str:
    """The working-tree (and remote) name of store path ``rel``: sealed, base32, lower case, flat."""
    return base64.b32encode(keys.name.encrypt(rel.encode(), [])).decode().rstrip("=").lower()


def open_name(keys: Keys, name: str) -> str:
    """The store path sealed as ``name``. Raises ``SealError``."""
    raw = name.upper() + "=" * (-len(name) % 8)
    try:
        return keys.name.decrypt(base64.b32decode(raw), []).decode()
    except (InvalidTag, ValueError) as exc:
        raise SealError(f"{name}: not a name sealed with this store's key") from exc


def merge(keys: Keys, mode: str, base: Path, ours: Path, theirs: Path, name: str) -> None:
    """git's merge driver: open ``base``, ``ours`` and ``theirs`` (blobs of the file sealed as ``name``),
    merge them with memsync's driver for the plain path's kind, seal the result into ``ours``."""
    from memsync.merge.kinds import merge_for_path  # the driver's process only

    sides = [unseal(keys, mode, name, path.read_bytes()) for path in (base, ours, theirs)]
    merged = merge_for_path(open_name(keys, name), *sides)
    ours.write_bytes(seal(keys, mode, name, merged))


def _script(*args: str) -> str:
    return shlex.join([sys.executable, "-P", str(Path(__file__).resolve()), *args])


@dataclass(frozen=True)
class Peer:
    """One device's repository: design B when ``mode`` is set, else its plaintext twin (the same git steps,
    memsync's own drivers, no filter) against which B's own cost is measured."""

    worktree: Path
    mode: str | None

    @classmethod
    def create(cls, worktree: Path, remote: Path, secret: bytes, mode: str | None) -> Peer:
        """A new repository at ``worktree`` whose ``origin`` is the bare ``remote``, set up for ``mode``
        (one of :data:`MODES`, None for the plaintext twin) with the store ``secret``, and holding what
        the remote has."""
        from memsync.merge.registration import install_merge_drivers

        subprocess.run(["git", "init", "-q", "-b", "main", str(worktree)], check=True)
        peer = cls(worktree, mode)
        git_dir = worktree / ".git"
        if mode is None:
            install_merge_drivers(git_dir)
        else:
            key = git_dir / KEY_FILE
            key.write_bytes(secret)
            key.chmod(0o600)
            for setting, value in (
                ("filter.memsync-b.clean", _script("clean", str(key), mode, "%f")),
                ("filter.memsync-b.smudge", _script("smudge", str(key), mode, "%f")),
                ("filter.memsync-b.required", "true"),
                ("merge.memsync-b.driver", _script("merge", str(key), mode, "%O", "%A", "%B", "%P")),
            ):
                peer.git("config", setting, value)
            (git_dir / "info").mkdir(exist_ok=True)
            (git_dir / "info" / "attributes").write_text("* -text filter=memsync-b merge=memsync-b\n")
        peer.git("remote", "add", "origin", str(remote))
        peer.exchange()
        if not peer.head("HEAD"):  # the first device: a root commit every later one shares, as in memsync
            peer.git("commit", "-q", "--allow-empty", "-m", "sync")
            peer.git("push", "-q", "origin", "HEAD:main")
        return peer

    @property
    def keys(self) -> Keys:
        return Keys.load(self.worktree / ".git" / KEY_FILE)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``git ARGS`` in the working tree with the generic identity and date."""
        return subprocess.run(
            ["git", *args],
            cwd=self.worktree,
            env=os.environ | GENERIC,
            capture_output=True,
            text=True,
            check=check,
        )

    def path(self, rel: str) -> Path:
        """Where store path ``rel`` lives in the working tree."""
        return self.worktree / (rel if self.mode is None else seal_name(self.keys, rel))

    def append(self, rel: str, line: str) -> None:
        """Append ``line`` (and a newline) to store path ``rel`` and commit."""
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as out:
            out.write(line + "\n")
        self.commit()

    def write(self, rel: str, text: str) -> None:
        """Replace store path ``rel`` with ``text`` and commit."""
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.commit()

    def commit(self) -> None:
        """Commit every change, with the generic metadata."""
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "sync")

    def head(self, ref: str) -> str:
        """The commit ``ref`` names, or "" when there is none."""
        return self.git("rev-parse", "-q", "--verify", ref, check=False).stdout.strip()

    def exchange(self, attempts: int = 100) -> None:
        """Fetch, merge the remote's branch (memsync's drivers, through the filter's when sealed), push;
        a rejected push (another device pushed first) goes round again. Never forced."""
        for _ in range(attempts):
            self.git("fetch", "-q", "origin")
            theirs, ours = self.head("origin/main"), self.head("HEAD")
            if theirs and not ours:
                self.git("reset", "-q", "--hard", "origin/main")  # nothing here yet: take the remote's
                return
            if theirs and theirs != ours:
                self.git("merge", "-q", "--no-edit", "-m", "sync", "origin/main")
                ours = self.head("HEAD")
            if ours in ("", theirs):
                return  # nothing to push: a fast-forward, or nothing on either side
            if self.git("push", "-q", "origin", "HEAD:main", check=False).returncode == 0:
                return
        raise RuntimeError(f"{self.worktree}: no push after {attempts} attempts")


def main(argv: list[str]) -> int:
    """The filter and driver commands (see the module's docstring); 1 and one line on stderr on failure,
    so git stops rather than store a plaintext or a wrong merge."""
    command, key, mode, *rest = argv
    keys = Keys.load(Path(key))
    try:
        if command in ("clean", "smudge"):
            data = sys.stdin.buffer.read()
            do = seal if command == "clean" else unseal
            sys.stdout.buffer.write(do(keys, mode, Path(rest[0]).name, data))
        elif command == "merge":
            base, ours, theirs, name = rest
            merge(keys, mode, Path(base), Path(ours), Path(theirs), Path(name).name)
        else:
            raise SealError(f"unknown command {command!r}")
    except Exception as exc:  # git's edge: any failure stops the git step instead of storing a wrong blob
        print(f"design b {command}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

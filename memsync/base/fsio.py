"""Safe writes to files agents may be using: one O_APPEND write, or temp file + rename (DESIGN I5)."""

from __future__ import annotations

import errno
import functools
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import ctypes

    import filelock

from memsync.base.paths import state_dir

TEMP_PREFIX = ".memsync-tmp-"


def append_once(
    path: Path, data: bytes, *, create: bool = False, fsync: bool = True, mode: int = 0o644
) -> None:
    """Append ``data`` to ``path`` with one ``write`` on an ``O_APPEND`` descriptor, then fsync (unless
    ``fsync`` is False, for a caller that syncs many files at once: ``WriteBatch``).

    One write of a whole number of lines means concurrent appenders never interleave inside a line.
    ``create`` allows creating a missing file (``mode`` bits before umask). Raises ``OSError`` from the OS,
    naming ``path``. A short write (a full disk or quota) is taken back before that error is raised:
    what fitted is cut off again unless someone appended after it meanwhile, so no partial line is left
    for a reader to take as a line (DESIGN I2; the bytes cut are this call's own, never an agent's, I5).
    """
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, mode)
    try:
        written = os.write(fd, data)
        if written != len(data):
            end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: just past the bytes this write placed
            try:
                extra = os.write(fd, data[written:])  # tells why the first write fell short
                why = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            except OSError as exc:
                extra, why = 0, exc
            if os.fstat(fd).st_size == end + extra:  # nobody appended after these bytes
                os.ftruncate(fd, end - written)
            raise why
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        raise _naming(exc, path) from None
    finally:
        os.close(fd)


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` with ``path`` as its file name (an error from a descriptor names no file)."""
    return exc if exc.filename else OSError(exc.errno, exc.strerror, str(path))


def temp_beside(path: Path, data: bytes, mode: int, *, fsync: bool = True) -> Path:
    """Write ``data`` to a new temp file (``mode`` bits; fsynced unless ``fsync`` is False, for a caller
    that syncs many at once) in ``path``'s directory, created if missing, and return its path. Its name
    starts with ``TEMP_PREFIX``, which memsync never syncs. Raises ``OSError`` (naming ``path`` when the
    write itself fails, a full disk say); on failure no temp file is left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if fsync:
                os.fsync(out.fileno())
        os.chmod(tmp, mode)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _naming(exc, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def fsync_dir(path: Path) -> None:
    """fsync the directory ``path`` so a rename or link in it survives a crash. Raises ``OSError``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mode_of(path: Path) -> int:
    """The permission bits of ``path``, 0o644 when it does not exist: what its replacement gets."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o644


def permission_cap(path: Path) -> int:
    """The permission bits a copy of ``path`` may have: its own, without set-id and sticky bits, or
    0o600 when it cannot be read (gone meanwhile: only its owner could read a copy). Never raises."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o600


def atomic_write(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically: temp file in the same directory, fsync, ``os.replace``.

    Keeps the permission bits of an existing ``path``, or gives it ``mode``. Readers see the old or the
    new bytes, never a mix.
    Not ``durable``: no fsync (a cache rebuilt when lost: after a power cut it may hold the old bytes).
    Raises ``OSError`` from the OS; on failure the temp file is removed and ``path`` is unchanged.
    """
    tmp = temp_beside(path, data, _mode_of(path) if mode is None else mode, fsync=durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def _created_mode() -> int:
    """0o644 less the process umask (read by setting it, as only that can)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o644 & ~mask


def create_exclusive(path: Path, data: bytes, mode: int | None = None) -> bool:
    """Create ``path`` holding ``data`` whole (fsynced temp file + hard link), or return False when
    ``path`` already exists: a reader never sees it half written, and a file another process created
    first is never overwritten. Mode ``mode``, else 0o644 less the umask. Raises ``OSError`` for other
    failures."""
    tmp = temp_beside(path, data, _created_mode() if mode is None else mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def writer_lock(path: Path) -> filelock.FileLock:
    """The lock every memsync writer of the live file ``path`` takes (compaction refuses while it is held).

    The lock file lives under ``$XDG_STATE_HOME/memsync/locks/``, never beside the memory file, so it is
    not mistaken for memory. Returns an unacquired ``filelock.FileLock``; use it as a context manager.
    """
    # Imported here: readers (recall, a server's first answer) import this module and take no lock, and
    # hashlib's import sets up OpenSSL (7 ms).
    import hashlib

    import filelock

    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    lock_dir = state_dir() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(lock_dir / f"{digest}.lock")


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, for the calls the ``os`` module lacks (``syncfs``, ``renameat2``)."""
    import ctypes  # here: most processes never call it, and its import is 2.5 ms

    return ctypes.CDLL(None, use_errno=True)


def _errno() -> int:
    """The C library's ``errno`` as ``libc()``'s last call left it."""
    import ctypes

    return ctypes.get_errno()


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap the directory entries ``a`` and ``b`` atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    False when the platform or file system lacks it; raises ``OSError`` (e.g. ENOENT) otherwise.
    """
    renameat2 = getattr(libc(), "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = _errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _syncfs(directory: Path) -> None:
    """Flush every written byte of the file system holding ``directory`` to disk (Linux ``syncfs(2)``;
    callers check that the C library has it). Raises ``OSError`` when it fails."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        if libc().syncfs(fd) != 0:
            code = _errno() or errno.EIO
            raise OSError(code, os.strerror(code), str(directory))
    finally:
        os.close(fd)


WriteOp = Literal["replace", "create", "append", "remove"]
# Up to this many writes a WriteBatch fsyncs each file instead of one syncfs per file system.
FSYNC_EACH = 8


@dataclass(frozen=True)
class _Staged:
    """One write of a WriteBatch: what to do to ``path``, with ``data``."""

    op: WriteOp
    path: Path
    data: bytes
    cap: int  # the permission bits the written file may have at most


class WriteBatch:
    """Many file writes made durable together: one ``syncfs(2)`` per file system and one fsync per
    directory, instead of two fsyncs per file (DESIGN I5, I7).

    ``add`` records a write until ``apply``: "replace" is ``atomic_write``, "create" is
    ``create_exclusive``, "append" is ``append_once`` (``create=True``), "remove" deletes. ``apply`` writes
    every new version to a temp file beside its target and every append in place, makes all those bytes
    durable at once (beyond ``FSYNC_EACH`` writes; fewer are fsynced one by one), then renames or links each
    temp file into place and fsyncs each directory touched.
    So each file keeps the guarantee of the single-file function: readers see it whole, old or new; after
    a crash or a power loss it is old or new (an append: before, after, or cut inside, as with
    ``append_once``); a created file never replaces one that appeared meanwhile. Where ``syncfs`` is
    missing each temp file and append is fsynced instead. At most one write per path in a batch.
    """

    def __init__(self) -> None:
        self._staged: list[_Staged] = []
        self.size = 0  # bytes recorded, to bound the memory a batch holds

    def __len__(self) -> int:
        return len(self._staged)

    def add(self, op: WriteOp, path: Path, data: bytes = b"", *, like: Path | None = None) -> None:
        """Record the write ``op`` of ``data`` (nothing for "remove") to ``path``, done by ``apply``.
        ``like``: the file whose copy ``path`` is (a store copy's live file): a file this write creates
        or replaces gets no permission bit ``like`` lacks, so what only its owner may read stays so."""
        self._staged.append(_Staged(op, path, data, 0o7777 if like is None else permission_cap(like)))
        self.size += len(data)

    def apply(self) -> list[bool]:
        """Do every recorded write, in order, durably; then the batch is empty.

        Returns, per write, whether it was done: False only for a ``create`` whose path existed. Raises
        ``OSError`` (e.g. disk full): writes before the failing one may be done, none after it; no temp
        file is left behind.
        """
        staged, self._staged, self.size = self._staged, [], 0
        # syncfs also waits for every other process's dirty pages on that file system: worth it for many
        # files, while a cycle's few appends cost less as one fsync each.
        syncfs = len(staged) > FSYNC_EACH and hasattr(libc(), "syncfs")
        created_mode = _created_mode()
        temps: dict[int, Path] = {}
        try:
            for i, s in enumerate(staged):
                if s.op == "append":
                    s.path.parent.mkdir(parents=True, exist_ok=True)
                    append_once(s.path, s.data, create=True, fsync=not syncfs, mode=0o644 & s.cap)
                elif s.op != "remove":
                    mode = created_mode if s.op == "create" else _mode_of(s.path)
                    temps[i] = temp_beside(s.path, s.data, mode & s.cap, fsync=not syncfs)
            if syncfs:
                devices: set[int] = set()
                for directory in dict.fromkeys(s.path.parent for s in staged if s.op != "remove"):
                    if (device := directory.stat().st_dev) not in devices:
                        devices.add(device)
                        _syncfs(directory)
            done = [self._place(s, temps.pop(i, None)) for i, s in enumerate(staged)]
        finally:
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
        for directory in dict.fromkeys(s.path.parent for s in staged):
            if directory.is_dir():  # a removed file's directory may be gone too
                fsync_dir(directory)
        return done

    @staticmethod
    def _place(staged: _Staged, tmp: Path | None) -> bool:
        """Move ``staged``'s durable temp file into place (or remove); False when a create found a file."""
        if staged.op == "remove":
            staged.path.unlink(missing_ok=True)
        elif staged.op == "replace":
            assert tmp is not None
            os.replace(tmp, staged.path)
        elif staged.op == "create":
            assert tmp is not None
            try:
                os.link(tmp, staged.path)
            except FileExistsError:
                return False
            finally:
                tmp.unlink(missing_ok=True)
        return True


# A temp file this old is no write in progress: one is made, synced and renamed within a cycle's batch.
STALE_TEMP_S = 60.0


def sweep_temps(
    root: Path, min_age_s: float = STALE_TEMP_S, *, recursive: bool = True, skip_dirs: tuple[str, ...] = ()
) -> int:
    """Delete memsync's temp files (names starting with ``TEMP_PREFIX``) under the directory ``root``
    whose mtime is at least ``min_age_s`` seconds old, and return how many went.

    A process killed in a write (``WriteBatch``, ``atomic_write``) leaves its temp files behind: memsync
    never syncs them, but they hold memory text (DESIGN I5, I6). The age spares a write another memsync
    process has in progress. Only regular files go; symlinks are neither followed nor removed, and
    directories named in ``skip_dirs`` are not entered (``recursive`` False: ``root``'s own files only).
    Unreadable directories and files that vanish meanwhile are skipped; never raises ``OSError``.
    """
    cutoff = time.time() - min_age_s
    removed = 0
    pending = [os.fspath(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if recursive and entry.name not in skip_dirs:
                        pending.append(entry.path)
                elif (
                    entry.name.startswith(TEMP_PREFIX)
                    and entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime <= cutoff
                ):
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def read_range(path: Path, start: int, stop: int) -> bytes:
    """Bytes ``start`` to ``stop`` of ``path`` (fewer when the file is shorter; b"" for an empty range):
    one bounded read, however big the file. Raises ``OSError`` (``FileNotFoundError`` for no file)."""
    if stop <= start:
        return b""
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(stop - start)

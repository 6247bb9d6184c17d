"""Reading the store's history (DESIGN "Layers": history with full provenance): who wrote what and
when, from the commits and their ``Memsync-Host`` trailer."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from datetime import datetime

from memsync.base.layout import HOST_TRAILER
from memsync.store.repo import StoreGit

# ``git log`` as ``records`` reads it: each commit starts with RS, its fields end with US.
LOG_ARGS = ("log", "--no-ext-diff", "--no-color", "--format=%x1e%H%x1f%aI%x1f%B%x1f")
# git takes a pickaxe (``-S``) only as an argument, and one argument may not pass 128 KiB (Linux's
# MAX_ARG_STRLEN) nor hold a NUL: a longer text is looked up by a bounded part, each commit checked here.
_PICKAXE_CHARS = 1024
_ARGUMENT_SAFE = re.compile(r"[^\x00\ud800-\udfff]+")
# No file system takes a longer path: a longer selector is text, never asked for as a path.
_PATH_MAX_BYTES = 4096
NO_BLOB = "0" * 40


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


def commit(g: StoreGit, sha: str) -> LogRecord:
    """The record of commit ``sha`` (``files`` empty). Raises ``MemsyncError`` when git fails."""
    return records(g.check(*LOG_ARGS, "--no-walk", sha).out)[0]


def searched(g: StoreGit, text: str, extra: tuple[str, ...]) -> Iterator[LogRecord]:
    """What ``git log -S<text> EXTRA`` lists, in its order, whatever the length of ``text``: a text
    that fits an argument is git's own pickaxe; a longer one (or one holding a NUL or a lone surrogate) is
    looked for by its first argument-safe part, and a commit is kept (``files``: the files it kept) when it
    changes how often the whole text occurs in a file, as ``-S`` counts. Nothing when ``text`` has no
    argument-safe part. Raises ``MemsyncError`` when git fails."""
    part = _ARGUMENT_SAFE.search(text)
    if part is None:
        return
    needle = part.group()[:_PICKAXE_CHARS]
    if needle == text:
        yield from records(g.check(*LOG_ARGS, "--name-only", "-z", f"-S{text}", *extra).out)
        return
    args = (*LOG_ARGS, "--raw", "-z", "--abbrev=40", "--no-renames", f"-S{needle}", *extra)
    whole = text.encode("utf-8", "surrogatepass")
    for chunk in _chunks(g.check(*args).out):
        record = _log_record(chunk)
        changed = _raw_changes(chunk.split("\x1f", 3)[3])
        texts = _blobs(g, [blob for _, old, new in changed for blob in (old, new) if blob != NO_BLOB])
        kept = tuple(
            name
            for name, old, new in changed
            if texts.get(old, b"").count(whole) != texts.get(new, b"").count(whole)
        )
        if kept:
            yield dataclasses.replace(record, files=kept)


def introduced(g: StoreGit, text: str, path: str) -> LogRecord | None:
    """The oldest commit whose change to store path ``path`` adds or removes ``text`` (``git log -S``,
    merges skipped: a merged line is credited to the commit that wrote it), None when there is none.
    The store has a commit (``HEAD``). Raises ``MemsyncError`` when git fails."""
    return next(searched(g, text, ("--reverse", "--", path)), None)


def last_change(g: StoreGit, path: str) -> LogRecord | None:
    """The latest commit that changed store path ``path`` (``files`` empty), None when none did. The
    store has a commit (``HEAD``). Raises ``MemsyncError`` when git fails."""
    return next(iter(records(g.check(*LOG_ARGS, "-n1", "--", path).out)), None)


def may_be_path(selector: str) -> bool:
    """Whether ``selector`` can name a file (no NUL, within the longest path): else it is only text."""
    return "\0" not in selector and len(selector.encode("utf-8", "surrogatepass")) <= _PATH_MAX_BYTES


def _raw_changes(raw: str) -> list[tuple[str, str, str]]:
    """(path, old blob, new blob) of each change in ``git log --raw -z --abbrev=40 --no-renames`` output."""
    fields = [field.strip("\n") for field in raw.split("\0")]
    fields = [field for field in fields if field]
    # Each change is ":<old mode> <new mode> <old blob> <new blob> <status>" then the path.
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if meta.startswith(":"):
            old, new = meta.split()[2:4]
            changes.append((path, old, new))
    return changes


def _blobs(g: StoreGit, shas: list[str]) -> dict[str, bytes]:
    """The content of each blob of ``shas`` (one ``git cat-file --batch``)."""
    if not shas:
        return {}
    batch = g.check("cat-file", "--batch", stdin="".join(f"{sha}\n" for sha in shas).encode()).stdout
    found: dict[str, bytes] = {}
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        header = batch[pos:header_end].decode().split()
        pos = header_end + 1
        if len(header) == 3:  # else "<sha> missing": a blob this clone lacks holds nothing
            size = int(header[2])
            found[header[0]] = batch[pos : pos + size]
            pos += size + 1
    return found


def records(out: str) -> list[LogRecord]:
    """The commits of ``git log`` output made with ``LOG_ARGS``, in its order."""
    return [_log_record(chunk) for chunk in _chunks(out)]


def _chunks(out: str) -> list[str]:
    return [chunk for chunk in out.split("\x1e") if chunk.strip()]


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
    found = tuple(name.strip("\n") for name in names.split("\0") if name.strip("\n"))
    return LogRecord(
        sha=sha.strip(),
        host=host,
        date=datetime.fromisoformat(date),
        message="\n".join(kept).strip(),
        files=found,
    )

"""Reading the store's history (DESIGN "Layers": history with full provenance): who wrote what and
when, from the commits and their ``Memsync-Host`` trailer."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from memsync.layout import HOST_TRAILER
from memsync.store.repo import StoreGit, log

_LOG_ARGS = ("log", "--no-ext-diff", "--no-color", "--format=%x1e%H%x1f%aI%x1f%B%x1f")


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


def history(g: StoreGit, selector: str | None, limit: int | None) -> list[LogRecord]:
    """``facade.Store.log``. Raises ``MemsyncError`` when git fails."""
    args = [*_LOG_ARGS, "--name-only", "-z"]
    if limit is not None:
        args.append(f"-n{limit}")
    if g.rev("HEAD") is None:
        return []
    if selector is None:
        out = g.check(*args).out
    else:
        out = g.check(*args, "--", selector).out
        if not out.strip():
            out = g.check(*args, f"-S{selector}").out
    return [_log_record(chunk) for chunk in out.split("\x1e") if chunk.strip()]


def introduced(g: StoreGit, text: str, path: str) -> LogRecord | None:
    """``facade.Store.introduced``. Raises ``MemsyncError`` when git fails."""
    if g.rev("HEAD") is None:
        return None
    out = g.check(*_LOG_ARGS[:1], "--reverse", *_LOG_ARGS[1:], f"-S{text}", "--", path).out
    first = next((chunk for chunk in out.split("\x1e") if chunk.strip()), None)
    return None if first is None else _log_record(first)


def added_lines(g: StoreGit, sha: str) -> list[bytes]:
    """The lines commit ``sha``'s diff adds (without the ``+``), [] when git cannot show it."""
    shown = g.run("show", "--format=", "--no-ext-diff", "--no-color", "--unified=0", sha, timeout=60)
    lines = shown.stdout.splitlines() if shown.ok else []
    return [raw[1:] for raw in lines if raw.startswith(b"+") and not raw.startswith(b"+++")]


def ahead_behind(g: StoreGit, remote: str) -> tuple[int, int]:
    """``facade.Store.ahead_behind``."""
    tracking = f"refs/remotes/{remote}/{g.cfg.branch}"
    both = g.run("rev-list", "--left-right", "--count", f"HEAD...{tracking}")
    if both.status == 0:
        ahead, behind = both.out.split()
        return int(ahead), int(behind)
    # The remote has no copy yet (or this store no commit): everything here is ahead.
    alone = g.run("rev-list", "--count", "HEAD")
    return (int(alone.out) if alone.status == 0 else 0), 0


def files(g: StoreGit) -> list[str]:
    """Every file in the store's current commit (POSIX paths relative to the worktree, sorted)."""
    out = g.check("ls-tree", "-r", "-z", "--name-only", "HEAD").out
    return sorted(name for name in out.split("\0") if name)


def gc_auto(g: StoreGit) -> None:
    """``git gc --auto``; a failure is logged, not raised."""
    result = g.run("gc", "--auto", "--quiet")
    if result.status != 0:
        log.warning("store %s: git gc --auto failed: %s", g.name, result.reason)


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

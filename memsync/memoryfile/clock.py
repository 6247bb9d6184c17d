"""Bad clocks (DESIGN "Hostile input": entries dated in the future of this machine's clock are flagged
with the host that wrote them; "View semantics": later wins by ``created_at``).

A machine whose clock runs ahead writes entries that outrank every later version of them on every
machine. Two defences, both from local data only (the store's history and its remote-tracking refs,
never the network):

- **Flags.** An entry dated more than ``TOLERANCE_S`` after this machine's clock is reported by
  ``check``, ``status`` and ``doctor`` with the host whose commit added its line (its ``Memsync-Host``
  trailer) and the fix: a superseding entry, which removes it from the view whatever its date.
- **A guard on memsync's own writers.** Every entry written through ``MemoryFile.append`` (``remember``,
  ``forget``, ``handoff``, ``import``, the MCP tools) is refused while this machine's clock is ahead of
  its remotes': a peer's commit made after this machine's newest commit (it descends from it) can
  only be later in fact, so when every peer dates theirs more than ``TOLERANCE_S`` earlier, this
  clock is ahead. (A remote whose newest commit is old says nothing: its peers may just be idle.)
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memsync.base import git
from memsync.base.layout import HOST_TRAILER
from memsync.base.paths import StoreLayout, config_path
from memsync.config.file import load_config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import ParsedMemory, Problem, parse_memory
from memsync.formats.jsonl.records import Entry
from memsync.tracks.resolve import load_tracks
from memsync.tracks.tracked import locate

TOLERANCE_S = 300.0

_TIMEOUT_S = 60.0
_OWN_COMMITS_SCANNED = 500


def duration(seconds: float) -> str:
    """``seconds`` as a rounded duration for a message: 45 s, 12 minutes, 5 hours, 2 days, 73 years."""
    for unit, size in (("year", 365.25 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= 0.95 * size:
            count = round(seconds / size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds:.0f} s"


@dataclass(frozen=True)
class FutureEntry:
    """An entry line dated more than TOLERANCE_S after this clock: where it is (``file`` as the caller
    names it, 1-based ``line``), its id and date, how far ahead (seconds) and who committed it (None
    when no store history has the line)."""

    file: str
    line: int
    entry_id: str
    created_at: str
    ahead_s: float
    host: str | None

    def advice(self) -> str:
        """What it is and how to correct it, in one sentence."""
        who = f"written by host {self.host}" if self.host else "not yet in a store's history"
        return (
            f"entry {self.entry_id} is dated {self.created_at}, {duration(self.ahead_s)} ahead of this "
            f"machine's clock ({who}), so it outranks every later version of it. Correct it with a "
            f'superseding entry, which wins whatever its date: memsync remember "..." '
            f"--supersedes {self.entry_id}"
        )


def _git(repo: Path, *args: str) -> str:
    """stdout of ``git -C repo ARGS`` ("" when git fails: no history yet, an unknown ref)."""
    done = git.attempt(
        ["-C", str(repo), *args],
        env={"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
        timeout=_TIMEOUT_S,
    )
    return done.stdout.decode("utf-8", "replace") if done is not None and done.ok else ""


def _hosts_adding(repo: Path, rel: str, lines: Iterable[bytes]) -> dict[bytes, str | None]:
    """For each line, the host of the first commit (oldest first) whose diff of ``rel`` adds it."""
    wanted = {line.decode("utf-8", "replace"): line for line in lines}
    found: dict[bytes, str | None] = {}
    host: str | None = None
    header = f"--format=%x00%(trailers:key={HOST_TRAILER},valueonly,separator=%x2C)"
    log = _git(
        repo, "log", "--reverse", "-p", "--no-ext-diff", "--no-color", "--unified=0", header, "--", rel
    )
    for text in log.split("\n"):
        if text.startswith("\0"):
            host = text[1:].strip() or None
        elif text.startswith("+") and (raw := wanted.get(text[1:])) is not None:
            found.setdefault(raw, host)
    return found


def future_entries(
    parsed: ParsedMemory, now: datetime, file: str, history: tuple[Path, str] | None = None
) -> list[FutureEntry]:
    """The entries of ``parsed`` dated more than TOLERANCE_S after ``now`` whose id is in the view (one
    already superseded or deleted outranks nothing), reported under ``file``; ``history`` (store
    worktree, store path) names where to find the host that committed each."""
    live = {entry.id for entry in parsed.view(now)}
    late = [
        (numbered.line, numbered.raw, entry, ahead)
        for numbered in parsed.records
        if isinstance(entry := numbered.record, Entry)
        and entry.id in live
        and (ahead := (entry.created - now).total_seconds()) > TOLERANCE_S
    ]
    hosts = _hosts_adding(*history, (raw for _, raw, _, _ in late)) if late and history is not None else {}
    return [
        FutureEntry(file, line, entry.id, entry.created_at, ahead, hosts.get(raw))
        for line, raw, entry, ahead in late
    ]


def future_problems(path: Path, parsed: ParsedMemory, now: datetime | None = None) -> list[Problem]:
    """``check``'s problems for the future-dated entries of the live memory file ``path``; hosts come
    from the history of the store that tracks it (config at ``config_path()``), when one does."""
    config = load_tracks(config_path()) if config_path().is_file() else None
    where = locate(config, path)
    history = None if config is None or where is None else (config.stores[where[0]].path, where[1])
    found = future_entries(parsed, now or datetime.now(UTC), str(path), history)
    return [Problem(entry.line, entry.advice(), "created_at") for entry in found]


def future_in_store(store: Path, now: datetime | None = None) -> list[FutureEntry]:
    """The future-dated entries of every memory file committed in the store worktree ``store``, each
    with the host that committed it; ``file`` is the store path. For ``status`` and ``doctor``."""
    moment = now or datetime.now(UTC)
    found: list[FutureEntry] = []
    for rel in sorted(_git(store, "ls-files", "-z", "--", "*.jsonl").split("\0")):
        if rel:
            try:
                data = (store / rel).read_bytes()
            except OSError:
                continue
            found += future_entries(parse_memory(data), moment, rel, (store, rel))
    return found


@dataclass(frozen=True)
class Skew:
    """Evidence that this clock runs ahead: host ``host`` committed ``theirs`` after this machine's
    commit ``ours`` (it descends from it) yet dated it ``ahead_s`` seconds earlier."""

    ahead_s: float
    host: str
    ours: str
    ours_at: float
    theirs: str


_SKEWS: dict[tuple[Path, str, tuple[int, ...]], Skew | None] = {}


def _refs_mark(git_dir: Path) -> tuple[int, ...]:
    """What changes whenever HEAD or a remote-tracking ref moves (their reflogs, packed refs)."""
    paths = [git_dir / "logs" / "HEAD", git_dir / "packed-refs"]
    remotes = git_dir / "logs" / "refs" / "remotes"
    if remotes.is_dir():
        paths += sorted(p for p in remotes.rglob("*") if p.is_file())
    return tuple(p.stat().st_mtime_ns if p.exists() else 0 for p in paths)


def clock_skew(store: Path, host: str) -> Skew | None:
    """How far this machine's clock (host ``host``) runs ahead of its peers', from the store worktree
    ``store``: the newest commit of ``host`` on HEAD and the commits of other hosts on the
    remote-tracking refs that descend from it. Each other host's earliest such commit bounds the skew
    from below; the smallest bound over the hosts is returned when positive (a peer whose clock agrees
    with this one clears it), else None. No network; cached until a ref moves."""
    key = (store, host, _refs_mark(StoreLayout(store).git_dir))
    if key not in _SKEWS:
        _SKEWS.clear()
        _SKEWS[key] = _skew(store, host)
    return _SKEWS[key]


def _commits(log: str) -> list[tuple[str, float, str]]:
    rows = (line.split(" ", 2) for line in log.splitlines() if line.count(" ") >= 2)
    return [(sha, float(stamp), who.strip()) for sha, stamp, who in rows]


def _skew(store: Path, host: str) -> Skew | None:
    fmt = f"--format=%H %ct %(trailers:key={HOST_TRAILER},valueonly,separator=%x2C)"
    own = [c for c in _commits(_git(store, "log", f"-n{_OWN_COMMITS_SCANNED}", fmt, "HEAD")) if c[2] == host]
    refs = _git(store, "for-each-ref", "--format=%(refname)", "refs/remotes").split()
    if not own or not refs:
        return None
    ours, ours_at, _ = own[0]
    earliest: dict[str, tuple[float, str]] = {}
    for sha, stamp, who in _commits(_git(store, "log", "--ancestry-path", fmt, f"^{ours}", *refs)):
        if who and who != host and stamp < earliest.get(who, (float("inf"), ""))[0]:
            earliest[who] = (stamp, sha)
    if not earliest:
        return None
    who, (stamp, theirs) = max(earliest.items(), key=lambda item: item[1][0])
    ahead = ours_at - stamp
    return Skew(ahead, who, ours, ours_at, theirs) if ahead > 0 else None


def refuse_if_ahead(what: str, moment: float | None = None) -> None:
    """Raise MemsyncError when an entry dated ``moment`` (seconds; default now) would be written while
    this machine's clock runs more than TOLERANCE_S ahead of its remotes' (see :func:`clock_skew`, over
    every store of the config at ``config_path()``; nothing to compare with, nothing refused), unless
    the clock has since gone back before its own last commit. ``what`` names the write."""
    path = config_path()
    if not path.is_file():
        return
    try:
        config = load_config(path)
    except MemsyncError:
        return  # the config's own error is reported by whatever reads it; a write need not wait for it
    when = time.time() if moment is None else moment
    for store in config.stores.values():
        if not StoreLayout(store.path).exists:
            continue
        skew = clock_skew(store.path, config.host)
        if skew is not None and skew.ahead_s > TOLERANCE_S and when + TOLERANCE_S >= skew.ours_at:
            raise MemsyncError(
                f"{what}: this machine's clock looks {duration(skew.ahead_s)} ahead: host {skew.host} "
                f"committed {skew.theirs[:10]} after this machine's {skew.ours[:10]} yet dated it that much "
                f"earlier, and an entry dated by this clock would outrank later corrections everywhere. "
                f"Fix the clock (timedatectl set-ntp true), then retry"
            )

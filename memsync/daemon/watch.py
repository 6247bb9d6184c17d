"""Noticing changes: one watchdog observer over every tracked path, and the debounce that turns a burst of
events into one sync cycle (DESIGN "One sync cycle" step 1).

The handler only classifies an event's path and calls ``on_event`` (the daemon passes ``queue.put``);
everything else happens on the daemon's thread, which calls :meth:`Watcher.refresh` after events so that
new directories, tracked paths that were created and remote refs that reappeared get watched.

Each directory gets its own non-recursive inotify watch (a role directory is walked, so the effect is
recursive): that way a watch the kernel refuses (watch limit) is known per directory, and exactly those
directories fall back to a polling observer. The store is never watched, so the daemon's own git writes
cannot reset a timer.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from memsync.base.layout import is_ignored
from memsync.daemon.watch_rules import Rules, Source
from memsync.store.remotes import local_remote_path

log = logging.getLogger(__name__)

# Directory-modified, open, access and attribute events say nothing a cycle needs; leaving them out keeps
# a watched ancestor such as $HOME (for a tracked path not created yet) quiet.
_EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]
_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)
POLL_INTERVAL_S = 1.0
# The logger of watchdog's inotify reader, the one place it tells of dropped events.
_WATCHDOG_INOTIFY = "watchdog.observers.inotify_c"


@dataclass(frozen=True)
class WatchEvent:
    """One relevant change: ``at`` is ``time.monotonic()`` seconds when the handler saw it; ``source`` is
    "local" (a tracked path), "remote" (the refs of a remote that is a local path) or "layout" (a project
    folder, or the memory folder in one, appeared or went in a host root); ``path`` is absolute.
    ``doubt``: the files that changed cannot be named by ``path`` alone (a directory appeared, moved or
    went; the kernel dropped events, ``path`` is then "/"): the next cycle visits every file."""

    at: float
    source: Source
    path: str
    doubt: bool = False


class _Overflow(logging.Handler):
    """watchdog says only in its log that the kernel dropped events (its inotify queue overflowed): that
    line becomes an event in doubt, so the next cycle visits every file."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__(logging.WARNING)
        self._watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        """Turn watchdog's overflow warning into a ``WatchEvent`` in doubt."""
        if "overflow" in record.getMessage():
            self._watcher.on_event(WatchEvent(time.monotonic(), "local", "/", doubt=True))


class _Handler(FileSystemEventHandler):
    """Classifies and enqueues; never does work on the observer thread (an exception would end it)."""

    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        """Enqueue ``event`` (its destination, else its source path) if it concerns a target."""
        try:
            if isinstance(event, DirDeletedEvent | DirMovedEvent):
                # Its watch died with it; a new directory at that path may reuse the inode number.
                self._watcher._gone.add(Path(os.fsdecode(event.src_path)))
            rules = self._watcher._rules
            # Both ends of a rename changed: the destination (an atomic save onto a tracked file), and the
            # source, now gone.
            dest = getattr(event, "dest_path", "")
            paths = [os.fsdecode(dest)] if dest else []
            paths.append(os.fsdecode(event.src_path))
            for raw in paths:
                source = rules.classify(raw)
                if source is not None:
                    self._watcher.on_event(WatchEvent(time.monotonic(), source, raw, event.is_directory))
        except Exception:  # an exception here would end the observer thread: watching must go on
            log.exception("could not handle file event %r", event)


def remote_git_dir(url: str, base: Path) -> Path | None:
    """The git dir of a remote whose URL is a local path or ``file://`` URL, else None (ssh, https).

    A relative path is taken relative to ``base`` (the store's work tree, where git resolves it). A bare
    repository is its own git dir; a work tree's is ``<path>/.git``. The path need not exist yet (a
    remote can be unreachable for a while): the answer then assumes a bare repository.
    """
    local = local_remote_path(url)
    if local is None:
        return None
    path = Path(os.path.abspath(base / local.expanduser()))
    return path / ".git" if (path / ".git").is_dir() else path


def _nearest_existing(path: Path) -> Path:
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


def _subdirs(root: Path) -> list[Path]:
    """The directories directly in ``root`` (not ignored ones); [] when it cannot be listed."""
    try:
        return [
            Path(entry.path) for entry in os.scandir(root) if entry.is_dir() and not is_ignored(entry.name)
        ]
    except OSError:
        return []


def _walk_dirs(root: Path) -> list[Path]:
    found = [root]
    for parent, dirnames, _ in os.walk(root):
        dirnames[:] = [name for name in dirnames if not is_ignored(name)]
        found.extend(Path(parent) / name for name in dirnames)
    return found


@dataclass
class _Scheduled:
    observer: Any
    watch: Any
    inode: int
    polling: bool


@dataclass
class Watcher:
    """The observer(s) over tracked paths and remote refs; ``on_event`` is called from observer threads.

    Use ``with Watcher(on_event) as w: w.set_targets(tracked, remote_dirs, layout)``. ``tracked`` are
    live role directories and memory files (missing ones are watched from their nearest existing parent);
    ``remote_dirs`` are git dirs of local-path remotes (see :func:`remote_git_dir`), of which
    ``refs/heads`` and ``packed-refs`` are watched; ``layout`` are host roots (Claude Code's projects
    folder), watched with each folder in them, not recursively, for project memory folders that appear.
    """

    on_event: Callable[[WatchEvent], None]
    _rules: Rules = field(default_factory=Rules)
    _tracked: tuple[Path, ...] = ()
    _remote_dirs: tuple[Path, ...] = ()
    _layout: tuple[Path, ...] = ()
    _scheduled: dict[Path, _Scheduled] = field(default_factory=dict)
    _observer: Any = None
    _poller: Any = None
    _limit_warned: bool = False
    _gone: set[Path] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _overflow: logging.Handler | None = None

    def start(self) -> None:
        """Start the observer threads. If inotify instances are exhausted (EMFILE) everything is polled."""
        self._overflow = _Overflow(self)
        logging.getLogger(_WATCHDOG_INOTIFY).addHandler(self._overflow)
        try:
            self._observer = Observer()
            self._observer.start()
        except OSError as exc:
            if exc.errno not in _LIMIT_ERRNOS:
                raise
            self._warn_limit(exc)
            self._observer = None

    def stop(self) -> None:
        """Stop and join the observer threads."""
        if self._overflow is not None:
            logging.getLogger(_WATCHDOG_INOTIFY).removeHandler(self._overflow)
            self._overflow = None
        for observer in (self._observer, self._poller):
            if observer is not None and observer.is_alive():
                observer.stop()
                observer.join()
        self._scheduled.clear()
        self._observer = self._poller = None

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def polled_dirs(self) -> list[Path]:
        """Directories watched by polling because inotify refused them (watch limit)."""
        return sorted(path for path, entry in self._scheduled.items() if entry.polling)

    @property
    def watched_dirs(self) -> list[Path]:
        """Every directory watched right now, by inotify or polling."""
        return sorted(self._scheduled)

    def set_targets(
        self, tracked: Iterable[Path], remote_dirs: Iterable[Path], layout: Iterable[Path] = ()
    ) -> None:
        """Watch exactly these tracked paths, the refs of these remote git dirs and these host roots
        (replaces earlier targets)."""
        self._tracked = tuple(Path(path).expanduser().absolute() for path in tracked)
        self._remote_dirs = tuple(remote_dirs)
        self._layout = tuple(Path(path).expanduser().absolute() for path in layout)
        self.refresh()

    def refresh(self) -> None:
        """Bring the watches up to date with the file system: watch new directories and tracked paths that
        appeared, drop watches of directories that vanished. Cheap (a walk of the tracked directories);
        the daemon calls it after every batch of events."""
        with self._lock:
            dirs: list[Path] = []
            files: set[Path] = set()
            pending: list[Path] = []
            wanted: list[Path] = []
            for target in self._tracked:
                # watchdog watches a symlink itself (IN_DONT_FOLLOW): a tracked path that is one is also
                # watched where it points, whose events carry the real path.
                real = _resolved(target) if target.is_symlink() else None
                if target.is_dir():
                    dirs.append(target)
                    # The parent too: a tracked directory renamed or removed as a whole is an event there.
                    wanted.extend((target.parent, *_walk_dirs(target)))
                    if real is not None:
                        dirs.append(real)
                        wanted.append(real)
                elif target.is_file() or (target.parent.is_dir() and target.suffix == ".jsonl"):
                    files.add(target)
                    wanted.append(target.parent)
                    if real is not None:
                        files.add(real)
                        wanted.append(real.parent)
                else:
                    pending.append(target)
                    wanted.append(_nearest_existing(target))
            ref_dirs: list[Path] = []
            packed: set[Path] = set()
            pending_refs: list[Path] = []
            for git_dir in self._remote_dirs:
                heads = git_dir / "refs" / "heads"
                if heads.is_dir():
                    ref_dirs.append(heads)
                    packed.add(git_dir / "packed-refs")
                    wanted.append(git_dir)
                    wanted.extend(_walk_dirs(heads))
                else:
                    pending_refs.append(heads)
                    wanted.append(_nearest_existing(heads))
            for root in self._layout:
                wanted.extend([root, *_subdirs(root)] if root.is_dir() else [_nearest_existing(root)])
            self._rules = Rules(
                tuple(dirs),
                frozenset(files),
                tuple(pending),
                tuple(ref_dirs),
                frozenset(packed),
                tuple(pending_refs),
                self._layout,
            )
            self._reschedule(dict.fromkeys(wanted))

    def _reschedule(self, wanted: dict[Path, None]) -> None:
        gone, self._gone = self._gone, set()
        for path, entry in list(self._scheduled.items()):
            if path not in wanted or path in gone or _inode(path) != entry.inode:
                self._unschedule(path)
        for path in wanted:
            if path not in self._scheduled:
                self._schedule(path)

    def _schedule(self, path: Path) -> None:
        inode = _inode(path)
        if inode is None:
            return
        handler = _Handler(self)
        if self._observer is not None:
            try:
                watch = self._observer.schedule(handler, str(path), event_filter=_EVENT_TYPES)
                self._scheduled[path] = _Scheduled(self._observer, watch, inode, polling=False)
                return
            except OSError as exc:
                if not path.is_dir():
                    return  # vanished meanwhile: the next refresh sees what replaced it
                if exc.errno in _LIMIT_ERRNOS:
                    self._warn_limit(exc)
                else:
                    log.warning("cannot watch %s with inotify (%s): polling it instead", path, exc)
        if self._poller is None:  # started on first need: most machines never poll
            self._poller = PollingObserver(timeout=POLL_INTERVAL_S)
            self._poller.start()
        try:
            watch = self._poller.schedule(handler, str(path), event_filter=_EVENT_TYPES)
        except OSError as exc:
            log.warning("cannot watch %s (%s): its changes sync on the pull timer only", path, exc)
            return
        self._scheduled[path] = _Scheduled(self._poller, watch, inode, polling=True)

    def _unschedule(self, path: Path) -> None:
        entry = self._scheduled.pop(path)
        try:
            entry.observer.unschedule(entry.watch)
        except (KeyError, OSError):
            # The kernel already dropped the watch of a deleted directory.
            log.debug("watch of %s was already gone", path)

    def _warn_limit(self, exc: OSError) -> None:
        if not self._limit_warned:
            self._limit_warned = True
            log.warning(
                "inotify refused a watch (%s): polling every %.0f s instead for what could not be watched. "
                "Raise the limit (sysctl fs.inotify.max_user_watches / max_user_instances) for instant sync.",
                exc.strerror or exc,
                POLL_INTERVAL_S,
            )


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _resolved(path: Path) -> Path | None:
    """Where the symlink ``path`` points, or None for a symlink loop (which cannot be watched)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError for a loop
        return None

"""Set memsync up: ``init``, ``store add``, ``track``/``untrack``, ``remote add|remove``, ``up`` (issue 5).

Every command edits ``config.toml`` through ``config.edit_config`` (tomli-w): every key and value the user
wrote is kept, unknown keys included, but tomli-w cannot keep comments or the file's formatting. When the
file held comments, the previous bytes are saved as ``config.toml.bak`` and the user is told. A running
daemon is sent SIGHUP to reload the config at once; without a daemon, the change applies when one starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.config import (
    Config,
    StoreConfig,
    Track,
    config_path,
    edit_config,
    load_config,
)
from memsync.cycle import ensure_store
from memsync.daemon import run_daemon
from memsync.detect import Location, detect
from memsync.errors import MemsyncError
from memsync.fsio import atomic_write
from memsync.instance import running_daemon_pid

DEFAULT_STORE = "personal"
DEFAULT_REMOTE = "origin"
REMOTE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Report:
    """What a setup command did, as lines for the user; ``changed`` is False when nothing was written."""

    lines: tuple[str, ...]
    changed: bool


def _home_relative(path: Path) -> str:
    """``path`` as the config stores it: ``~/...`` under the home directory (the same on every machine)."""
    path = Path(os.path.abspath(path.expanduser()))
    home = Path(os.path.abspath(Path.home()))
    if path.is_relative_to(home) and path != home:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def _edit(path: Path, mutate: Callable[[dict[str, Any]], None]) -> tuple[Config, list[str]]:
    """``edit_config`` plus what tomli-w cannot keep: comments (the old file is saved as ``.bak``)."""
    lines: list[str] = []
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        before = b""
    if any(line.lstrip().startswith(b"#") or b" #" in line for line in before.splitlines()):
        backup = path.with_name(path.name + ".bak")
        backup.write_bytes(before)
        lines.append(
            f"note: {path} is rewritten with tomli-w, which keeps every key and value but not "
            f"comments or formatting; the previous file is saved as {backup}"
        )
    return edit_config(path, mutate), lines


@contextmanager
def _undone_on_failure(path: Path) -> Iterator[None]:
    """Put the config at ``path`` back as it was (or absent) when the block raises ``MemsyncError``: a
    store git could not create (a remote that does not exist, say) leaves no config naming it."""
    try:
        before: bytes | None = path.read_bytes()
    except FileNotFoundError:
        before = None
    try:
        yield
    except MemsyncError:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, before)
        raise


def _reload_daemon(path: Path) -> str:
    pid = running_daemon_pid(path)
    if pid is None:
        return "no daemon is running: the change applies when it starts (`memsync up`)"
    try:
        os.kill(pid, signal.SIGHUP)
    except OSError as exc:
        return f"could not signal the daemon (PID {pid}): {exc}; it applies the change when restarted"
    return f"the running daemon (PID {pid}) reloads its config now"


def _store_table(raw: dict[str, Any], name: str) -> dict[str, Any]:
    stores = raw.setdefault("stores", {})
    if name not in stores:
        raise MemsyncError(
            f"store {name!r} is not configured: it is not in the config. "
            f"Run `memsync store add {name}` or choose one of: {', '.join(stores) or 'none'}"
        )
    table: dict[str, Any] = stores[name]
    return table


def _tracked(config: Config, live: Path) -> tuple[StoreConfig, str] | None:
    """The store tracking ``live`` and its store path (for a host folder of project folders, the prefix
    of theirs), or None."""
    for store in config.stores.values():
        for track in store.tracks:
            if track.live == live:
                return store, track.store_path
        for root in store.host_roots:
            if root.live == live:
                return store, root.prefix
    return None


def _overlapping(config: Config, live: Path, store: str = DEFAULT_STORE) -> Track | None:
    """The track of ``store`` that contains ``live``, equals it or lies inside it, if any (tracking
    ``live`` in that store too would sync the same files twice). Tracks of other stores do not count: a
    path nested in another store's track is taken out of it (``config.Track.excludes``)."""
    if store not in config.stores:
        return None
    for track in config.stores[store].tracks:
        if live.is_relative_to(track.live) or track.live.is_relative_to(live):
            return track
    return None


def _remote_has_branch(url: str, branch: str) -> bool:
    try:
        done = subprocess.run(
            ["git", "ls-remote", "--heads", url, branch],
            capture_output=True,
            text=True,
            check=False,
            timeout=REMOTE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except subprocess.TimeoutExpired:
        return False  # the store's own fetch then reports the unreachable remote
    return done.returncode == 0 and bool(done.stdout.strip())


def _create_store(config: Config, store: StoreConfig) -> str:
    """Create or clone the store's repository if it does not exist yet; one line saying which."""
    if (store.path / ".git").exists():
        ensure_store(config, store)
        return f"store {store.name}: {store.path} (exists)"
    first = next(iter(store.remotes.items()), None)
    # Asked before creating, only to say what happened: the store itself decides the same way.
    cloned = first is not None and _remote_has_branch(first[1], store.branch)
    ensure_store(config, store)
    if first is None:
        return f"store {store.name}: {store.path} created (local history; add a remote later)"
    if cloned:
        return f"store {store.name}: {store.path} cloned from {first[0]} ({first[1]})"
    return f"store {store.name}: {store.path} created and pushed to {first[0]} ({first[1]}), which was empty"


def _detected_tracks(
    locations: Sequence[Location], already: Config | None
) -> tuple[list[Location], list[str]]:
    chosen: list[Location] = []
    lines: list[str] = []
    for loc in locations:
        if not loc.track:
            lines.append(f"found {loc.found.value} {loc.live}: {loc.note}")
            continue
        if already is not None and _overlapping(already, loc.live) is not None:
            continue
        chosen.append(loc)
    return chosen, lines


def init(
    remote: str | None = None,
    store: Path | None = None,
    branch: str | None = None,
    tracks: Sequence[Path] = (),
    path: Path | None = None,
) -> Report:
    """Write the config (``path``, default ``config_path()``) and create the default store ``personal``.

    ``remote``: URL of the store's ``origin`` (cloned if it has history, else a new store is pushed to
    it); ``store``: its working tree (default ``default_store_dir``); ``branch`` (default
    main); ``tracks``: paths to track besides the detected memory locations (``detect.detect``). Detected
    and given paths already tracked are left alone, so re-running changes nothing (the file is not
    rewritten). Raises ``MemsyncError`` when the existing config disagrees (another origin URL, store
    path or branch), or when git fails to create or clone the store.
    """
    path = config_path() if path is None else path
    existing = load_config(path) if path.exists() else None
    current = existing.stores.get(DEFAULT_STORE) if existing else None
    if current is not None:
        for key, want, have in (
            ("origin", remote, current.remotes.get(DEFAULT_REMOTE)),
            ("path", store and _absolute(store), current.path),
            ("branch", branch, current.branch),
        ):
            if want is not None and have is not None and want != have:
                raise MemsyncError(
                    f"memsync init: store {DEFAULT_STORE} already has {key} {have}, "
                    f"not {want}. Change it with `memsync remote add|remove` or in the config"
                )
    found, lines = _detected_tracks(detect(), existing)
    explicit: list[Path] = []
    for given in map(_absolute, tracks):
        covering = _overlapping(existing, given) if existing is not None else None
        if covering is not None and covering.live != given:
            lines.append(f"not tracking {given} separately: it overlaps the tracked {covering.live}")
        elif covering is None and all(loc.live != given for loc in found):
            explicit.append(given)
    needs_store = current is None
    needs_remote = remote is not None and (current is None or DEFAULT_REMOTE not in current.remotes)
    changed = bool(needs_store or needs_remote or found or explicit)

    def mutate(raw: dict[str, Any]) -> None:
        table = raw.setdefault("stores", {}).setdefault(DEFAULT_STORE, {})
        if store is not None:
            table["path"] = _home_relative(store)
        if branch is not None:
            table["branch"] = branch
        if remote is not None:
            table.setdefault("remotes", {})[DEFAULT_REMOTE] = remote
        entries = table.setdefault("track", [])
        entries.extend(
            {"path": _home_relative(loc.live), **({"as": loc.store_path} if loc.store_path else {})}
            for loc in found
        )
        entries.extend({"path": _home_relative(p)} for p in explicit)

    with _undone_on_failure(path):
        if changed:
            config, notes = _edit(path, mutate)
            lines.extend(notes)
            lines.append(f"config: {path} ({'created' if existing is None else 'updated'})")
        else:
            config = existing if existing is not None else load_config(path)
            lines.append(f"config: {path} (unchanged)")
        personal = config.stores[DEFAULT_STORE]
        lines.append(_create_store(config, personal))
    for track in personal.tracks:
        lines.append(f"tracking {track.live} as {track.store_path}")
    for root in personal.host_roots:
        lines.append(
            f"tracking {root.live}: each project's memory folder in it as {root.prefix}/<project>, "
            "also those created later"
        )
    if not personal.tracks and not personal.host_roots:
        lines.append("tracking nothing in this store: add memory with `memsync track PATH`")
    if changed and existing is not None:
        lines.append(_reload_daemon(path))
    return Report(tuple(lines), changed)


def store_add(
    name: str, remote: str | None = None, path: Path | None = None, config: Path | None = None
) -> Report:
    """Add store ``name`` (e.g. a team store) with optional ``remote`` as its origin, and create it.

    Nothing is tracked into it until ``track --store NAME``: no memory reaches its remote unasked.
    Raises ``MemsyncError`` if the store exists or git fails.
    """
    cfg_path = config_path() if config is None else config
    if cfg_path.exists() and name in load_config(cfg_path).stores:
        raise MemsyncError(f"memsync store add: store {name!r} already exists. Pick another name")

    def mutate(raw: dict[str, Any]) -> None:
        table: dict[str, Any] = {}
        if path is not None:
            table["path"] = _home_relative(path)
        if remote is not None:
            table["remotes"] = {DEFAULT_REMOTE: remote}
        raw.setdefault("stores", {})[name] = table

    with _undone_on_failure(cfg_path):
        new, lines = _edit(cfg_path, mutate)
        lines.append(_create_store(new, new.stores[name]))
    lines.append(f"nothing is tracked into {name} yet: `memsync track PATH --store {name}`")
    lines.append(_reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def track(
    live: Path, store: str = DEFAULT_STORE, as_path: str | None = None, config: Path | None = None
) -> Report:
    """Track ``live`` (a role directory or memory file) in ``store``, at ``as_path`` (default: DESIGN's
    default store path). If the store already holds content at that path (from peers), the next cycle
    merges it with the live content, losing nothing on either side, and the report says so. Tracking an
    already tracked path the same way changes nothing. Raises ``MemsyncError`` when the path is tracked
    elsewhere, lies inside or around a tracked path, the store is unknown, or the store path overlaps
    another track's.
    """
    cfg_path = config_path() if config is None else config
    live = _absolute(live)
    before = load_config(cfg_path)
    existing = _tracked(before, live)
    if existing is not None:
        where, store_path = existing
        if where.name == store and as_path in (None, store_path):
            return Report((f"{live} is already tracked in store {store} as {store_path}",), False)
        raise MemsyncError(
            f"memsync track: {live} is already tracked in store {where.name} as {store_path}. "
            "Run `memsync untrack` first"
        )
    covering = _overlapping(before, live, store)
    if covering is not None and live.is_relative_to(covering.live):
        inside = f"{covering.store_path}/{live.relative_to(covering.live).as_posix()}"
        if as_path in (None, inside):
            return Report(
                (
                    f"{live} is already synced in store {store} as {inside}, "
                    f"as part of the tracked {covering.live}",
                ),
                False,
            )
    if covering is not None:
        raise MemsyncError(
            f"memsync track: {live} overlaps the tracked {covering.live} in store {store}, so "
            f"its files would sync twice. Untrack {covering.live} first, or track it in "
            "another store"
        )
    elsewhere = [
        (name, track.live)
        for name, cfg in before.stores.items()
        if name != store
        for track in cfg.tracks
        if live.is_relative_to(track.live)
    ]

    def mutate(raw: dict[str, Any]) -> None:
        entry = {"path": _home_relative(live)}
        if as_path is not None:
            entry["as"] = as_path
        _store_table(raw, store).setdefault("track", []).append(entry)

    new, lines = _edit(cfg_path, mutate)
    store_cfg = new.stores[store]
    added = _tracked(new, live)
    assert added is not None  # edit_config validated the config with the new track in it
    store_path = added[1]
    lines.append(f"tracking {live} in store {store} as {store_path}")
    lines.extend(
        f"{live} is taken out of the tracked {outer} (store {name}): it syncs with store {store} only"
        for name, outer in elsewhere
    )
    in_store = store_cfg.path / store_path
    if in_store.exists() and (in_store.is_file() or any(in_store.iterdir())):
        lines.append(
            f"store {store} already holds {store_path} (from peers): the next sync merges it with "
            f"{live}; nothing on either side is lost"
        )
    if not live.exists():
        lines.append(f"{live} does not exist yet: memsync picks it up when it is created")
    lines.append(_reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def untrack(live: Path, config: Path | None = None) -> Report:
    """Stop syncing ``live``. Its content stays in the store (and on peers), listed by ``memsync status``
    as store content not tracked here; the live files are not touched. Raises ``MemsyncError`` if
    ``live`` is not tracked."""
    cfg_path = config_path() if config is None else config
    live = _absolute(live)
    found = _tracked(load_config(cfg_path), live)
    if found is None:
        raise MemsyncError(f"memsync untrack: {live} is not tracked. `memsync status` lists what is")
    store, store_path = found

    def mutate(raw: dict[str, Any]) -> None:
        table = _store_table(raw, store.name)
        table["track"] = [
            entry for entry in table.get("track", []) if _absolute(Path(str(entry.get("path", "")))) != live
        ]

    _, lines = _edit(cfg_path, mutate)
    lines.append(f"no longer tracking {live}; {store_path} stays in store {store.name}")
    lines.append(_reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def remote_add(name: str, url: str, store: str = DEFAULT_STORE, config: Path | None = None) -> Report:
    """Add remote ``name`` = ``url`` to ``store``; the next cycle fetches, merges and pushes to it.
    Raises ``MemsyncError`` if the store is unknown or already has a remote of that name."""
    cfg_path = config_path() if config is None else config

    def mutate(raw: dict[str, Any]) -> None:
        remotes = _store_table(raw, store).setdefault("remotes", {})
        if name in remotes:
            raise MemsyncError(
                f"memsync remote add: store {store} already has remote {name} "
                f"({remotes[name]}). Run `memsync remote remove {name} --store {store}` first"
            )
        remotes[name] = url

    _, lines = _edit(cfg_path, mutate)
    lines.append(f"store {store}: remote {name} = {url}")
    warning = _local_remote_warning(url)
    if warning:
        lines.append(warning)
    lines.append(_reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def _local_remote_warning(url: str) -> str | None:
    """A warning line when ``url`` is a local path (or ``file://`` URL) with no git repository there, None
    otherwise; network URLs are not contacted (the remote may be offline for now). The remote is added
    anyway: the user may create the repository later."""
    if url.startswith("file://"):
        path = Path(url.removeprefix("file://"))
    elif "://" in url or 0 < url.find(":") < (url.find("/") if "/" in url else len(url)):
        return None  # a network URL, or git's scp-like host:path
    else:
        path = Path(url).expanduser()
    if not path.exists():
        return (
            f"warning: {url} does not exist (added anyway): create it with `git init --bare {path}`, "
            "or fix the URL with `memsync remote remove` and `memsync remote add`"
        )
    done = subprocess.run(
        ["git", "ls-remote", "--heads", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=REMOTE_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    if done.returncode != 0:
        return (
            f"warning: {url} is not a git repository (added anyway): syncing fails until it is one. "
            "Fix the URL with `memsync remote remove` and `memsync remote add`"
        )
    return None


def remote_remove(name: str, store: str = DEFAULT_STORE, config: Path | None = None) -> Report:
    """Remove remote ``name`` from ``store``; history already exchanged stays. Raises ``MemsyncError`` if
    there is no such remote."""
    cfg_path = config_path() if config is None else config

    def mutate(raw: dict[str, Any]) -> None:
        remotes = _store_table(raw, store).get("remotes", {})
        if name not in remotes:
            raise MemsyncError(
                f"memsync remote remove: store {store} has no remote {name}. "
                f"Its remotes: {', '.join(remotes) or 'none'}"
            )
        del remotes[name]

    _, lines = _edit(cfg_path, mutate)
    lines.append(f"store {store}: remote {name} removed (history already exchanged stays)")
    lines.append(_reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def up(print_line: Callable[[str], None], path: Path | None = None) -> int:
    """``init`` with defaults when there is no config (its report goes to ``print_line``), then the
    daemon in the foreground until SIGTERM/SIGINT; returns the daemon's exit code."""
    path = config_path() if path is None else path
    if not path.exists():
        for line in init(path=path).lines:
            print_line(line)
    return run_daemon(path)

"""Set memsync up: ``init``, ``store add`` and ``up``; ``track``/``untrack`` are in
``setup_track``, ``remote add|remove`` in ``setup_remote``, what they share in ``config_edits``."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memsync.base import argcheck
from memsync.base.git import remote_attempt
from memsync.base.paths import StoreLayout, config_path, state_dir
from memsync.base.remote_url import PLAIN_NAME, redacted
from memsync.base.wording import plural
from memsync.commands import installs
from memsync.commands.config_edits import (
    DEFAULT_REMOTE,
    DEFAULT_STORE,
    Report,
    absolute,
    covered_line,
    home_relative,
    overlapping,
    reload_daemon,
    store_table,
    tracked,
    undone_on_failure,
)
from memsync.commands.detect import Found, Location, detect
from memsync.commands.keys import this_device
from memsync.commands.setup_remote import REMOTE_TIMEOUT_S
from memsync.config.file import (
    BRANCH_NAME,
    DEFAULT_BRANCH,
    NO_STORE,
    Config,
    StoreConfig,
    Track,
    default_store_dir,
    load_config,
)
from memsync.daemon.instance import running_daemon_pid
from memsync.daemon.loop import run_daemon
from memsync.errors import MemsyncError
from memsync.projects.store_paths import default_store_path_for
from memsync.store.access import ensure_store
from memsync.store.facade import Store
from memsync.store.remote_head import remote_head_branch
from memsync.store.storeid import foreign_message
from memsync.tracks.resolve import edit_tracks, load_stores, load_tracks

__all__ = [
    "DEFAULT_REMOTE",
    "DEFAULT_STORE",
    "Report",
    "init",
    "store_add",
    "store_list",
    "store_remove",
    "up",
]


def _remote_has_branch(url: str, branch: str, timeout_s: float) -> bool:
    done = remote_attempt("ls-remote", "--heads", url, branch, timeout_s=timeout_s)
    # Unreachable: False; the store's own fetch then reports the unreachable remote.
    return done is not None and done.status == 0 and bool(done.out.strip())


def _refuse_other_history(remote: str, branch: str | None, timeout_s: float) -> None:
    """Refuse a new store on ``remote`` when the user named no ``branch`` and the remote has branches
    but not the default one: memsync would push memory next to someone else's history (the store
    itself refuses a branch whose history is not memsync's). Unreachable: left to the store's fetch.
    Raises ``MemsyncError``."""
    if branch is not None:
        return
    done = remote_attempt("ls-remote", "--heads", remote, timeout_s=timeout_s)
    heads = {line.split("\t", 1)[-1] for line in done.out.splitlines()} if done and done.ok else set()
    if heads and f"refs/heads/{DEFAULT_BRANCH}" not in heads:
        raise MemsyncError(foreign_message(DEFAULT_REMOTE, remote, DEFAULT_BRANCH, other_branches=True))


def _refuse_foreign_remote(store: Store, added: str | None) -> None:
    """Refuse remote ``added`` (just configured; None: nothing added) of the existing ``store`` when its
    branch holds history that is not a memsync store's (``Store.foreign``). Raises ``MemsyncError``."""
    if added is not None and store.foreign(added):
        url, branch = store.cfg.remotes[added], store.cfg.branch
        raise MemsyncError(foreign_message(added, url, branch, store=store.cfg.name))


def _create_store(config: Config, store: StoreConfig, added: str | None = None) -> str:
    """Create or clone the store's repository if it does not exist yet; one line saying which. ``added``:
    the remote just added to an existing store. Raises ``MemsyncError`` when git fails or that remote
    holds history that is not a memsync store's."""
    if StoreLayout(store.path).exists:
        _refuse_foreign_remote(ensure_store(config, store), added)
        return f"store {store.name}: {store.path} (exists)"
    first = next(iter(store.remotes.items()), None)
    # Asked before creating, only to say what happened: the store itself decides the same way.
    cloned = first is not None and _remote_has_branch(first[1], store.branch, config.network_timeout_s)
    ensure_store(config, store)
    if first is None:
        return f"store {store.name}: {store.path} created (local history; add a remote later)"
    if cloned:
        return f"store {store.name}: {store.path} cloned from {first[0]} ({first[1]})"
    return (
        f"store {store.name}: {store.path} created and pushed to {first[0]} ({first[1]}), "
        f"which had no branch {store.branch}"
    )


def _detected_tracks(
    locations: Sequence[Location], already: Config | None
) -> tuple[list[Location], list[str]]:
    chosen: list[Location] = []
    lines: list[str] = []
    for loc in locations:
        if loc.found is Found.CLAUDE_PROJECT:
            continue  # a track of the projects folder: listed once, among the tracks, with its store path
        if not loc.track:
            elsewhere = None if already is None else tracked(already, loc.live)
            if elsewhere is not None:
                lines.append(f"found {loc.found.value} {loc.live}: tracked in store {elsewhere[0].name}")
            elif already is None or not _left_out(already, loc.live):
                lines.append(f"found {loc.found.value} {loc.live}: {loc.note}")
            continue
        if already is not None and overlapping(already, loc.live) is not None:
            continue
        chosen.append(loc)
    return chosen, lines


def _left_out(config: Config, live: Path) -> bool:
    """True when a track of ``config`` contains ``live`` but leaves it out (``Track.excludes``)."""
    return any(
        live.is_relative_to(excluded)
        for store in config.stores.values()
        for track in store.tracks
        for excluded in track.excludes
    )


def _adopted_branch(remote: str, lines: list[str]) -> str | None:
    """The branch a new store of ``remote`` syncs when the user named none: the one the remote's HEAD
    names (``remote_head``) when it is not the default, so a plain ``git clone`` of the remote checks
    out the memory; None for the default. Appends a line saying so to ``lines``."""
    named = remote_head_branch(remote, REMOTE_TIMEOUT_S)
    if named is None or named == DEFAULT_BRANCH or not BRANCH_NAME.match(named):
        return None
    lines.append(f"branch: {named}, the branch {remote}'s HEAD names (so `git clone` of it checks it out)")
    return named


def _nested(a: Path, b: Path) -> bool:
    return a.is_relative_to(b) or b.is_relative_to(a)


def init(
    remote: str | None = None,
    store: Path | None = None,
    branch: str | None = None,
    tracks: Sequence[Path] = (),
    path: Path | None = None,
    host: str | None = None,
    encrypt: bool = False,
) -> Report:
    """Write the config (``path``, default ``config_path()``) and create the default store ``personal``.

    ``remote``: URL of the store's ``origin`` (cloned if it has history, else a new store is pushed to
    it); ``store``: its working tree (default ``default_store_dir``); ``branch`` (default
    main); ``tracks``: paths to track besides the detected memory locations (``detect.detect``);
    ``host``: this machine's name in commits (the ``host`` key); ``encrypt``: its remotes receive
    ciphertext only (a new store; an existing one switches with `memsync encrypt`). Detected and given
    paths already tracked, or inside a tracked folder, are left alone (a line says so), so re-running
    changes nothing (the file is not rewritten). Raises ``MemsyncError`` before writing anything when an
    argument is a typo (a path whose directory does not exist, a URL git cannot use), when the existing config
    disagrees (another origin URL, store path or branch), or when git fails to create or clone the store.
    A refused init leaves nothing behind (``_nothing_left_on_refusal``).
    """
    path = config_path() if path is None else path
    with _nothing_left_on_refusal(path):
        remote = None if remote is None else argcheck.remote_url(remote, "--remote")
        if store is not None:
            argcheck.existing_parent(store, "--store")
        given = [argcheck.memory_path(track, "--track") for track in tracks]
        existing = load_tracks(path) if path.exists() else None
        current = existing.stores.get(DEFAULT_STORE) if existing else None
        if current is not None:
            for key, want, have in (
                ("origin", remote, current.remotes.get(DEFAULT_REMOTE)),
                ("path", store and absolute(store), current.path),
                ("branch", branch, current.branch),
            ):
                if want is not None and have is not None and want != have:
                    raise MemsyncError(
                        f"cannot init: store {DEFAULT_STORE} already has {key} {have}, "
                        f"not {want}. Change it with `memsync remote add|remove` or in the config"
                    )
        found, lines = _detected_tracks(detect(), existing)
        if current is None and branch is None and remote is not None:
            branch = _adopted_branch(remote, lines)
            _refuse_other_history(remote, branch, REMOTE_TIMEOUT_S)
        # What the new config will track, to tell a given path inside a tracked folder from a new one.
        planned = [
            *(existing.stores[DEFAULT_STORE].tracks if current is not None and existing is not None else ()),
            *(Track(loc.live, default_store_path_for(loc.live)) for loc in found),
        ]
        explicit: list[Path] = []
        for live in given:
            covering = next((t for t in planned if _nested(live, t.live)), None)
            if covering is None:
                explicit.append(live)
                planned.append(Track(live, default_store_path_for(live)))
            elif covering.live != live and live.is_relative_to(covering.live):
                lines.append(covered_line(live, covering))
            elif covering.live != live:
                raise MemsyncError(
                    f"cannot track --track {live}: it holds the tracked {covering.live}, whose files would "
                    "sync twice. Track one of them"
                )
        needs_store = current is None
        if encrypt and current is not None and not current.encrypt:
            raise MemsyncError(
                f"cannot init --encrypt: store {DEFAULT_STORE} exists and is not encrypted. "
                f"Run `memsync encrypt {DEFAULT_STORE}` to switch it"
            )
        needs_remote = remote is not None and (current is None or DEFAULT_REMOTE not in current.remotes)
        needs_host = host is not None and (existing is None or existing.host != host)
        changed = bool(needs_store or needs_remote or needs_host or found or explicit)

        def mutate(raw: dict[str, Any]) -> None:
            if needs_host:
                raw["host"] = host
            table = raw.setdefault("stores", {}).setdefault(DEFAULT_STORE, {})
            if store is not None:
                table["path"] = home_relative(store)
            if branch is not None:
                table["branch"] = branch
            if remote is not None:
                table.setdefault("remotes", {})[DEFAULT_REMOTE] = remote
            if encrypt:
                table["encrypt"] = True
            entries = table.setdefault("track", [])
            entries.extend(
                {"path": home_relative(loc.live), **({"as": loc.store_path} if loc.store_path else {})}
                for loc in found
            )
            entries.extend({"path": home_relative(p)} for p in explicit)

        with undone_on_failure(path):
            if changed:
                config = edit_tracks(path, mutate)
                lines.append(f"config: {path} ({'created' if existing is None else 'updated'})")
            else:
                config = existing if existing is not None else load_tracks(path)
                lines.append(f"config: {path} (unchanged)")
            personal = config.stores[DEFAULT_STORE]
            lines.append(
                f"host: {config.host} (names this machine in commits; `memsync config set host NAME`)"
            )
            author = config.identity()
            lines.append(
                f"author: {author.name} <{author.email}> (of the commits; "
                "`memsync config set author.name NAME` and `author.email EMAIL` to change it)"
            )
            lines.append(_create_store(config, personal, DEFAULT_REMOTE if needs_remote else None))
            if personal.encrypt:
                lines.append(
                    f"{DEFAULT_STORE}'s remote receives ciphertext only (encrypted for its members' keys); "
                    f"this device's key: {this_device()}"
                )
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
            lines.extend(reload_daemon(path, silent_without=True))
        return Report(tuple(lines), changed)


@contextmanager
def _nothing_left_on_refusal(path: Path) -> Iterator[None]:
    """Around an init with the config at ``path``: on its ``MemsyncError``, the removal of memsync's
    directories (config, data, state) that did not exist before it ran, so a refused init leaves nothing
    behind, not even empty directories; the error goes on."""
    mine = (path.parent, default_store_dir("-").parent.parent, state_dir())
    missing = [directory for directory in mine if not directory.exists()]
    made = {directory: installs.new_dirs(directory / "-") for directory in missing}
    try:
        yield
    except MemsyncError:
        for directory in missing:
            shutil.rmtree(directory, ignore_errors=True)  # made by this run, which wrote nothing else
        raise
    for directory, dirs in made.items():
        # Recorded so `uninstall --purge` also removes the XDG directories (~/.local/state) memsync made.
        installs.record(directory, "memsync", "dirs", created=False, dirs=dirs, project=None)


def store_add(
    name: str,
    remote: str | None = None,
    path: Path | None = None,
    config: Path | None = None,
    branch: str | None = None,
    review: bool = False,
    encrypt: bool = False,
) -> Report:
    """Add store ``name`` (e.g. a team store) with optional ``remote`` as its origin and ``branch``
    (default: the one the remote's HEAD names, else main), and create it. ``review``: what agents write
    into it waits for a person's approval (`memsync review`); ``encrypt``: its remotes receive ciphertext
    only, sealed for this device's key (others join with `memsync key add`).

    Nothing is tracked into it until ``track --store NAME``: no memory reaches its remote unasked.
    Raises ``MemsyncError`` (nothing written) for a name that is not plain, a URL git cannot use, a
    ``path`` whose directory does not exist, a store that exists, a remote whose history is not a
    memsync store's; or when git fails.
    """
    cfg_path = config_path() if config is None else config
    if not PLAIN_NAME.match(name):
        raise MemsyncError(
            f"store name {name!r} is not a plain name: use letters, digits, '.', '_', '-'. Pick another name"
        )
    remote = None if remote is None else argcheck.remote_url(remote, "--remote")
    if path is not None:
        argcheck.existing_parent(path, "--path")
    if cfg_path.exists() and name in load_config(cfg_path).stores:
        raise MemsyncError(f"cannot add store {name!r}: it already exists. Pick another name")

    adopted: list[str] = []
    if remote is not None and branch is None:
        branch = _adopted_branch(remote, adopted)
        _refuse_other_history(remote, branch, REMOTE_TIMEOUT_S)

    def mutate(raw: dict[str, Any]) -> None:
        table: dict[str, Any] = {}
        if path is not None:
            table["path"] = home_relative(path)
        if branch is not None:
            table["branch"] = branch
        if remote is not None:
            table["remotes"] = {DEFAULT_REMOTE: remote}
        if review:
            table["review"] = True
        if encrypt:
            table["encrypt"] = True
        raw.setdefault("stores", {})[name] = table

    with undone_on_failure(cfg_path):
        new = edit_tracks(cfg_path, mutate)
        lines: list[str] = []
        lines.extend(adopted)
        lines.append(_create_store(new, new.stores[name]))
    lines.append(f"nothing is tracked into {name} yet: `memsync track PATH --store {name}`")
    if review:
        lines.append(f"what agents write into {name} waits for approval: `memsync review`")
    if encrypt:
        lines.append(f"{name}'s remote receives ciphertext only; this device's key: {this_device()}")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)


def store_list(config: Path | None = None) -> tuple[str, ...]:
    """One line per store of the config (``config``, default ``config_path()``): name, working tree,
    branch, remotes, how many paths it tracks. Raises ``MemsyncError`` (``NO_STORE``) without a store."""
    loaded = load_config(config_path() if config is None else config)
    if not loaded.stores:
        raise MemsyncError(NO_STORE)
    lines = []
    for store in loaded.stores.values():
        remotes = ", ".join(f"{name} {redacted(url)}" for name, url in store.remotes.items()) or "no remote"
        missing = "" if StoreLayout(store.path).exists else " (missing: `memsync init` or `sync` makes it)"
        tracks = len(store.entries)
        lines.append(
            f"{store.name}: {store.path}{missing}, branch {store.branch}, {remotes}, "
            f"{plural(tracks, 'tracked path')}"
        )
    return tuple(lines)


def store_remove(name: str, config: Path | None = None) -> Report:
    """Stop syncing store ``name``: take it out of the config (a running daemon reloads and drops it).
    Its working tree, history and the live files it tracked stay where they are; a path it tracked
    inside another store's tracked folder goes on that folder's ``exclude`` list, so its memory does not
    move to the other store unasked. Raises ``MemsyncError`` (nothing written) for an unknown store."""
    cfg_path = config_path() if config is None else config
    before = load_stores(cfg_path)
    if name not in before.stores:
        raise MemsyncError(
            f"cannot remove store {name!r}: it is not in {cfg_path}. Its stores: {', '.join(before.stores)}"
        )
    store = before.stores[name]
    mine = [*(t.live for t in store.tracks), *(r.live for r in store.host_roots)]
    kept_out: list[tuple[Path, Path]] = []  # (a path of the removed store, the folder it stays out of)

    def mutate(raw: dict[str, Any]) -> None:
        store_table(raw, name)  # raises if another command removed it meanwhile
        del raw["stores"][name]
        for other in raw["stores"].values():
            for entry in other.get("track", []) if isinstance(other, dict) else []:
                folder = absolute(Path(str(entry.get("path", ""))))
                inside = [live for live in mine if live != folder and live.is_relative_to(folder)]
                for live in inside:
                    rel = live.relative_to(folder).as_posix()
                    entry["exclude"] = sorted({*entry.get("exclude", []), rel})
                    kept_out.append((live, folder))

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(f"store {name} removed from {cfg_path}: memsync no longer syncs it")
    lines.extend(
        f"{live} stays out of the tracked {folder} (its exclude list): it syncs with no store now"
        for live, folder in kept_out
    )
    lines.append(
        f"kept on disk: its working tree and history {store.path} (delete it yourself once you no longer "
        "need it), and the files it tracked, where they are"
    )
    if store.remotes:
        lines.append(f"its remotes are left as they are: {', '.join(store.remotes.values())}")
    lines.extend(reload_daemon(cfg_path, silent_without=True))
    return Report(tuple(lines), True)


def up(print_line: Callable[[str], None], path: Path | None = None) -> int:
    """``init`` with defaults when there is no config (its report goes to ``print_line``), then the
    daemon in the foreground until SIGTERM/SIGINT; returns the daemon's exit code. When a daemon runs
    for the config already, says so and returns 0 without starting a second."""
    path = config_path() if path is None else path
    pid = running_daemon_pid(path)
    if pid is not None:
        print_line(
            f"a memsync daemon is already running for {path} (PID {pid}): `memsync status` shows what it "
            "does, `memsync stop` stops it"
        )
        return 0
    if not path.exists():
        for line in init(path=path).lines:
            print_line(line)
    return run_daemon(path)

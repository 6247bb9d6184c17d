"""memsync's configuration: ``config.toml`` read with tomllib, written with tomli-w (issue 4 "Config").

Layout::

    host = "laptop"                 # optional, default: this machine's host name
    debounce_s = 1.0                # quiet period before a cycle (seconds)
    max_delay_s = 10.0              # longest a steady stream of writes delays a cycle (seconds)
    pull_interval_s = 10.0          # how often the daemon fetches without local events (seconds)
    partial_line_grace_s = 300.0    # how long an unfinished last line is withheld (seconds)

    [author]                        # optional, default: git's user.name/user.email, else memsync
    name = "Ada"
    email = "ada@example.org"

    [stores.personal]
    path = "~/.local/share/memsync/stores/personal"   # optional, default: default_store_dir(name)
    branch = "main"                                    # optional

    [stores.personal.remotes]
    origin = "git@github.com:ada/memory.git"

    [[stores.personal.track]]
    path = "~/.agents/memory/python-dev"
    as = "roles/python-dev"          # optional, default: default_store_path_for(path)

Unknown keys are kept (``edit_config`` writes them back) and logged as a warning when loading.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

import platformdirs
import tomli_w

from memsync import identity
from memsync.errors import MemsyncError
from memsync.fsio import atomic_write, writer_lock
from memsync.hosts import claude_code
from memsync.paths import config_path as config_path  # re-exported: every command imports it from here

log = logging.getLogger(__name__)

DEFAULT_BRANCH = "main"
_TOP_NUMBERS = {
    "debounce_s": 1.0,
    "max_delay_s": 10.0,
    "pull_interval_s": 10.0,
    "partial_line_grace_s": 300.0,
}
_TOP_KEYS = {"host", "author", "stores", *_TOP_NUMBERS}
_STORE_KEYS = {"path", "branch", "remotes", "track"}
_TRACK_KEYS = {"path", "as"}
# A store or remote name becomes part of git ref names and of file names: keep it plain.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# What `git check-ref-format --branch` would accept for the simple names a store uses.
_BRANCH = re.compile(r"^(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9._/-]+(?<![./])$")


@dataclass(frozen=True)
class Track:
    """One tracked path: a live memory file or role directory on this machine and its path in the store.

    ``excludes``: live paths inside ``live`` that another store tracks; they belong to that store alone
    (how one role of a tracked folder goes to a team store). ``legacy``: store paths earlier versions gave
    the same default (``legacy_store_paths_for``), whose content each cycle folds into ``store_path``
    (``memsync.legacy``). Both derived by ``load_config``, never written.
    """

    live: Path
    store_path: str
    excludes: tuple[Path, ...] = ()
    legacy: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostRoot:
    """A tracked folder of an agent host that holds one memory folder per project (Claude Code's
    ``~/.claude/projects``): each project folder's memory is a track of its own, at ``<prefix>/<project
    key>``. The daemon watches ``live`` for project folders that appear."""

    live: Path
    prefix: str


@dataclass(frozen=True)
class StoreConfig:
    """One store: its git working tree, branch, remotes (name -> URL, in file order), tracked paths, and
    the host folders whose project memory folders are tracks (``host_roots``)."""

    name: str
    path: Path
    branch: str = DEFAULT_BRANCH
    remotes: Mapping[str, str] = field(default_factory=dict)
    tracks: tuple[Track, ...] = ()
    host_roots: tuple[HostRoot, ...] = ()


@dataclass(frozen=True)
class Identity:
    """The author and committer identity of the commits memsync makes."""

    name: str
    email: str


@dataclass(frozen=True)
class Config:
    """The whole configuration; durations are in seconds. ``stores`` keeps the file's order."""

    path: Path
    host: str
    author_name: str | None = None
    author_email: str | None = None
    debounce_s: float = 1.0
    max_delay_s: float = 10.0
    pull_interval_s: float = 10.0
    partial_line_grace_s: float = 300.0
    stores: Mapping[str, StoreConfig] = field(default_factory=dict)

    def identity(self) -> Identity:
        """The commit identity: ``[author]`` if set, else git's global ``user.name``/``user.email``,
        else ``memsync`` / ``memsync@<host>``. Runs ``git config`` (no network); never raises."""
        name = self.author_name or _git_config_value("user.name") or "memsync"
        email = self.author_email or _git_config_value("user.email") or f"memsync@{self.host}"
        return Identity(name=name, email=email)


def default_store_dir(name: str) -> Path:
    """The default working tree of store ``name``: ``<user data dir>/memsync/stores/<name>``."""
    return platformdirs.user_data_path("memsync") / "stores" / name


def default_store_path_for(live: Path) -> str:
    """The store path a tracked ``live`` path maps to when the config gives none (DESIGN "Vocabulary",
    "Agent hosts").

    ``~/.agents/memory/<role>`` -> ``roles/<role>``; ``<project>/.agents/memory/<role>`` ->
    ``projects/<project key>/<role>`` and a Claude Code project memory folder
    ``~/.claude/projects/<name>/memory`` -> ``claude/projects/<project key>`` (the key is the project's
    identity: ``memsync.identity.project_key``); ``<name>.jsonl`` -> ``memory/<name>.jsonl`` and the
    folder ``~/.agent-memory`` -> ``memory``; any other path under the home directory -> its path relative
    to home without leading dots (``~/.claude/memory`` -> ``claude/memory``, ``~/.codex/memories`` ->
    ``codex/memories``); anything else -> ``paths/<name>``. Pure apart from reading the project's git
    config and Claude Code's transcripts; never raises.
    """
    live = _absolute_path(live)
    if live.suffix != ".jsonl" and claude_code.is_project_memory(live):
        return claude_code.project_memory(live).store_path
    return _default_store_path(live, identity.project_key)


def legacy_store_paths_for(live: Path) -> tuple[str, ...]:
    """The store paths earlier memsync versions gave ``live`` by default where they differ from
    ``default_store_path_for(live)``: a project's role keyed by the last name of its ``origin`` URL (else
    its directory name), a Claude Code project memory folder by its home-relative path or its folder
    name. memsync folds their content into the current store path (``memsync.legacy``). Never raises."""
    live = _absolute_path(live)
    if live.suffix != ".jsonl" and claude_code.is_project_memory(live):
        return claude_code.project_memory(live).legacy
    legacy = _default_store_path(live, _project_name)
    return () if legacy == _default_store_path(live, identity.project_key) else (legacy,)


def _absolute_path(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def _default_store_path(live: Path, project_name: Callable[[Path], str]) -> str:
    home = _absolute_path(Path.home())
    if live.suffix == ".jsonl":
        return f"memory/{live.name}"
    if live == home / ".agent-memory":  # the folder of memory files: its files keep their per-file paths
        return "memory"
    parts = live.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1 : i + 1] != (".agents", "memory"):
            continue
        owner = Path(*parts[: i - 1])
        rest = "/".join(parts[i + 1 :])
        prefix = "roles" if owner == home else f"projects/{project_name(owner)}"
        return f"{prefix}/{rest}" if rest else prefix
    if live != home and live.is_relative_to(home):
        return "/".join(part.lstrip(".") or part for part in live.relative_to(home).parts)
    return f"paths/{live.name}"


def load_config(path: Path | None = None, *, discover: bool = True) -> Config:
    """Read and validate the config at ``path`` (default ``config_path()``).

    Expands ``~`` in paths, fills defaults, warns about unknown keys (kept in the file). A tracked host
    folder of project memory folders (``StoreConfig.host_roots``) becomes one track per project folder
    found in it now (``hosts.claude_code.expand_projects_root``), unless ``discover`` is False (a reader
    that needs only the configured tracks skips the per-project git calls). A config with no stores is
    valid. Raises ``MemsyncError`` naming the file (and the key) when the file is missing, is not TOML,
    or a value is invalid.
    """
    path = config_path() if path is None else path
    return _validate(_read_raw(path, missing_ok=False), path, discover=discover)


def edit_config(path: Path | None, mutate: Callable[[dict[str, Any]], None]) -> Config:
    """Change the config file under a lock: read its raw TOML table (empty if the file is missing), let
    ``mutate`` change it in place, validate, and write it back atomically; unrelated keys (unknown ones
    included) are kept. ``mutate`` must store plain TOML values (str, not Path). Returns the new Config;
    raises ``MemsyncError`` (file unchanged) when the result is invalid or the file cannot be read.
    """
    path = config_path() if path is None else path
    with writer_lock(path):
        raw = _read_raw(path, missing_ok=True)
        mutate(raw)
        config = _validate(raw, path, warn_unknown=False)
        try:
            data = tomli_w.dumps(raw).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise MemsyncError(f"cannot write config {path}: {exc}. Store plain TOML values") from exc
        atomic_write(path, data)
    return config


def _read_raw(path: Path, *, missing_ok: bool) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise MemsyncError(f"cannot read config {path}: no such file. Run `memsync init`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MemsyncError(f"cannot read config {path}: {exc}. Check the file") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MemsyncError(f"invalid config {path}: not valid TOML ({exc}). Fix the syntax") from exc


class _Checker:
    """Type checks that raise one-line errors naming the key and the file."""

    def __init__(self, path: Path, warn_unknown: bool) -> None:
        self.path = path
        self.warn_unknown = warn_unknown

    def fail(self, key: str, why: str) -> MemsyncError:
        return MemsyncError(f"invalid config {self.path}: `{key}` {why}. Edit the file and try again")

    def string(self, value: object, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string (got {value!r})")
        return value

    def table(self, value: object, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table (got {value!r})")
        return value

    def seconds(self, value: object, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise self.fail(key, f"must be a positive number of seconds (got {value!r})")
        return float(value)

    def name(self, value: str, key: str) -> str:
        if not _NAME.match(value):
            raise self.fail(key, "must be a plain name (letters, digits, '.', '_', '-')")
        return value

    def unknown(self, table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
        if not self.warn_unknown:
            return
        for key in table:
            if key not in allowed:
                log.warning("config %s: unknown key `%s%s` (kept, ignored)", self.path, prefix, key)


def _validate(
    raw: Mapping[str, Any], path: Path, *, warn_unknown: bool = True, discover: bool = True
) -> Config:
    check = _Checker(path, warn_unknown)
    check.unknown(raw, _TOP_KEYS, "")
    host = check.string(raw["host"], "host") if "host" in raw else socket.gethostname()
    numbers = {
        key: check.seconds(raw[key], key) if key in raw else default for key, default in _TOP_NUMBERS.items()
    }
    author = check.table(raw.get("author", {}), "author")
    check.unknown(author, {"name", "email"}, "author.")
    author_name = check.string(author["name"], "author.name") if "name" in author else None
    author_email = check.string(author["email"], "author.email") if "email" in author else None
    stores = {
        name: _store(
            check, check.name(name, f"stores.{name}"), check.table(table, f"stores.{name}"), discover
        )
        for name, table in check.table(raw.get("stores", {}), "stores").items()
    }
    return Config(
        path=path,
        host=host,
        author_name=author_name,
        author_email=author_email,
        stores=_with_excludes(stores),
        **numbers,
    )


def _with_excludes(stores: Mapping[str, StoreConfig]) -> dict[str, StoreConfig]:
    """Give each track the live paths inside it that another store tracks (a nested track wins)."""
    everything = [(name, track.live) for name, store in stores.items() for track in store.tracks]
    return {
        name: replace(
            store,
            tracks=tuple(
                replace(
                    track,
                    excludes=tuple(
                        sorted(
                            live
                            for other, live in everything
                            if other != name and live != track.live and live.is_relative_to(track.live)
                        )
                    ),
                )
                for track in store.tracks
            ),
        )
        for name, store in stores.items()
    }


def _store(check: _Checker, name: str, table: Mapping[str, Any], discover: bool) -> StoreConfig:
    key = f"stores.{name}"
    check.unknown(table, _STORE_KEYS, f"{key}.")
    store_dir = (
        _expand(check.string(table["path"], f"{key}.path")) if "path" in table else default_store_dir(name)
    )
    branch = check.string(table.get("branch", DEFAULT_BRANCH), f"{key}.branch")
    if not _BRANCH.match(branch):
        raise check.fail(f"{key}.branch", f"is not a valid git branch name ({branch!r})")
    remotes = {
        check.name(remote, f"{key}.remotes.{remote}"): check.string(url, f"{key}.remotes.{remote}")
        for remote, url in check.table(table.get("remotes", {}), f"{key}.remotes").items()
    }
    entries = table.get("track", [])
    if not isinstance(entries, list):
        raise check.fail(f"{key}.track", "must be an array of tables ([[" + key + ".track]])")
    tracks: list[Track] = []
    roots: list[HostRoot] = []
    claimed: list[tuple[Path, str]] = []  # per entry: its live path and store path, for overlap checks
    for i, entry in enumerate(entries):
        tkey = f"{key}.track[{i}]"
        entry = check.table(entry, tkey)
        check.unknown(entry, _TRACK_KEYS, f"{tkey}.")
        if "path" not in entry:
            raise check.fail(f"{tkey}.path", "is required")
        live = _expand(check.string(entry["path"], f"{tkey}.path"))
        root = claude_code.is_projects_root(live)
        if "as" in entry:
            store_path = _store_path(check, entry["as"], f"{tkey}.as")
        else:
            store_path = claude_code.STORE_PREFIX if root else default_store_path_for(live)
        for j, (other_live, other) in enumerate(claimed):
            mine, theirs = PurePosixPath(store_path), PurePosixPath(other)
            if mine.is_relative_to(theirs) or theirs.is_relative_to(mine):
                raise check.fail(f"{tkey}.as", f"maps to {store_path!r}, overlapping track[{j}] ({other!r})")
            if live.is_relative_to(other_live) or other_live.is_relative_to(live):
                raise check.fail(f"{tkey}.path", f"{live} overlaps track[{j}] ({other_live}); track it once")
        if live.is_relative_to(store_dir) or store_dir.is_relative_to(live):
            raise check.fail(f"{tkey}.path", f"{live} overlaps the store itself ({store_dir})")
        claimed.append((live, store_path))
        if root:
            roots.append(HostRoot(live, store_path))
            if discover:
                tracks.extend(
                    Track(m.live, m.store_path, legacy=m.legacy)
                    for m in claude_code.expand_projects_root(live, store_path)
                )
        else:
            legacy = () if "as" in entry else legacy_store_paths_for(live)
            tracks.append(Track(live=live, store_path=store_path, legacy=legacy))
    return StoreConfig(
        name=name,
        path=store_dir,
        branch=branch,
        remotes=remotes,
        tracks=_without_taken_legacy(tracks),
        host_roots=tuple(roots),
    )


def _without_taken_legacy(tracks: list[Track]) -> tuple[Track, ...]:
    """``tracks`` without the legacy store paths that overlap a current store path or another track's
    legacy path: content a track maps now is never folded into another one."""
    current = [PurePosixPath(track.store_path) for track in tracks]
    counts: dict[PurePosixPath, int] = {}
    for track in tracks:
        for old in track.legacy:
            counts[PurePosixPath(old)] = counts.get(PurePosixPath(old), 0) + 1

    def free(old: str) -> bool:
        mine = PurePosixPath(old)
        if any(mine.is_relative_to(p) or p.is_relative_to(mine) for p in current):
            return False
        return not any(
            (mine.is_relative_to(o) or o.is_relative_to(mine)) and (o != mine or n > 1)
            for o, n in counts.items()
        )

    return tuple(replace(track, legacy=tuple(p for p in track.legacy if free(p))) for track in tracks)


def _store_path(check: _Checker, value: object, key: str) -> str:
    text = check.string(value, key)
    rel = PurePosixPath(text)
    if rel.is_absolute() or "\\" in text or any(part in ("..", ".git", ".memsync") for part in rel.parts):
        raise check.fail(key, f"must be a relative store path without '..', .git or .memsync ({text!r})")
    return rel.as_posix()


def _expand(text: str) -> Path:
    return Path(os.path.abspath(Path(text).expanduser()))


def _git_config_value(key: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "config", "--get", key],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = result.stdout.strip()
    return value if result.returncode == 0 and value else None


def _project_name(project: Path) -> str:
    """The project name earlier versions keyed a project's roles by: the name of ``project``'s ``origin``
    remote repository (``.../name.git`` -> ``name``), else the directory's name."""
    try:
        # The ceiling keeps git from reading the config of a repository that merely encloses the project.
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(project.parent)}
        result = subprocess.run(
            ["git", "-C", str(project), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        result = None
    url = result.stdout.strip() if result is not None and result.returncode == 0 else ""
    name = re.split(r"[/:\\]", url.rstrip("/"))[-1] if url else ""
    name = name.removesuffix(".git")
    return name if name and _NAME.match(name) else project.name

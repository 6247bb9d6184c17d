"""memsync's configuration: ``config.toml`` read with tomllib, edited with tomlkit (the user's comments,
key order and layout survive every change memsync makes).

Layout::

    host = "laptop"                 # optional, default: this machine's host name
    debounce_s = 1.0                # quiet period before a cycle (seconds)
    max_delay_s = 10.0              # longest a steady stream of writes delays a cycle (seconds)
    pull_interval_s = 10.0          # how often the daemon fetches without local events (seconds)
    partial_line_grace_s = 300.0    # how long an unfinished last line is withheld (seconds)
    network_timeout_s = 30.0        # longest one fetch, push or probe of a remote may take (seconds)

    [projects]                      # optional: a project's identity, named by the user (`project alias`)
    "/home/ada/src/shop" = "shop"   # so that checkouts without a remote meet under that name

    [author]                        # optional, default: git's user.name/user.email, else memsync
    name = "Ada"
    email = "ada@example.org"

    [stores.personal]
    path = "~/.local/share/memsync/stores/personal"   # optional, default: default_store_dir(name)
    branch = "main"                                    # optional
    review = false                                     # optional: true holds agents' writes for review
    encrypt = false                                    # optional: true: its remotes get ciphertext only

    [stores.personal.remotes]
    origin = "git@github.com:ada/memory.git"

    [[stores.personal.track]]
    path = "~/.agents/memory"
    as = "roles"                     # optional, default: the default store path of `path`
    exclude = ["scout"]              # optional: paths inside a tracked folder left out of it

``load_config`` reads and checks the file and nothing else: it runs no git and reads no host folder.
What a track maps to in its store (default store paths, Claude Code's project folders, the overlap
checks that need those paths) is ``memsync.tracks.resolve``'s.

A key none of ``KNOWN_KEYS`` names is an error naming the key and its table: a typo or a key written
under the wrong table (a top-level key after ``[stores.x.remotes]``) would otherwise be taken silently.
"""

from __future__ import annotations

import os
import re
import socket
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import platformdirs

from memsync.base import argcheck, git
from memsync.base.fsio import atomic_write, writer_lock
from memsync.base.paths import config_path
from memsync.config.check import Checker
from memsync.errors import MemsyncError

if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.items import Table

DEFAULT_BRANCH = "main"
# The store of this person's own memory (`init` creates it); any other store is shared with a team.
PERSONAL_STORE = "personal"
NETWORK_TIMEOUT_S = 30.0
# What a command that needs a store says when there is no config, or a config without a store.
NO_STORE = "no memsync store here yet: run `memsync init` (or `memsync up`)"
# The table of project aliases: absolute project path -> the identity the user named it by.
ALIASES_TABLE = "projects"
_TOP_NUMBERS = {
    "debounce_s": 1.0,
    "max_delay_s": 10.0,
    "pull_interval_s": 10.0,
    "partial_line_grace_s": 300.0,
    "network_timeout_s": NETWORK_TIMEOUT_S,
}
# The keys of each table of the config, in one place: a key added to the config goes here (and into
# _validate). `stores.*.remotes` is a table of remote names, so it has no fixed keys.
KNOWN_KEYS: Mapping[str, frozenset[str]] = {
    "": frozenset({"host", "author", "stores", ALIASES_TABLE, *_TOP_NUMBERS}),
    "author": frozenset({"name", "email"}),
    "stores.*": frozenset({"path", "branch", "remotes", "track", "review", "encrypt"}),
    "stores.*.track[]": frozenset({"path", "as", "exclude"}),
}
# What `git check-ref-format --branch` would accept for the simple names a store uses.
BRANCH_NAME = re.compile(r"^(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9._/-]+(?<![./])$")


@dataclass(frozen=True)
class TrackEntry:
    """One ``[[stores.x.track]]`` table as the file says it: the live path, the store path ``as`` names
    (None: the default, which ``memsync.tracks.resolve`` finds) and the ``exclude`` list as live paths
    (sorted)."""

    live: Path
    store_path: str | None = None
    excludes: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Track:
    """One tracked path: a live memory file or role directory on this machine and its path in the store.

    ``excludes``: live paths inside ``live`` that are not synced with it: those another store tracks
    (they belong to that store alone: how one role of a tracked folder goes to a team store) and those
    the track's own ``exclude`` list names (relative to ``live``). Sorted; derived by
    ``memsync.tracks.resolve``.
    ``legacy``: the store paths earlier versions gave it, folded into ``store_path``
    (``memsync.cycle.legacy``).
    """

    live: Path
    store_path: str
    excludes: tuple[Path, ...] = ()
    legacy: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostRoot:
    """A tracked host folder of one memory folder per project (Claude Code's ``~/.claude/projects``): each
    is a track of its own at ``<prefix>/<project key>``; the daemon watches ``live`` for new ones, and
    the store for new keys (``held``: those it had, ``claude_folders.store_keys``)."""

    live: Path
    prefix: str
    excludes: tuple[Path, ...] = ()
    held: frozenset[str] = frozenset()  # the project keys the store held when the tracks were expanded


@dataclass(frozen=True)
class StoreConfig:
    """One store: its git working tree, branch, remotes (name -> URL, in file order), its tracks as the
    file names them (``entries``) and, once ``memsync.tracks.resolve`` resolved them, its tracked paths
    (``tracks``) and the host folders whose project memory folders are tracks (``host_roots``): both are
    empty in the config as ``load_config`` reads it."""

    name: str
    path: Path
    branch: str = DEFAULT_BRANCH
    remotes: Mapping[str, str] = field(default_factory=dict)
    tracks: tuple[Track, ...] = ()
    host_roots: tuple[HostRoot, ...] = ()
    # True: what agents write into this store is a proposal until a person approves it (`memsync review`).
    review: bool = False
    # True: its remotes receive only ciphertext (``memsync.store.sealed``); the store itself stays plain.
    encrypt: bool = False
    entries: tuple[TrackEntry, ...] = ()


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
    network_timeout_s: float = NETWORK_TIMEOUT_S
    stores: Mapping[str, StoreConfig] = field(default_factory=dict)

    def identity(self) -> Identity:
        """The commit identity: ``[author]`` if set, else git's global ``user.name``/``user.email``,
        else this machine's host name / ``memsync@<host>``, so commits say which machine made them even
        where git has no identity. Runs ``git config`` (no network); never raises."""
        name = self.author_name or git.config_value("user.name") or self.host
        email = self.author_email or git.config_value("user.email") or f"memsync@{self.host}"
        return Identity(name=name, email=email)


def default_store_dir(name: str) -> Path:
    """The default working tree of store ``name``: ``<user data dir>/memsync/stores/<name>``."""
    return platformdirs.user_data_path("memsync") / "stores" / name


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config at ``path`` (default ``config_path()``): reads the file and nothing
    else (no git, no host folder; ``memsync.tracks.resolve`` gives the tracks).

    Expands ``~`` in paths and fills defaults. A config with no stores is valid. Raises
    ``MemsyncError``: ``NO_STORE`` when the file is missing; naming the file (and the key, and its table)
    when it is not TOML, holds a key ``KNOWN_KEYS`` does not name, or a value is invalid.
    """
    path = config_path() if path is None else path
    return _validate(_read_raw(path, missing_ok=False), Checker(path, KNOWN_KEYS))


def no_store_note(path: Path | None = None, until: str = "") -> str | None:
    """What a command that works without a store (``hooks install``, ``mcp install``, ``config set``)
    adds on stderr before ``memsync init``: ``note: NO_STORE`` and ``until`` (what does nothing until
    then); None when the config at ``path`` names a store, or does not load (the command says why)."""
    raw = _read_raw(config_path() if path is None else path, missing_ok=True)
    if isinstance(raw.get("stores"), dict) and raw["stores"]:
        return None
    return f"note: {NO_STORE}{until}"


def edit_config(
    path: Path | None,
    mutate: Callable[[dict[str, Any]], None],
    then: Callable[[Config], Config] | None = None,
) -> Config:
    """Change the config file under a lock: read its TOML document (empty if the file is missing), let
    ``mutate`` change it in place, validate, and write it back atomically. The document is tomlkit's: every
    other key, value, comment and blank line stays where it was. ``mutate`` stores plain TOML values (str,
    not Path; a list of tables becomes ``[[array.of.tables]]``). ``then``, when given, checks the new
    Config further before it is written (``memsync.tracks.resolve.edit_tracks``: its tracks) and gives
    what is returned. Returns the new Config; raises ``MemsyncError`` (file unchanged) when the file is
    invalid already (naming it), when the result would be (naming the key, not the file), or when the
    file cannot be read.
    """
    # Imported here: only an edit keeps comments; every reader of the config takes tomllib's values.
    import tomlkit

    path = config_path() if path is None else path
    with writer_lock(path):
        text = _read_text(path, missing_ok=True)
        raw = _parse(path, text)
        if raw:
            _validate(raw, Checker(path, KNOWN_KEYS))
        doc = tomlkit.parse(text)
        mutate(doc)
        _tables_as_arrays_of_tables(doc)
        new = tomlkit.dumps(doc)
        # The change, not the file, is at fault when the result is invalid.
        config = _validate(_parse(path, new), Checker(path, KNOWN_KEYS, change=True))
        if then is not None:
            config = then(config)
        atomic_write(path, new.encode("utf-8"))
    return config


def _tables_as_arrays_of_tables(container: Container | Table) -> None:
    """Write a list of tables ``mutate`` created (``track``) as ``[[stores.x.track]]``, as a person
    would, rather than one line of inline tables."""
    import tomlkit
    from tomlkit.items import AoT, Array, Table

    for key, value in list(container.items()):
        if isinstance(value, Array) and value and all(isinstance(item, dict) for item in value):
            tables = [tomlkit.table() for _ in value]
            for table, item in zip(tables, value, strict=True):
                table.update(item)
                table.trivia.indent = "\n"  # a blank line before each header
            container[key] = AoT(tables)
        elif isinstance(value, Table):
            _tables_as_arrays_of_tables(value)
        elif isinstance(value, AoT):
            for table in value:
                _tables_as_arrays_of_tables(table)


def _read_raw(path: Path, *, missing_ok: bool) -> dict[str, Any]:
    return _parse(path, _read_text(path, missing_ok=missing_ok))


def _read_text(path: Path, *, missing_ok: bool) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        if missing_ok:
            return ""
        raise MemsyncError(NO_STORE) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MemsyncError(f"cannot read config {path}: {exc}. Check the file") from exc


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MemsyncError(f"invalid config {path}: not valid TOML ({exc}). Fix the syntax") from exc


def _validate(raw: Mapping[str, Any], check: Checker) -> Config:
    check.unknown(raw, "", "")
    host = check.host(raw["host"], "host") if "host" in raw else socket.gethostname()
    numbers = {
        key: check.seconds(raw[key], key) if key in raw else default for key, default in _TOP_NUMBERS.items()
    }
    for project, alias in check.table(raw.get(ALIASES_TABLE, {}), ALIASES_TABLE).items():
        key = f'{ALIASES_TABLE}."{project}"'
        check.string(alias, key)
        if not project.startswith(("/", "~")):
            raise check.fail(key, "must name a project by its absolute path")
    author = check.table(raw.get("author", {}), "author")
    check.unknown(author, "author", "author")
    author_name = check.string(author["name"], "author.name") if "name" in author else None
    author_email = check.string(author["email"], "author.email") if "email" in author else None
    stores = {
        name: _store(check, check.name(name, f"stores.{name}"), check.table(table, f"stores.{name}"))
        for name, table in check.table(raw.get("stores", {}), "stores").items()
    }
    return Config(
        path=check.path,
        host=host,
        author_name=author_name,
        author_email=author_email,
        stores=stores,
        **numbers,
    )


def _store(check: Checker, name: str, table: Mapping[str, Any]) -> StoreConfig:
    key = f"stores.{name}"
    check.unknown(table, "stores.*", key)
    store_dir = (
        _expand(check.string(table["path"], f"{key}.path")) if "path" in table else default_store_dir(name)
    )
    branch = check.string(table.get("branch", DEFAULT_BRANCH), f"{key}.branch")
    if not BRANCH_NAME.match(branch):
        raise check.fail(f"{key}.branch", f"is not a valid git branch name ({branch!r})")
    review = table.get("review", False)
    if not isinstance(review, bool):
        raise check.fail(f"{key}.review", f"must be true or false, not {review!r}")
    encrypt = table.get("encrypt", False)
    if not isinstance(encrypt, bool):
        raise check.fail(f"{key}.encrypt", f"must be true or false, not {encrypt!r}")
    remotes = {
        remote: check.remote(remote, url, f"{key}.remotes.{remote}")
        for remote, url in check.table(table.get("remotes", {}), f"{key}.remotes").items()
    }
    entries = table.get("track", [])
    if not isinstance(entries, list):
        raise check.fail(f"{key}.track", "must be an array of tables ([[" + key + ".track]])")
    found: list[TrackEntry] = []
    for i, entry in enumerate(entries):
        tkey = f"{key}.track[{i}]"
        entry = check.table(entry, tkey)
        check.unknown(entry, "stores.*.track[]", tkey)
        if "path" not in entry:
            raise check.fail(f"{tkey}.path", "is required")
        live = _expand(check.string(entry["path"], f"{tkey}.path"))
        if (why := argcheck.refusal(live)) is not None:
            raise check.fail(f"{tkey}.path", f"{live} is {why}, not agent memory: memsync never publishes it")
        store_path = _store_path(check, entry["as"], f"{tkey}.as") if "as" in entry else None
        excludes = _excludes(check, entry.get("exclude", []), f"{tkey}.exclude", live)
        found.append(TrackEntry(live, store_path, excludes))
    return StoreConfig(name, store_dir, branch, remotes, review=review, encrypt=encrypt, entries=tuple(found))


def _excludes(check: Checker, value: object, key: str, live: Path) -> tuple[Path, ...]:
    """A track's ``exclude`` list: paths relative to the tracked folder (``"scout"``), as live paths."""
    if not isinstance(value, list):
        raise check.fail(key, f"must be a list of paths inside the tracked folder (got {value!r})")
    paths = []
    for item in value:
        rel = PurePosixPath(check.string(item, key))
        if rel.is_absolute() or ".." in rel.parts or rel == PurePosixPath("."):
            raise check.fail(key, f"must list paths relative to {live}, inside it (got {item!r})")
        paths.append(live / rel)
    return tuple(sorted(paths))


def _store_path(check: Checker, value: object, key: str) -> str:
    text = check.string(value, key)
    rel = PurePosixPath(text)
    if rel.is_absolute() or "\\" in text or any(part in ("..", ".git", ".memsync") for part in rel.parts):
        raise check.fail(key, f"must be a relative store path without '..', .git or .memsync ({text!r})")
    return rel.as_posix()


def _expand(text: str) -> Path:
    return Path(os.path.abspath(Path(text).expanduser()))

"""``memsync config get|set KEY [VALUE]``: read or change one setting of the config by its dotted key.

Keys: the top-level ones (``host``, ``debounce_s``, ...), ``author.name``, ``author.email``,
``stores.<store>.path``, ``stores.<store>.branch`` and ``stores.<store>.remotes.<remote>``. A change is
checked by the same validation ``config.load_config`` runs (an unknown key is refused, naming its table)
and written through ``config.edit_config``; tracks have their own commands (``track``, ``untrack``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memsync.base import argcheck
from memsync.base.paths import config_path
from memsync.base.remote_url import redacted
from memsync.base.wording import plural
from memsync.commands.config_edits import Report, reload_daemon, store_table
from memsync.config.file import ALIASES_TABLE, KNOWN_KEYS, Config, load_config
from memsync.errors import MemsyncError
from memsync.projects.identity import aliases
from memsync.tracks.resolve import edit_tracks

# Tables, not settings: `project alias` writes the project aliases.
_TABLES = {"author", "stores", ALIASES_TABLE}


def _parts(key: str) -> list[str]:
    """``key`` split into its table path: ``stores.my.team.remotes.origin`` -> ``stores``, ``my.team``
    (a store name may hold dots), ``remotes``, ``origin``."""
    if not key.startswith("stores."):
        return key.split(".")
    rest = key.removeprefix("stores.")
    store, sep, remote = rest.rpartition(".remotes.")
    if sep:
        return ["stores", store, "remotes", remote]
    store, _, leaf = rest.rpartition(".")
    return ["stores", store, leaf] if store else ["stores", rest]


def _refuse_tables(key: str, parts: list[str]) -> None:
    if (parts[0] in _TABLES and len(parts) == 1) or (parts[:1] == ["stores"] and len(parts) == 2):
        raise MemsyncError(f"config key `{key}` is a table, not a setting. Name one of its keys")
    if parts[0] == "stores" and parts[-1] == "track":
        raise MemsyncError(
            f"config key `{key}` is the list of tracks. Use `memsync track` and `memsync untrack`"
        )
    if parts[0] == "stores" and parts[-1] == "remotes":
        raise MemsyncError(f"config key `{key}` is a table of remotes. Name one: `{key}.origin`")


def get_value(key: str, path: Path | None = None) -> str:
    """The value in effect for ``key`` (a default when the file does not set it), as text. Raises
    ``MemsyncError`` for an unknown key or store, or a config that does not load."""
    config = load_config(path)
    parts = _parts(key)
    _refuse_tables(key, parts)
    value = _effective(config, key, parts)
    return str(value)


def list_values(path: Path | None = None) -> tuple[str, ...]:
    """Every setting in effect, one ``key = value`` line each (defaults included), in the order of
    ``config.KNOWN_KEYS``: the top-level keys, ``author.*``, per store its path, branch and remotes, the
    project aliases (``[projects]``), then how many paths each store tracks (``memsync status`` lists
    them). Raises ``MemsyncError`` for a config that does not load."""
    config = load_config(path)
    keys = [
        *sorted(KNOWN_KEYS[""] - _TABLES - {ALIASES_TABLE}, key=lambda key: (key != "host", key)),
        *(f"author.{key}" for key in sorted(KNOWN_KEYS["author"])),
    ]
    for name, store in config.stores.items():
        keys.extend((f"stores.{name}.path", f"stores.{name}.branch", f"stores.{name}.review"))
        keys.extend(f"stores.{name}.remotes.{remote}" for remote in store.remotes)
    lines = [f"{key} = {_shown(key, _effective(config, key, _parts(key)))}" for key in keys]
    lines.extend(f'{ALIASES_TABLE}."{project}" = {alias}' for project, alias in aliases().items())
    lines.extend(
        f"stores.{name}.track = {plural(len(store.entries), 'path')} (`memsync status` lists them)"
        for name, store in config.stores.items()
    )
    return tuple(lines)


def _shown(key: str, value: object) -> object:
    """``value`` of ``key`` as a listing shows it: a remote's URL without its password."""
    return redacted(value) if isinstance(value, str) and len(_parts(key)) == 4 else value


def _effective(config: Config, key: str, parts: list[str]) -> object:
    if len(parts) == 1 and parts[0] in KNOWN_KEYS[""]:
        return getattr(config, parts[0])
    if parts[0] == "author" and len(parts) == 2 and parts[1] in KNOWN_KEYS["author"]:
        return getattr(config.identity(), parts[1])
    if parts[0] == "stores":
        if parts[1] not in config.stores:
            raise MemsyncError(
                f"config key `{key}`: no store {parts[1]!r}. Its stores: {', '.join(config.stores) or 'none'}"
            )
        store = config.stores[parts[1]]
        if len(parts) == 4:
            if parts[3] not in store.remotes:
                raise MemsyncError(
                    f"config key `{key}`: store {store.name} has no remote {parts[3]!r}. "
                    f"Its remotes: {', '.join(store.remotes) or 'none'}"
                )
            return store.remotes[parts[3]]
        if parts[2] in ("path", "branch", "review"):
            return getattr(store, parts[2])
    if parts[0] == "stores":
        kind, where, wrong = "stores.*", f"in table [stores.{parts[1]}]", parts[-1]
    elif parts[0] == "author":
        kind, where, wrong = "author", "in table [author]", parts[-1]
    else:
        kind, where, wrong = "", "at the top level", parts[0]
    known = ", ".join(sorted(KNOWN_KEYS[kind]))
    raise MemsyncError(f"config key `{key}`: `{wrong}` is not a known key {where} (known: {known}). Check it")


def set_value(key: str, value: str, path: Path | None = None) -> Report:
    """Set ``key`` to ``value`` in the config file (created if missing): a number for the durations
    (``*_s``), a URL (a relative path made absolute) for a remote, text otherwise; a running daemon
    reloads. Raises ``MemsyncError`` (nothing written) for an unknown key, a value the validation
    refuses, or an unknown store."""
    cfg_path = config_path() if path is None else path
    parts = _parts(key)
    _refuse_tables(key, parts)
    stored: Any = value
    if len(parts) == 1 and parts[0].endswith("_s"):
        try:
            stored = float(value)
        except ValueError:
            raise MemsyncError(
                f"config key `{key}`: {value!r} is not a number of seconds. Give one, e.g. 2.5"
            ) from None
    elif len(parts) == 4:
        stored = argcheck.remote_url(value, f"`{key}`")
    elif parts[0] == "stores" and parts[-1] == "review":
        if value.lower() not in ("true", "false"):
            raise MemsyncError(f"config key `{key}`: {value!r} is not true or false. Give one of them")
        stored = value.lower() == "true"

    def mutate(raw: dict[str, Any]) -> None:
        if parts[0] == "stores":
            table = store_table(raw, parts[1])
            for part in parts[2:-1]:
                table = table.setdefault(part, {})
        else:
            table = raw
            for part in parts[:-1]:
                table = table.setdefault(part, {})
        table[parts[-1]] = stored

    edit_tracks(cfg_path, mutate)
    lines: list[str] = []
    lines.append(f"{key} = {stored!r}" if not isinstance(stored, str) else f"{key} = {_shown(key, stored)}")
    lines.extend(reload_daemon(cfg_path))
    return Report(tuple(lines), True)

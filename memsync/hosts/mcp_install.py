"""Register `memsync mcp` with an agent host, in the host's own config file (DESIGN "Agent hosts", MCP).

Where each host keeps its servers, and the shape of the entry, is in ``registry`` (15 hosts).

For the user's registration of Claude Code and Codex memsync runs the host's own command when it is on
PATH (``claude mcp add-json --scope user`` / ``claude mcp remove --scope user``, ``codex mcp add`` /
``codex mcp remove``): the host then writes its file under its own lock, which no outside edit can take.
Otherwise, and for a project, memsync edits the file itself, safely against the host's own rewrites
(``settings_file``).

The entry runs this interpreter (``<python> -P -m memsync mcp``, ``base.self_command``: the host finds
this memsync whatever its PATH, and nothing from the project it has open) with ``MEMSYNC_CONFIG`` set to
this config file (Codex passes only a few variables on). The rest of each file is kept: Claude Code's
and Cursor's JSON through ``settings_file`` (keys, order, indentation), Codex's TOML through ``codex``
(tomlkit), the other hosts' JSON(C) and YAML as text through ``jsonc_text`` and ``yaml_text`` (every
other byte, comments too). Installing twice changes nothing; uninstalling removes only memsync's entry
(and a servers object or block it leaves empty).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.base.paths import config_path
from memsync.base.self_command import memsync_argv
from memsync.errors import MemsyncError
from memsync.hosts import codex, jsonc_text, registry, yaml_text
from memsync.hosts.settings_file import edit_file, json_update, parse_json_object, preview, read_settled

Host = str  # a name in registry.NAMES
HOSTS: tuple[Host, ...] = registry.NAMES
SERVER_NAME = "memsync"
Update = Callable[[bytes | None, Any], bytes | None]
# A host's command starts a Node or Rust program that reads its whole config: seconds, not minutes.
HOST_COMMAND_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Registration:
    """What an install or uninstall did: the ``host``, its config ``path``, whether the file ``changed``."""

    host: Host
    path: Path
    changed: bool


def config_file(host: Host, project: Path | None = None) -> Path:
    """The file ``host`` reads MCP servers from: the user's, or ``project``'s (see ``registry``).
    Raises MemsyncError for a project when the host has no project file."""
    return registry.user_file(host) if project is None else registry.project_file(host, project)


def hosts_for(project: Path | None) -> tuple[Host, ...]:
    """The hosts that read MCP servers from a file of the user's (None) or of a ``project``."""
    return HOSTS if project is None else tuple(s.name for s in registry.SPECS if s.project is not None)


def server_entry(host: Host) -> dict[str, Any]:
    """memsync's entry for ``host``: the command, its arguments and environment, in the host's shape."""
    command, *args = memsync_argv("mcp")
    env = {"MEMSYNC_CONFIG": str(Path(os.path.abspath(config_path())))}
    shape = registry.spec(host).shape
    if shape == "opencode":
        return {"type": "local", "command": [command, *args], "environment": env, "enabled": True}
    if shape == "goose":
        return {
            "name": SERVER_NAME,
            "description": "memsync: agent memory shared between machines",
            "type": "stdio",
            "cmd": command,
            "args": args,
            "envs": env,
            "enabled": True,
            "timeout": 300,
        }
    entry: dict[str, Any] = {"command": command, "args": args, "env": env}
    if shape == "stdio":
        return {"type": "stdio", **entry}
    if shape == "copilot":
        return {"type": "local", **entry, "tools": ["*"]}
    return entry


def _edit(
    host: Host, project: Path | None, entry: dict[str, Any] | None, keep: bool = False
) -> tuple[Path, Callable[[bytes], Any], Update]:
    """How memsync's entry in ``host``'s file is set to ``entry`` (None: removed, with the servers
    object, table or block it leaves empty unless ``keep``): the file, its parser and the
    ``settings_file.edit_file`` update."""
    path = config_file(host, project)
    found = registry.spec(host)
    if found.format == "toml":
        return (
            path,
            lambda data: codex.parse_config(path, data),
            codex.table_update(path, (found.key, SERVER_NAME), entry, keep),
        )
    if found.format == "yaml":
        listed = found.shape == "named"
        item = None if entry is None else {k: v for k, v in entry.items() if not (listed and k == "name")}
        return (
            path,
            lambda data: yaml_text.parse(data, path),
            yaml_text.update(path, found.key, SERVER_NAME, item, listed, keep),
        )
    if host in ("claude-code", "cursor"):

        def mutate(settings: dict[str, Any]) -> None:
            servers = settings.setdefault(found.key, {}) if entry is not None else settings.get(found.key)
            if not isinstance(servers, dict):
                if entry is None:
                    return
                raise MemsyncError(
                    f"cannot edit {path}: its {found.key} is not an object. Fix the file, then retry"
                )
            if entry is not None:
                servers[SERVER_NAME] = entry
            elif servers.pop(SERVER_NAME, None) is not None and not servers and not keep:
                del settings[found.key]

        return path, lambda data: parse_json_object(data, path), json_update(path, mutate)
    return (
        path,
        lambda data: jsonc_text.parse(data, path),
        # Copilot CLI refuses a file without `mcpServers`: an emptied one stays.
        jsonc_text.update(path, found.key, SERVER_NAME, entry, keep=keep or found.shape == "copilot"),
    )


def planned(host: Host, project: Path | None, add: bool) -> tuple[Path, bytes | None, bytes | None]:
    """What installing (``add``) or uninstalling would do to ``host``'s file, doing nothing: the file,
    its bytes (None: no file) and the bytes memsync would write (None: no change). Raises MemsyncError."""
    _check_project(project)
    path, parse, update = _edit(host, project, server_entry(host) if add else None)
    return (path, *preview(path, parse, update))


def _check_project(project: Path | None) -> None:
    if project is not None and not project.is_dir():
        raise MemsyncError(f"--project {project}: not a directory. Give the project's root directory")


def _host_command(host: Host, project: Path | None) -> str | None:
    """The host's own CLI that registers a server for the user, when it is on PATH; else None."""
    if project is not None or host not in ("claude-code", "codex"):
        return None
    return shutil.which("claude" if host == "claude-code" else "codex")


def _run(argv: list[str], host: Host) -> None:
    """Run the host command ``argv``; raises MemsyncError with the host's own last line when it fails."""
    shown = " ".join([Path(argv[0]).name, *argv[1:3]])
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=HOST_COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MemsyncError(f"`{shown}` failed: {exc}. Check that {host} runs, then retry") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}").splitlines()[-1]
        raise MemsyncError(f"`{shown}` failed: {said}. Check that {host} runs, then retry")


def _host_add(cli: str, host: Host, entry: dict[str, Any]) -> None:
    if host == "claude-code":
        _run([cli, "mcp", "add-json", "--scope", "user", SERVER_NAME, json.dumps(entry)], host)
        return
    env = [f"--env={key}={value}" for key, value in entry["env"].items()]
    _run([cli, "mcp", "add", SERVER_NAME, *env, "--", entry["command"], *entry["args"]], host)


def _host_remove(cli: str, host: Host) -> None:
    scope = ["--scope", "user"] if host == "claude-code" else []
    _run([cli, "mcp", "remove", *scope, SERVER_NAME], host)


def install(host: Host, project: Path | None = None) -> Registration:
    """Add (or update) memsync's entry in ``host``'s config file, through the host's own command when it
    is on PATH (see the module doc). Raises MemsyncError for an unreadable file, a failed host command or
    a missing project directory."""
    _check_project(project)
    path = config_file(host, project)
    entry = server_entry(host)
    cli = _host_command(host, project)
    if cli is not None:
        current = registered(host, project)
        if current == entry:
            return Registration(host, path, False)
        if current is not None:
            _host_remove(cli, host)
        _host_add(cli, host, entry)
        if registered(host, project) != entry:
            raise MemsyncError(
                f"cannot register memsync with {host}: `{Path(cli).name} mcp` reported success but {path} "
                f"does not hold memsync's entry. Run `memsync mcp install {host}` again"
            )
        return Registration(host, path, True)
    return Registration(host, path, edit_file(*_edit(host, project, entry)))


def uninstall(host: Host, project: Path | None = None, keep: bool = False) -> Registration:
    """Remove memsync's entry from ``host``'s config file, if there is one, through the host's own
    command when it is on PATH; the servers object, table or block it leaves empty goes unless
    ``keep`` (the user's file held it) or the host requires it. Raises MemsyncError for an unreadable
    file or a failed host command."""
    _check_project(project)
    path = config_file(host, project)
    if not path.exists():
        return Registration(host, path, False)
    cli = _host_command(host, project)
    if cli is not None:
        if registered(host, project) is None:
            return Registration(host, path, False)
        _host_remove(cli, host)
        return Registration(host, path, True)
    return Registration(host, path, edit_file(*_edit(host, project, None, keep)))


def registered(host: Host, project: Path | None = None) -> dict[str, Any] | None:
    """memsync's entry in ``host``'s config file, None when there is none. Raises MemsyncError for an
    unreadable file."""
    path, parse, _ = _edit(host, project, None)
    servers = (read_settled(path, parse) or {}).get(registry.spec(host).key)
    if isinstance(servers, list):  # Continue: a list of named servers
        item = next((s for s in servers if isinstance(s, dict) and s.get("name") == SERVER_NAME), None)
        return None if item is None else {k: v for k, v in item.items() if k != "name"}
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None

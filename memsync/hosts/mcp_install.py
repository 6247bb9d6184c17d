"""Register `memsync mcp` with an agent host, in the host's own config file (DESIGN "Agent hosts", MCP).

| host | file (user; Codex: ``$CODEX_HOME``, default ``~/.codex``) | file (``--project DIR``) | entry |
| --- | --- | --- | --- |
| claude-code | ``~/.claude.json`` | ``DIR/.mcp.json`` | ``mcpServers.memsync`` (``type: stdio``) |
| codex | ``$CODEX_HOME/config.toml`` | ``DIR/.codex/config.toml`` | ``[mcp_servers.memsync]`` |
| cursor | ``~/.cursor/mcp.json`` | ``DIR/.cursor/mcp.json`` | ``mcpServers.memsync`` |

The entry runs this interpreter (``sys.executable -m memsync mcp``: the host finds this memsync whatever
its PATH) with ``MEMSYNC_CONFIG`` set to this config file (Codex passes only a few variables on). The
rest of each file is kept: JSON files through ``settings_file`` (keys, order, indentation), Codex's TOML
through ``toml_table`` (every other byte). Installing twice changes nothing; uninstalling removes only
memsync's entry (and an ``mcpServers`` object it leaves empty).
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memsync.config import config_path
from memsync.errors import MemsyncError
from memsync.hosts.settings_file import edit_json_object, read_json_object
from memsync.hosts.toml_table import edit_table

Host = Literal["claude-code", "codex", "cursor"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex", "cursor")
SERVER_NAME = "memsync"
_CODEX_TABLE = ("mcp_servers", SERVER_NAME)


@dataclass(frozen=True)
class Registration:
    """What an install or uninstall did: the ``host``, its config ``path``, whether the file ``changed``."""

    host: Host
    path: Path
    changed: bool


def config_file(host: Host, project: Path | None = None) -> Path:
    """The file ``host`` reads MCP servers from: the user's, or ``project``'s (see the module doc)."""
    if host == "claude-code":
        return project / ".mcp.json" if project else Path.home() / ".claude.json"
    if host == "cursor":
        return (project or Path.home()) / ".cursor" / "mcp.json"
    if project:
        return project / ".codex" / "config.toml"
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser() / "config.toml"


def server_entry(host: Host) -> dict[str, Any]:
    """memsync's entry for ``host``: the command, its arguments and environment."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "memsync", "mcp"],
        "env": {"MEMSYNC_CONFIG": str(Path(os.path.abspath(config_path())))},
    }
    return {"type": "stdio", **entry} if host == "claude-code" else entry


def _check_project(project: Path | None) -> None:
    if project is not None and not project.is_dir():
        raise MemsyncError(f"--project {project}: not a directory. Give the project's root directory")


def install(host: Host, project: Path | None = None) -> Registration:
    """Add (or update) memsync's entry in ``host``'s config file. Raises MemsyncError for an unreadable
    file or a missing project directory, OSError from the file system."""
    _check_project(project)
    path = config_file(host, project)
    entry = server_entry(host)
    if host == "codex":
        return Registration(host, path, edit_table(path, _CODEX_TABLE, entry))

    def add(settings: dict[str, Any]) -> None:
        servers = settings.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise MemsyncError(
                f"cannot edit {path}: its mcpServers is not an object. Fix the file, then retry"
            )
        servers[SERVER_NAME] = entry

    return Registration(host, path, edit_json_object(path, add))


def uninstall(host: Host, project: Path | None = None) -> Registration:
    """Remove memsync's entry from ``host``'s config file, if there is one. Raises MemsyncError for an
    unreadable file."""
    _check_project(project)
    path = config_file(host, project)
    if not path.exists():
        return Registration(host, path, False)
    if host == "codex":
        return Registration(host, path, edit_table(path, _CODEX_TABLE, None))

    def remove(settings: dict[str, Any]) -> None:
        servers = settings.get("mcpServers")
        if isinstance(servers, dict) and servers.pop(SERVER_NAME, None) is not None and not servers:
            del settings["mcpServers"]

    return Registration(host, path, edit_json_object(path, remove))


def registered(host: Host, project: Path | None = None) -> dict[str, Any] | None:
    """memsync's entry in ``host``'s config file, None when there is none. Raises MemsyncError for an
    unreadable file."""
    path = config_file(host, project)
    if host == "codex":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise MemsyncError(f"cannot read {path}: {exc}. Fix the file, then retry") from None
        entry = data.get("mcp_servers", {}).get(SERVER_NAME)
    else:
        entry = read_json_object(path).get("mcpServers", {}).get(SERVER_NAME)
    return entry if isinstance(entry, dict) else None

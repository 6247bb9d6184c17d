"""Register `memsync mcp` with an agent host, in the host's own config file (DESIGN "Agent hosts", MCP).

| host | file (user; Codex: ``$CODEX_HOME``, default ``~/.codex``) | file (``--project DIR``) | entry |
| --- | --- | --- | --- |
| claude-code | ``~/.claude.json`` | ``DIR/.mcp.json`` | ``mcpServers.memsync`` (``type: stdio``) |
| codex | ``$CODEX_HOME/config.toml`` | ``DIR/.codex/config.toml`` | ``[mcp_servers.memsync]`` |
| cursor | ``~/.cursor/mcp.json`` | ``DIR/.cursor/mcp.json`` | ``mcpServers.memsync`` |

For the user's registration memsync runs the host's own command when it is on PATH (``claude mcp
add-json --scope user`` / ``claude mcp remove --scope user``, ``codex mcp add`` / ``codex mcp remove``):
the host then writes its file under its own lock, which no outside edit can take. Otherwise, and for a
project, memsync edits the file itself, safely against the host's own rewrites (``settings_file``).

The entry runs this interpreter (``sys.executable -m memsync mcp``: the host finds this memsync whatever
its PATH) with ``MEMSYNC_CONFIG`` set to this config file (Codex passes only a few variables on). The
rest of each file is kept: JSON files through ``settings_file`` (keys, order, indentation), Codex's TOML
through ``toml_table`` (every other byte). Installing twice changes nothing; uninstalling removes only
memsync's entry (and an ``mcpServers`` object it leaves empty).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memsync.config import config_path
from memsync.errors import MemsyncError
from memsync.hosts.settings_file import edit_json_object, read_json_object, read_settled
from memsync.hosts.toml_table import edit_table, parse_toml

Host = Literal["claude-code", "codex", "cursor"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex", "cursor")
SERVER_NAME = "memsync"
_CODEX_TABLE = ("mcp_servers", SERVER_NAME)
# A host's command starts a Node or Rust program that reads its whole config: seconds, not minutes.
HOST_COMMAND_TIMEOUT_S = 60.0


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


def _host_command(host: Host, project: Path | None) -> str | None:
    """The host's own CLI that registers a server for the user, when it is on PATH; else None."""
    if project is not None or host == "cursor":
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
    """Remove memsync's entry from ``host``'s config file, if there is one, through the host's own
    command when it is on PATH. Raises MemsyncError for an unreadable file or a failed host command."""
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
        servers = (read_settled(path, lambda data: parse_toml(path, data)) or {}).get("mcp_servers")
    else:
        servers = read_json_object(path).get("mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None

"""Where each agent host keeps its MCP servers: one entry per host (locations only; the edits are in
``mcp_install``, the hooks in ``hooks``).

Bases: ``~`` is the home directory; ``config`` is ``$XDG_CONFIG_HOME`` (default ``~/.config``) on Linux,
``~/Library/Application Support`` on macOS, ``%APPDATA%`` on Windows; ``xdg`` is ``$XDG_CONFIG_HOME``
(default ``~/.config``) on Linux and macOS, ``%APPDATA%`` on Windows.

| host | user file | ``--project DIR`` | format | key: entry | hooks |
| --- | --- | --- | --- | --- | --- |
| claude-code | ``~/.claude.json`` | ``.mcp.json`` | json | ``mcpServers``: stdio | settings.json |
| codex | ``$CODEX_HOME/config.toml`` | ``.codex/config.toml`` | toml | ``[mcp_servers.*]`` | hooks.json |
| cursor | ``~/.cursor/mcp.json`` | ``.cursor/mcp.json`` | json | ``mcpServers`` | hooks.json |
| gemini-cli | ``~/.gemini/settings.json`` | ``.gemini/settings.json`` | json | ``mcpServers`` | the same |
| copilot-cli | ``~/.copilot/mcp-config.json`` | | json | ``mcpServers``: local, tools | hooks/memsync.json |
| vscode | ``config/Code/User/mcp.json`` | ``.vscode/mcp.json`` | jsonc | ``servers``: stdio | |
| opencode | ``xdg/opencode/opencode.json`` | ``opencode.json`` | jsonc | ``mcp``: local, argv | |
| goose | ``xdg/goose/config.yaml`` | | yaml | ``extensions``: stdio | |
| amp | ``xdg/amp/settings.json`` | ``.amp/settings.json`` | jsonc | ``amp.mcpServers`` | |
| continue | ``~/.continue/config.yaml`` | | yaml | ``mcpServers``: named list | |
| zed | ``xdg/zed/settings.json`` | ``.zed/settings.json`` | jsonc | ``context_servers`` | |
| cline | ``config/Code/User/globalStorage/<id>/settings/cline_mcp_settings.json`` | | json | mcpServers | |
| qwen-code | ``~/.qwen/settings.json`` | ``.qwen/settings.json`` | json | ``mcpServers`` | the same |
| kiro | ``~/.kiro/settings/mcp.json`` | ``.kiro/settings/mcp.json`` | json | ``mcpServers`` | |
| devin | ``xdg/devin/config.json`` | ``.devin/config.json`` | json | ``mcpServers`` | |

(``<id>``: the Cline extension's, ``saoudrizwan.claude-dev``. On Windows Goose reads
``%APPDATA%/Block/goose/config/config.yaml`` and Zed ``%APPDATA%/Zed/settings.json``. Devin is Devin
Desktop's and the ``devin`` CLI's user config, where ``devin mcp add -s user`` writes.)

A host is *found* when its user file or the directory of it exists (the host created it).

Checked against the hosts' own CLIs (``tests/commands/test_connect_real_clis.py``: Claude Code, Codex, Gemini
CLI,
Qwen Code, OpenCode and Copilot CLI list memsync's entry as a working server) and, for the others, their
documentation (Kiro: ``~/.kiro/settings/mcp.json``, ``mcpServers`` of command, args, env).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.errors import MemsyncError

Format = Literal["json", "jsonc", "toml", "yaml"]
# The entry's shape: "plain" {command, args, env}; "stdio" adds type stdio; "copilot" type local and
# tools; "opencode" one argv list and `environment`; "goose" an extension; "named" a list item with name.
Shape = Literal["plain", "stdio", "copilot", "opencode", "goose", "named"]
Base = Literal["home", "config", "xdg"]


@dataclass(frozen=True)
class HostSpec:
    """One agent host: its ``name``, user file (``base`` + ``user`` parts), project file (``project``
    parts under the project directory, None: the host has none), ``format``, the top-level ``key`` that
    holds MCP servers and the ``shape`` of memsync's entry there."""

    name: str
    base: Base
    user: tuple[str, ...]
    project: tuple[str, ...] | None
    format: Format
    key: str
    shape: Shape
    windows: tuple[str, ...] | None = None  # under %APPDATA% on Windows, when not ``user``


SPECS: tuple[HostSpec, ...] = (
    HostSpec("claude-code", "home", (".claude.json",), (".mcp.json",), "json", "mcpServers", "stdio"),
    HostSpec(
        "codex", "home", (".codex", "config.toml"), (".codex", "config.toml"), "toml", "mcp_servers", "plain"
    ),
    HostSpec(
        "cursor", "home", (".cursor", "mcp.json"), (".cursor", "mcp.json"), "json", "mcpServers", "plain"
    ),
    HostSpec(
        "gemini-cli",
        "home",
        (".gemini", "settings.json"),
        (".gemini", "settings.json"),
        "json",
        "mcpServers",
        "plain",
    ),
    HostSpec("copilot-cli", "home", (".copilot", "mcp-config.json"), None, "json", "mcpServers", "copilot"),
    HostSpec(
        "vscode", "config", ("Code", "User", "mcp.json"), (".vscode", "mcp.json"), "jsonc", "servers", "stdio"
    ),
    HostSpec(
        "opencode", "xdg", ("opencode", "opencode.json"), ("opencode.json",), "jsonc", "mcp", "opencode"
    ),
    HostSpec(
        "goose",
        "xdg",
        ("goose", "config.yaml"),
        None,
        "yaml",
        "extensions",
        "goose",
        ("Block", "goose", "config", "config.yaml"),
    ),
    HostSpec(
        "amp", "xdg", ("amp", "settings.json"), (".amp", "settings.json"), "jsonc", "amp.mcpServers", "plain"
    ),
    HostSpec("continue", "home", (".continue", "config.yaml"), None, "yaml", "mcpServers", "named"),
    HostSpec(
        "zed", "xdg", ("zed", "settings.json"), (".zed", "settings.json"), "jsonc", "context_servers", "plain"
    ),
    HostSpec(
        "cline",
        "config",
        ("Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
        None,
        "json",
        "mcpServers",
        "plain",
    ),
    HostSpec(
        "qwen-code",
        "home",
        (".qwen", "settings.json"),
        (".qwen", "settings.json"),
        "json",
        "mcpServers",
        "plain",
    ),
    HostSpec(
        "kiro",
        "home",
        (".kiro", "settings", "mcp.json"),
        (".kiro", "settings", "mcp.json"),
        "json",
        "mcpServers",
        "plain",
    ),
    HostSpec(
        "devin", "xdg", ("devin", "config.json"), (".devin", "config.json"), "json", "mcpServers", "plain"
    ),
)
NAMES: tuple[str, ...] = tuple(spec.name for spec in SPECS)


def spec(host: str) -> HostSpec:
    """The entry of ``host``. Raises MemsyncError for a host memsync does not know."""
    for found in SPECS:
        if found.name == host:
            return found
    raise MemsyncError(f"unknown agent host {host!r}. Use one of: {', '.join(NAMES)}")


def _base(base: Base) -> Path:
    home = Path.home()
    if sys.platform == "win32":
        return home if base == "home" else Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    if base == "home":
        return home
    if base == "config" and sys.platform == "darwin":
        return home / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")


def user_file(host: str) -> Path:
    """The user's config file of ``host`` on this OS (Codex: under ``$CODEX_HOME`` when set)."""
    entry = spec(host)
    if host == "codex" and os.environ.get("CODEX_HOME"):
        return Path(os.environ["CODEX_HOME"]).expanduser() / "config.toml"
    if sys.platform == "win32" and entry.windows is not None:
        return _base("config").joinpath(*entry.windows)
    return _base(entry.base).joinpath(*entry.user)


def project_file(host: str, project: Path) -> Path:
    """``host``'s config file in the project directory ``project``. Raises MemsyncError when the host
    reads MCP servers from no project file."""
    entry = spec(host)
    if entry.project is None:
        raise MemsyncError(
            f"{host} has no project config file. Leave out --project to connect it for the user"
        )
    return project.joinpath(*entry.project)


def found(host: str) -> bool:
    """Whether ``host`` looks installed: its user file exists, or the directory of it (not the home
    directory itself) does."""
    path = user_file(host)
    return path.exists() or (path.parent != Path.home() and path.parent.is_dir())

"""`memsync mcp install|uninstall|status`: memsync's MCP server registered with an agent host
(``hosts.mcp_install``: the config files and their entries; DESIGN "Agent hosts")."""

from __future__ import annotations

from pathlib import Path

from memsync.commands.installs import found_before, new_dirs, record
from memsync.errors import MemsyncError
from memsync.hosts import mcp_install, registry
from memsync.hosts.mcp_install import Host


def install_line(host: Host, project: Path | None) -> str:
    """Register `memsync mcp` with ``host`` (for the user, or in the project directory ``project``) and
    say what was done. Raises ``MemsyncError`` (see ``mcp_install.install``)."""
    file = mcp_install.config_file(host, project)
    existed, dirs = file.exists(), new_dirs(file)
    done = mcp_install.install(host, project)
    # Recorded even when the entry was there already (written before installs were recorded, say), so
    # uninstall visits this file wherever it is.
    record(done.path, host, "mcp", created=not existed, dirs=dirs, project=project)
    if done.changed:
        return f"registered memsync's MCP server with {host} in {done.path}; restart {host} to load it"
    return f"memsync's MCP server is already registered with {host} in {done.path}"


def uninstall_line(host: Host, project: Path | None) -> str:
    """Remove memsync's entry from ``host``'s config file and say so; a servers object it leaves empty
    stays when the file held it before memsync's first edit. Raises ``MemsyncError``."""
    file = mcp_install.config_file(host, project)
    done = mcp_install.uninstall(host, project, keep=registry.spec(host).key in found_before(file))
    verb = (
        "removed memsync's MCP server from" if done.changed else "memsync's MCP server was not registered in"
    )
    return f"{verb} {done.path}"


def status_lines(project: Path | None) -> list[str]:
    """One line per agent host: whether memsync's MCP server is registered (for the user, or in
    ``project``) and with which interpreter, flagged when that interpreter is gone, or why its file
    cannot be read."""
    lines: list[str] = []
    for host in mcp_install.HOSTS:
        path = mcp_install.config_file(host, project)
        try:
            entry = mcp_install.registered(host, project)
        except MemsyncError as exc:  # one unreadable file does not hide the other hosts
            lines.append(f"{host}: {exc}")
            continue
        if entry is None:
            lines.append(f"{host}: not registered ({path})")
            continue
        command = str(entry.get("command", ""))
        missing = "" if Path(command).exists() else " (that interpreter no longer exists: install again)"
        lines.append(
            f"{host}: registered in {path}: {command} {' '.join(map(str, entry.get('args', [])))}{missing}"
        )
    return lines

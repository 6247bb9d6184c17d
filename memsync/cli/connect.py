"""CLI: `memsync connect HOST`, `connect --dry-run HOST`, `connect --status`, `disconnect HOST`: memsync's
MCP server and hooks in an agent host's own config files (``commands.connect``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app, note_no_store
from memsync.errors import MemsyncError
from memsync.hosts.registry import NAMES

HostArgument = Annotated[str | None, typer.Argument(help=f"The agent host: {', '.join(NAMES)}.")]
ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", help="A project's root: its own config file instead of the user's."),
]


@app.command("connect")
def connect_command(
    host: HostArgument = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the change as a unified diff; write nothing.")
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Show every host: found, connected, config matching.")
    ] = False,
    project: ProjectOption = None,
) -> int:
    """Register memsync's MCP server (and its hooks, where HOST has hooks) in HOST's own config.

    The rest of the file is kept as it was and the previous file is saved beside it
    (.memsync-backup); running it again changes nothing. `memsync disconnect HOST` undoes it.
    """
    from memsync.commands import connect

    if status:
        lines = connect.status(project)
    elif host is None:
        raise MemsyncError(f"connect: no host given. Name one of: {', '.join(NAMES)} (or use --status)")
    else:
        lines = connect.connect(host, project, dry_run)
    for line in lines:
        typer.echo(line)
    if host is not None and not dry_run and not status:
        note_no_store(": until then the MCP tools find only the default memory file")
    return 0


@app.command("disconnect")
def disconnect_command(
    host: Annotated[str, typer.Argument(help=f"The agent host: {', '.join(NAMES)}.")],
    project: ProjectOption = None,
) -> int:
    """Remove exactly what `memsync connect HOST` added to HOST's config; nothing else changes."""
    from memsync.commands import connect

    for line in connect.disconnect(host, project):
        typer.echo(line)
    return 0

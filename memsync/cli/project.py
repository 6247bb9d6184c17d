"""CLI: `memsync project alias PATH NAME`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app

project_app = typer.Typer(
    help="Name a project's identity, which decides whose memory it shares.", no_args_is_help=True
)
app.add_typer(project_app, name="project")


@project_app.command("alias")
def alias_command(
    path: Annotated[Path, typer.Argument(help="The project's folder on this machine.")],
    name: Annotated[str, typer.Argument(help="The name every machine gives it, such as acme/shop.")],
) -> int:
    """Name the project at PATH: its memory meets the memory of every project named NAME.

    A project without a git remote stays on its machine until named; one with a remote is keyed by it
    unless named. What it synced under its previous key is folded in.
    """
    from memsync.commands import project

    for line in project.alias(path, name).lines:
        typer.echo(line)
    return 0

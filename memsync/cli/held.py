"""CLI: `memsync held` (the lines the secret scanner keeps here), `held allow FILE LINE`, and `held restore
FOLDER` / `held delete FOLDER` for a folder found empty while memsync knows its files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app
from memsync.cli.sync import ConfigOption

held_app = typer.Typer(invoke_without_command=True)
app.add_typer(held_app, name="held")


@held_app.callback()
def held_command(ctx: typer.Context, config: ConfigOption = None) -> None:
    """List the lines the secret scanner kept on this machine, with their text (shown here only).

    `memsync held allow FILE LINE` says one is no secret: it then syncs, and every peer lets it pass."""
    ctx.obj = config
    if ctx.invoked_subcommand is None:
        from memsync.commands.held import held_lines

        found = held_lines(config)
        for item in found:
            where = f"{item.file}:{item.line}" if item.line else f"{item.file} (its name)"
            typer.echo(f"{where}  [{item.store}] {item.detector}: {item.text}")
        if not found:
            typer.echo("no line is held back")


@held_app.command("allow")
def allow_command(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The live file, as `memsync held` lists it.")],
    line: Annotated[int, typer.Argument(min=1, help="The line number, as `memsync held` lists it.")],
) -> None:
    """Say a held line is no secret: its hash (never its text) joins the store's allow-list, which syncs,
    so peers stop holding it too; the next sync publishes the line."""
    from memsync.commands.held import allow

    typer.echo(allow(ctx.obj, file, line))


FolderArgument = Annotated[Path, typer.Argument(help="The emptied folder, as `memsync status` names it.")]


@held_app.command("restore")
def restore_command(ctx: typer.Context, folder: FolderArgument) -> None:
    """Bring back the files of a folder found empty (`memsync status`: "held: ... is empty"): the next sync
    delivers the store's copies into it."""
    from memsync.commands.held import restore_folder

    typer.echo(restore_folder(ctx.obj, folder))


@held_app.command("delete")
def delete_command(ctx: typer.Context, folder: FolderArgument) -> None:
    """Delete everywhere the files of a folder found empty (`memsync status`: "held: ... is empty"): they
    leave the store now, and the peers with the next sync; a file a peer changed meanwhile is kept."""
    from memsync.commands.held import delete_folder

    typer.echo(delete_folder(ctx.obj, folder))

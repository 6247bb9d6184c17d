"""CLI: `memsync review` (list proposals), `review approve ID`, `review reject ID --why TEXT`."""

from __future__ import annotations

from typing import Annotated

import typer

from memsync.cli.app import app
from memsync.cli.sync import ConfigOption

review_app = typer.Typer(invoke_without_command=True)
app.add_typer(review_app, name="review")

_ID = Annotated[str, typer.Argument(metavar="ID", help="A proposal's id, as `memsync review` lists it.")]


@review_app.callback()
def review_command(
    ctx: typer.Context,
    every: Annotated[bool, typer.Option("--all", help="Decided proposals too, with every decision.")] = False,
    config: ConfigOption = None,
) -> None:
    """List what agents proposed for stores set to review; approve or reject it.

    A proposal reaches no live file, session-start context or recall until approved. Set a store to
    review with `memsync store add NAME --review` or `memsync config set stores.NAME.review true`."""
    ctx.obj = config
    if ctx.invoked_subcommand is None:
        from memsync.commands.review import review_lines

        for line in review_lines(config, every=every):
            typer.echo(line)


@review_app.command("approve")
def approve_command(ctx: typer.Context, proposal: _ID) -> None:
    """Approve a proposal: its entry is written to the memory file here, and syncs to every member."""
    from memsync.commands.review import decide

    typer.echo(decide(ctx.obj, proposal, "approved"))


@review_app.command("reject")
def reject_command(
    ctx: typer.Context,
    proposal: _ID,
    why: Annotated[str, typer.Option("--why", help="Why it is rejected (recorded, seen by every member).")],
) -> None:
    """Reject a proposal: it stays out of memory; who rejected it and why are recorded and sync."""
    from memsync.commands.review import decide

    typer.echo(decide(ctx.obj, proposal, "rejected", why))

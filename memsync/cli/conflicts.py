"""CLI: `memsync conflicts`, `memsync resolve`."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Literal

import typer

from memsync.base.paths import config_path
from memsync.cli.app import app
from memsync.cli.sync import ConfigOption


@app.command("conflicts")
def conflicts_command(config: ConfigOption = None) -> int:
    """List the files an edit on two machines at once left with both versions, each version's host and time.

    Resolve one with `memsync resolve PATH --keep 1|2|both`, or by editing it into one text. A MEMORY.md
    index with several lines for one file (both kept the same way) is listed too: edit it to keep one. So
    is a memory file's entry that two machines superseded while apart: forget the wrong superseder."""
    from memsync.commands.conflicts import conflicts, forks

    found = conflicts(config or config_path())
    for conflict in found:
        said = f"{conflict.file} [{conflict.store}]"
        if conflict.item is not None:
            said += f": {len(conflict.labels)} index lines for {conflict.item}; edit it to keep one"
        typer.echo(said)
        for number, label in enumerate(conflict.labels, 1):
            typer.echo(f"    {number}: {label}")
    forked = forks(config or config_path())
    for fork in forked:
        typer.echo(
            f"{fork.file} [{fork.store}]: entry {fork.superseded} superseded by "
            f"{len(fork.ids)} live entries; keep one: "
            f"`memsync forget ID --file {shlex.quote(fork.file)}` the wrong one"
        )
        for number, label in enumerate(fork.labels, 1):
            typer.echo(f"    {number}: {label}")
    if not found and not forked:
        typer.echo("no file holds two kept versions")
    return 0


@app.command("resolve")
def resolve_command(
    path: Annotated[Path, typer.Argument(help="A live file `memsync conflicts` lists.")],
    keep: Annotated[
        Literal["1", "2", "both"],
        typer.Option("--keep", help="The version to keep, or both one after the other."),
    ],
) -> int:
    """Resolve PATH's two kept versions: keep one (or both), drop memsync's note; the edit then syncs."""
    from memsync.commands.conflicts import resolve

    typer.echo(resolve(path, keep))
    return 0

"""CLI: `memsync purge`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memsync.base.paths import config_path
from memsync.base.wording import plural
from memsync.cli.app import app
from memsync.cli.sync import ConfigOption
from memsync.errors import MemsyncError

# typer's rich help re-wraps only a command's first paragraph; it keeps the line breaks of the others as
# written, so a docstring paragraph wrapped at the source's line length came out broken mid-sentence. Each
# paragraph is one line here, and the help wraps it to the terminal.
PURGE_HELP = (
    "Remove a secret or a wrong entry from the live files and from the store's whole history.\n\n"
    "Rewrites the history of every ref and force-pushes it once (the only force push memsync makes), with "
    "a record of a hash of each removed line, never the text. Then run the same command, or `memsync resync "
    "REMOTE`, on every other machine with the store: either cleans its files and history of the recorded "
    "lines and adopts the rewritten remote."
)


@app.command("purge", help=PURGE_HELP)
def purge_command(
    text: Annotated[
        str | None,
        typer.Argument(
            help="Remove every line holding this exact text (one line, at least 4 characters).",
            show_default=False,
        ),
    ] = None,
    entry: Annotated[
        str | None,
        typer.Option(
            "--entry",
            help="Remove every line of the memory-file entry with this id (its versions and "
            "tombstone) instead.",
        ),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", help="Only this store (default: every store).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before rewriting history.")] = False,
    config: ConfigOption = None,
) -> int:
    """`memsync purge`: what PURGE_HELP says; exit 0 when every store was handled."""
    from memsync.commands.needle import Needle
    from memsync.commands.purge import purge  # the sync engine: imported only when purging

    needle = Needle(text=text, entry_id=entry)
    if not yes:
        if not sys.stdin.isatty():
            raise MemsyncError(
                "purge rewrites the store's history and force-pushes it: confirm with --yes "
                "when running without a terminal"
            )
        typer.confirm(
            f"Remove {needle.describe()} from the live files and from the whole history, and "
            "force-push the rewritten history?",
            abort=True,
        )
    found = False
    for report in purge(config or config_path(), needle, store):
        if not report.found:
            typer.echo(f"store {report.store}: {needle.describe()} was not found; nothing changed")
            continue
        found = True
        typer.echo(
            f"store {report.store}: removed {plural(report.live_lines, 'line')} from "
            f"{plural(len(report.live_files), 'live file')}; rewrote "
            f"{plural(report.objects_changed, 'object')} of its history"
        )
        for path in report.live_files:
            typer.echo(f"  cleaned {path}")
        for line in report.remotes:
            typer.echo(f"  {line}")
    if found:
        typer.echo(
            "Run the same `memsync purge` (or `memsync resync REMOTE`) on every other machine that syncs "
            "these stores (their `memsync status` shows the remote as rewritten)."
        )
    return 0

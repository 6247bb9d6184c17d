"""CLI commands for role directories of the markdown memory skill: ``snapshot`` and ``migrate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.base.defaults import DEFAULT_SNAPSHOT_BYTES
from memsync.cli.app import app


@app.command("snapshot")
def snapshot_command(
    role_dir: Annotated[
        Path, typer.Argument(help="Role directory, e.g. .agents/memory/python-dev or ~/.claude/memory.")
    ],
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes", min=1, help="Size cap in bytes; a longer snapshot is cut at a whole line."
        ),
    ] = DEFAULT_SNAPSHOT_BYTES,
) -> int:
    """Write ROLE_DIR/snapshot.md: the index, every curated entry and the 3 latest daily logs.

    Meant for an agent host's launch hook. Reads and writes local files only; it never syncs.
    """
    from memsync.formats.markdown.roledir import RoleDir

    result = RoleDir(role_dir).snapshot(max_bytes)
    cut = f", cut to fit {max_bytes} bytes" if result.cut else ""
    typer.echo(f"wrote {result.path} ({result.size} bytes{cut})")
    return 0


@app.command("migrate")
def migrate_command(
    root: Annotated[Path, typer.Argument(help="Project root (or home directory) holding the legacy memory.")],
    apply: Annotated[bool, typer.Option("--apply", help="Do the moves; without it, only show them.")] = False,
) -> int:
    """Move legacy role memory under ROOT into .agents/memory/<role>/.

    Legacy places: .claude/memory/<role>/, .agents-legacy/memory/<role>/ (moved whole) and a flat
    .claude/memory/<role>.md (becomes <role>/project_briefing.md). Shows the plan unless --apply is given.
    Never overwrites anything; a .claude/memory/ holding MEMORY.md is Claude Code's own memory folder
    and is left alone.
    """
    from memsync.formats.markdown.migrate import migrate

    steps = migrate(root, apply=apply)
    if not steps:
        typer.echo(f"nothing to migrate under {root}")
        return 0
    for step in steps:
        typer.echo(step.describe(root, applied=apply))
    if not apply and any(step.action != "skip" for step in steps):
        typer.echo("dry run: nothing changed. Run again with --apply to do it.")
    return 0

"""CLI commands that pass memory between agents: ``handoff`` and ``import``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memsync.base.defaults import DEFAULT_HANDOFF_BYTES
from memsync.cli.app import app
from memsync.formats.jsonl.records import KINDS

if TYPE_CHECKING:
    from memsync.commands.handoff.mapping import HandoffReport

_AGENT_HELP = "a tracked role or memory file by name, or a path to a role directory or *.jsonl memory file"


class OutputFormat(StrEnum):
    """What ``--format`` may ask for instead of writing into TO."""

    prompt = "prompt"


def _print(report: HandoffReport, to_stderr: bool) -> None:
    for skip in report.skipped:
        if skip.listed:
            detail = f" ({skip.detail})" if skip.detail else ""
            typer.echo(f"skipped {skip.item}: {skip.reason}{detail}", err=to_stderr)
    typer.echo(f"{report.source} -> {report.target}: {report.summary()}", err=to_stderr)
    if report.receivers is not None:
        when = "would receive it" if report.dry_run else "receives it on its next sync"
        typer.echo(f"{report.target} syncs with {report.receivers}, which {when}", err=to_stderr)


@app.command("handoff")
def handoff_command(
    from_agent: Annotated[str, typer.Argument(metavar="FROM", help=f"The giving agent: {_AGENT_HELP}.")],
    to_agent: Annotated[
        str | None,
        typer.Argument(
            metavar="TO",
            help=f"The receiving agent: {_AGENT_HELP}. A missing *.jsonl path is "
            "created as a memory file, any other missing path as a role directory. Optional "
            "with --format prompt or --out.",
        ),
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            help="Only entries for this scope (global entries always match); repeat "
            "for several. Curated entries and log items have no scope: all kept.",
        ),
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            help=f"Only this kind ({', '.join(KINDS)}; curated types map: "
            "user=preference, feedback=lesson/avoid, project=fact, reference=source); repeat "
            "for several.",
        ),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag",
            help="Only entries with this tag (JSONL tags, frontmatter tags); repeat for "
            "several. Daily-log items have no tags: all kept.",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only entries created or updated at or after this UTC date or time "
            "(2026-11-01 or 2026-11-01T09:00:00Z).",
        ),
    ] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            help="Only entries with at least this confidence (0 to 1). "
            "Curated entries and log items have none: all kept.",
        ),
    ] = None,
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes",
            min=1,
            help="Size cap in bytes of the --format prompt block; it is cut at whole entries.",
        ),
    ] = DEFAULT_HANDOFF_BYTES,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option("--format", help="prompt: print a block for the receiver's context instead of writing."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write a new standalone agent-memory/0.1 file instead of writing into "
            "TO (any agent can read it; `memsync import` receives it).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be handed; write nothing.")
    ] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            help="Hand it even when TO's store syncs with a remote FROM's store does not (that remote "
            "receives it). Without it such a handoff is refused, nothing written.",
        ),
    ] = False,
) -> int:
    """Pass FROM's live memory to TO in TO's own format, with provenance and without duplicates.

    Memory-file entries keep their ids and get a handoff:<FROM> tag.
    Curated entries keep their slugs; if TO has another entry under a slug, FROM's is <slug>__from_<FROM>.md.
    The receiver's daily log gets one line saying what arrived.
    Entries that look like secrets are skipped and listed. Handing the same memory twice adds nothing.
    A running daemon syncs the result like any other write.
    """
    from memsync.base.argcheck import existing_parent
    from memsync.commands.handoff.handoff import handoff
    from memsync.commands.handoff.mapping import Filters
    from memsync.commands.handoff.reading import parse_since

    filters = Filters(
        scopes=tuple(scope or ()),
        kinds=tuple(kind or ()),
        tags=tuple(tag or ()),
        since=None if since is None else parse_since(since),
        min_confidence=min_confidence,
    )
    prompt = output_format is OutputFormat.prompt
    report = handoff(
        from_agent,
        to_agent,
        filters,
        max_bytes=max_bytes,
        dry_run=dry_run,
        fmt="prompt" if prompt else "write",
        out=None if out is None else existing_parent(out, "--out"),
        yes=yes,
    )
    if report.prompt is not None:
        typer.echo(report.prompt, nl=False)
    _print(report, to_stderr=prompt)
    return 0


@app.command("import")
def import_command(
    file: Annotated[
        Path,
        typer.Argument(metavar="FILE", help="An agent-memory/0.1 file, e.g. one written by handoff --out."),
    ],
    to_agent: Annotated[
        str, typer.Option("--to", metavar="AGENT", help=f"The receiving agent: {_AGENT_HELP}.")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be received; write nothing.")
    ] = False,
) -> int:
    """Receive a memory file into AGENT with handoff's rules: ids kept, nothing twice, secrets skipped."""
    from memsync.commands.handoff.handoff import import_file

    _print(import_file(file, to_agent, dry_run=dry_run), to_stderr=False)
    return 0

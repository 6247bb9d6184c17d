"""CLI commands for agent-memory/0.1 memory files: remember, forget, show, prompt, compact, check.

``prompt`` and ``check`` also take a role directory: a directory goes to the markdown format's
``role_prompt`` / ``check_role_dir``, a file to the JSON Lines format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.base.defaults import DEFAULT_PROMPT_BYTES, DEFAULT_SNAPSHOT_BYTES
from memsync.cli.app import app
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.records import KINDS, USER_SOURCE

_FILE_HELP = "Memory file (agent-memory/0.1 JSON Lines). Default: ~/.agent-memory/<user>.jsonl."


@app.command("remember")
def remember_command(
    text: Annotated[str, typer.Argument(help="The entry: one sentence an agent can read as is.")],
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            "-k",
            help=f"One of: {', '.join(KINDS)}. Default: fact, or the kind of the entry it supersedes.",
            show_default=False,
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            "-s",
            help="global, a domain such as github.com, or project:<name>. Default: global, or the scope "
            "of the entry it supersedes.",
            show_default=False,
        ),
    ] = None,
    tags: Annotated[
        list[str] | None, typer.Option("--tag", "-t", help="A tag; repeat the option for several.")
    ] = None,
    source: Annotated[
        str,
        typer.Option("--source", help="Where it was learned: user (the person said it), a URL, a session."),
    ] = USER_SOURCE,
    confidence: Annotated[
        float, typer.Option("--confidence", help="0 to 1. Inferred lessons should start below 1.")
    ] = 1.0,
    expires: Annotated[
        str | None,
        typer.Option(
            "--expires", help="When to ignore it: a UTC time (2026-12-31T00:00:00Z) or 30d, 12h, 2w."
        ),
    ] = None,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            metavar="ID",
            help="Replace the entry with this id: it drops out of the view whatever its date (the way to "
            "correct an entry a machine with a bad clock dated in the future). Without --file, the tracked "
            "memory file that holds it. Its tags are kept unless --tag is given.",
        ),
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help=_FILE_HELP)] = None,
    propose: Annotated[
        bool,
        typer.Option(
            "--propose",
            help="Record it as a proposal for the file's store set to review (memsync review), "
            "not in the file.",
        ),
    ] = False,
) -> int:
    """Append an entry to a memory file (created if missing) and print its id.

    Refused when the text looks like it holds a secret (memory must never store one), and while this
    machine's clock runs ahead of its remotes' (the entry would outrank later corrections everywhere).
    """
    from memsync.commands import memory
    from memsync.memoryfile.file import NewEntry

    typer.echo(
        memory.remember_line(
            NewEntry(
                text,
                kind=kind,
                scope=scope,
                tags=tuple(tags or ()) or None,  # none given: a superseding entry keeps the old tags
                source=source,
                confidence=confidence,
                expires=expires,
                supersedes=supersedes,
            ),
            file,
            propose,
        )
    )
    return 0


@app.command("dupes")
def dupes_command(
    store: Annotated[
        str | None, typer.Option("--store", help="Only this store's memory. Default: all tracked memory.")
    ] = None,
) -> int:
    """List pairs of entries that say the same thing in other words, with their similarity (0 to 1).

    Needs the semantic extra. Nothing is deleted: supersede or forget one of a pair yourself.
    """
    from memsync.commands import memory

    typer.echo("\n".join(memory.dupes_lines(store)))
    return 0


@app.command("forget")
def forget_command(
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="Id of the entry to delete (memsync show).")],
    file: Annotated[Path | None, typer.Option("--file", "-f", help=_FILE_HELP)] = None,
) -> int:
    """Delete an entry for good by appending a tombstone for its id."""
    from memsync.commands import memory

    if not entry_id.strip():
        raise typer.BadParameter("an entry id is needed, as `memsync show` lists it", param_hint="'ID'")
    typer.echo(memory.forget_line(entry_id, file))
    return 0


@app.command("show")
def show_command(
    file: Annotated[Path | None, typer.Argument(metavar="FILE", help=_FILE_HELP, show_default=False)] = None,
    scope: Annotated[
        str | None, typer.Option("--scope", "-s", help="Only entries that apply to this scope.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line, as stored.")] = False,
) -> int:
    """Print the live entries of a memory file (after deletions, replacements and expiry).

    Lines that are not valid entries are skipped with a warning; `memsync check` lists them.
    """
    from memsync.commands import memory

    lines, problems = memory.show_lines(file, scope, as_json=as_json)
    for line in lines:
        typer.echo(line)
    if problems is not None:
        typer.echo(problems, err=True)
    return 0


@app.command("prompt")
def prompt_command(
    path: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE|ROLE_DIR", help=f"{_FILE_HELP} Or a role directory.", show_default=False
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", "-s", help="The task's scope: global, a domain or project:<name>."),
    ] = None,
    kinds: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            "-k",
            help=f"Only this kind ({', '.join(KINDS)}; memory files only); repeat for several (default all).",
        ),
    ] = None,
    max_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-bytes",
            min=1,
            help=f"Size cap in bytes, cut at whole entries. Default: "
            f"{DEFAULT_PROMPT_BYTES} for a file, "
            f"{DEFAULT_SNAPSHOT_BYTES} for a role directory.",
        ),
    ] = None,
) -> int:
    """Print the memory block to put at the top of an agent's context.

    For a memory file: entries grouped by kind, filtered by scope, the user's own entries first.
    For a role directory: its snapshot text (index, entries, latest daily logs), not written to disk.
    """
    from memsync.mcp.prompt import prompt_text

    target = path if path is not None else default_memory_path()
    text = prompt_text(target, scope, kinds or (), max_bytes)
    typer.echo(text, nl=False)
    return 0


@app.command("compact")
def compact_command(
    file: Annotated[Path | None, typer.Argument(metavar="FILE", help=_FILE_HELP, show_default=False)] = None,
) -> int:
    """Rewrite a memory file with only its live entries and its deletions, atomically.

    Refused while another memsync process writes the file. Run it when no agent is writing. A file memsync
    tracks is compacted in its store too (and committed), so the dead lines stay removed on every machine.
    """
    from memsync.commands import memory

    typer.echo(memory.compact_line(file))
    return 0


@app.command("check")
def check_command(
    path: Annotated[Path, typer.Argument(help="A memory file (.jsonl) or a role directory.")],
) -> int:
    """Validate a memory file or role directory: one `path:line: message` per problem.

    Entries dated in the future of this machine's clock are listed with the host that wrote them and how
    to correct them. Exit code 0 when there is nothing to fix, 1 when problems are listed.
    """
    from memsync.commands import memory

    problems = memory.check_lines(path)
    for problem in problems:
        typer.echo(problem)
    return 1 if problems else 0

"""CLI: `memsync mcp` (the MCP server on stdio), `mcp install|uninstall|status HOST`, and `recall`.

The server imports the MCP SDK in the command's body (while it answers ``initialize``: ``handshake``):
every CLI call imports this module to list its commands, and only `memsync mcp` needs the SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from memsync.base.defaults import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT
from memsync.cli.app import app, note_no_store
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import KINDS
from memsync.hosts.registry import NAMES

mcp_app = typer.Typer(invoke_without_command=True)
app.add_typer(mcp_app, name="mcp")


HostArgument = Annotated[str, typer.Argument(help=f"The agent host: {', '.join(NAMES)}.")]
ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="A project's root: register in its own file (.mcp.json, .cursor/mcp.json, ...) instead of "
        "for the user. The entry names this machine's interpreter and config.",
    ),
]


@mcp_app.callback()
def mcp_command(ctx: typer.Context) -> None:
    """Run the MCP server on stdin/stdout (what an agent host starts), or register it with a host.

    Without a command the server runs until the client closes stdin. Tools: remember, forget, recall,
    prompt, history, handoff, status. Resources: every tracked memory file and role directory, as
    memsync://<store>/<store path>. `memsync mcp install HOST` registers it with an agent host.
    """
    if ctx.invoked_subcommand is None:
        from memsync.mcp.handshake import serve  # imports the MCP SDK while answering initialize

        serve()


@mcp_app.command("install")
def install_command(host: HostArgument, project: ProjectOption = None) -> int:
    """Register `memsync mcp` in HOST's config file (the rest of it is kept; repeating changes nothing).

    The MCP half of `memsync connect HOST`.
    """
    from memsync.commands.connect import connect

    for line in connect(host, project, hooked=False):
        typer.echo(line)
    note_no_store(": until then the MCP tools find only the default memory file")
    return 0


@mcp_app.command("uninstall")
def uninstall_command(host: HostArgument, project: ProjectOption = None) -> int:
    """Remove memsync's entry from HOST's config file (nothing else)."""
    from memsync.commands.connect import disconnect

    for line in disconnect(host, project, hooked=False):
        typer.echo(line)
    return 0


@mcp_app.command("status")
def status_command(project: ProjectOption = None) -> int:
    """Show, for each agent host, whether memsync's MCP server is registered and with which interpreter."""
    from memsync.commands import mcp_install as install

    for line in install.status_lines(project):
        typer.echo(line)
    return 0


@app.command("recall")
def recall_command(
    query: Annotated[str, typer.Argument(help="A few keywords.")],
    scope: Annotated[
        str | None, typer.Option("--scope", "-s", help="Only memory-file entries that apply to this scope.")
    ] = None,
    kinds: Annotated[
        list[str] | None,
        typer.Option("--kind", "-k", help=f"Only this kind ({', '.join(KINDS)}); repeatable."),
    ] = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            "-n",
            min=1,
            max=MAX_RECALL_LIMIT,
            help=f"How many hits at most (1 to {MAX_RECALL_LIMIT}).",
        ),
    ] = DEFAULT_RECALL_LIMIT,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per hit.")] = False,
) -> int:
    """Search the tracked memory by keywords, best first, each hit with who wrote it and when.

    Searches memory-file entries, curated entries, indexes and daily logs; each hit has its id, file,
    the host that wrote it and the date. With the semantic extra, a hit that holds no word of the query
    (found by meaning alone) says "(by meaning)"."""
    from memsync.config.file import NO_STORE, no_store_note
    from memsync.recall.search import recall
    from memsync.tracks.resolve import current_config

    hits = recall(current_config(), query, scope, kinds or (), limit)
    before_init = no_store_note() is not None  # only the default memory file was searched
    if before_init and not hits:
        raise MemsyncError(f"nothing matches {query!r} in the default memory file: {NO_STORE}")
    if hits and all(hit.by_meaning for hit in hits):
        typer.echo(f"memsync recall: no text holds a word of {query!r}; the closest in meaning:", err=True)
    for hit in hits:
        shown = hit.to_json()  # peers' names and text neutralised
        if as_json:
            typer.echo(json.dumps(shown, ensure_ascii=False))
        else:
            where = shown["store_path"] or shown["file"]
            how = "  (by meaning)" if hit.by_meaning else ""
            typer.echo(f"{shown['id']}  {shown['date']}  {shown['host']}  {where}{how}\n    {shown['text']}")
    if before_init:
        note_no_store(": only the default memory file was searched")
    elif not hits:
        typer.echo(f"memsync recall: nothing in the tracked memory matches {query!r}", err=True)
    return 0

"""`memsync mcp`: an MCP server over stdio on the official SDK (``mcp`` 2.x, ``MCPServer``).

Tools (each with a JSON schema the SDK derives from the signature, and a one-line description):
``remember``, ``forget``, ``recall``, ``prompt``, ``history``, ``handoff``, ``status``; resources: the
tracked memory, as ``memsync://<store>/<store path>`` (``mcp_resources``). Writes go through
``MemoryFile`` like every other writer (DESIGN I5), reads through the same views, and the secret scanner
refuses secrets (I6). A ``MemsyncError`` becomes a tool result with ``isError`` and its one-line
message; arguments that fail the schema get the SDK's validation error; a request the SDK cannot
decode gets a JSON-RPC error (``stdio.answering_stdio``); an unexpected exception is
logged with its traceback on stderr and the server goes on serving. Sync tools run in the SDK's worker
threads, so a slow ``history`` does not hold up a ``remember``; a ``recall`` the kept index held open
answers (a few milliseconds) is answered by the transport itself on the event loop (``stdio``).

This module imports the SDK: only the ``memsync mcp`` command imports it, so other commands stay fast.
"""

from __future__ import annotations

import functools
import logging
import signal
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

import anyio
import mcp_types as types
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from pydantic import AnyUrl, Field, TypeAdapter, WithJsonSchema
from typing_extensions import TypedDict  # not typing's: pydantic needs this one on Python 3.11

from memsync import __version__
from memsync.base.defaults import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT
from memsync.errors import MemsyncError
from memsync.mcp import recall as mcp_recall
from memsync.mcp import resources as mcp_resources
from memsync.mcp import tools as mcp_tools
from memsync.mcp.greeting import INSTRUCTIONS, SERVER_NAME, Greeting
from memsync.mcp.stdio import answering_stdio
from memsync.memoryfile.file import TEXT_MAX_CHARS, NewEntry
from memsync.recall.documents import HitJSON
from memsync.recall.dupes import similar_entry
from memsync.tracks.resolve import current_config

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

MCP_SOURCE = "mcp"

Kind = Literal["preference", "lesson", "fact", "source", "avoid"]
MemoryName = Annotated[
    str | None,
    Field(
        description="A tracked memory file by name or store path (e.g. 'ada' or 'memory/ada.jsonl'); "
        "default: the user's default memory file."
    ),
]
StoreName = Annotated[
    str | None,
    Field(
        description="The store that receives the memory (e.g. 'team'): required, and only honoured, when "
        "it syncs with a remote the personal memory does not; ask the user first."
    ),
]


class Remembered(TypedDict):
    """What ``remember`` appended, or proposed (``status``: ``proposed`` for a store set to review, where
    ``id`` is the proposal's and a person approves it with `memsync review`)."""

    id: str
    file: str
    kind: str
    scope: str
    source: str | None
    created_at: str
    supersedes: str | None
    status: str
    # An entry that already says this in other words (semantic extra), and how to supersede it.
    similar_to: str | None
    hint: str | None


class Forgotten(TypedDict):
    """What ``forget`` deleted."""

    id: str
    file: str


def _hit_schema() -> dict[str, Any]:
    """``HitJSON``'s JSON schema, each nullable field's type a list (``["string", "null"]``) in place of
    pydantic's ``anyOf`` of two schemas: the same values are valid, and a client checking each hit
    against it does a third less work (the SDK's client checks every result against the tool's output
    schema: 0.85 against 0.55 ms for ten hits)."""
    schema = TypeAdapter(HitJSON).json_schema()
    for field in schema["properties"].values():
        options = field.get("anyOf", [])
        if options and all(set(option) == {"type"} for option in options):
            field["type"] = [option["type"] for option in field.pop("anyOf")]
    return schema


class Recalled(TypedDict):
    """``recall``'s hits, best first."""

    hits: list[Annotated[HitJSON, WithJsonSchema(_hit_schema())]]


def _refusals(tool: Callable[P, R]) -> Callable[P, R | types.CallToolResult]:
    """Turn a MemsyncError raised by ``tool`` into a tool result with isError and its message."""

    @functools.wraps(tool)
    def call(*args: P.args, **kwargs: P.kwargs) -> R | types.CallToolResult:
        try:
            return tool(*args, **kwargs)
        except MemsyncError as exc:
            log.info("%s refused: %s", tool.__name__, exc)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )

    return call


def remember(
    text: Annotated[
        str,
        Field(
            description=f"One sentence an agent can read as is (at most {TEXT_MAX_CHARS:,} characters).",
            min_length=1,
        ),
    ],
    kind: Annotated[
        Kind | None,
        Field(
            description="preference (how the person wants things), lesson (what worked or failed), fact, "
            "source (a place worth checking first) or avoid; default fact, or the replaced entry's."
        ),
    ] = None,
    scope: Annotated[
        str | None,
        Field(description="global, a domain such as github.com, or project:<name>; default global."),
    ] = None,
    tags: Annotated[list[str] | None, Field(description="Short tags, e.g. ['fetching'].")] = None,
    source: Annotated[
        str,
        Field(description="'user' when the person said it; otherwise where it was learned (URL, session)."),
    ] = MCP_SOURCE,
    confidence: Annotated[
        float | None,
        Field(ge=0, le=1, description="0 to 1; default 1 for source 'user', else 0.8 (inferred)."),
    ] = None,
    expires: Annotated[
        str | None, Field(description="When to ignore it: a UTC time (2026-12-31T00:00:00Z) or 30d, 12h.")
    ] = None,
    supersedes: Annotated[
        str | None, Field(description="Id of an entry this one replaces (from recall).")
    ] = None,
    file: MemoryName = None,
    store: StoreName = None,
) -> Remembered:
    """Save one durable fact, preference, lesson, source or thing to avoid to the synced memory (never a
    secret); returns its id."""
    new = NewEntry(
        text,
        kind=kind,
        scope=scope,
        tags=None if tags is None else tuple(tags),
        source=source,
        confidence=confidence if confidence is not None else 1.0 if source == "user" else 0.8,
        expires=expires,
        supersedes=supersedes,
    )
    done = mcp_tools.remember(current_config(), new, file, store)
    written = done.proposal.id if done.proposal is not None else done.entry.id if done.entry else ""
    similar = similar_entry(done.path, text, written)
    similar_to = None if similar is None else similar[0]
    hint = (
        None
        if similar is None
        else f"similar to {similar[0]} ({similar[1]:.2f}): if both say the same, forget {similar[0]}, "
        f"or pass supersedes={similar[0]!r} next time"
    )
    if done.proposal is not None:
        return Remembered(
            similar_to=similar_to,
            hint=hint,
            id=done.proposal.id,
            file=str(done.path),
            kind=kind or "fact",
            scope=scope or "global",
            source=source,
            created_at=done.proposal.at,
            supersedes=supersedes,
            status="proposed: kept out of memory until a person approves it (memsync review)",
        )
    entry = done.entry
    assert entry is not None  # no proposal: the entry was written
    return Remembered(
        similar_to=similar_to,
        hint=hint,
        id=entry.id,
        file=str(done.path),
        kind=entry.kind,
        scope=entry.scope,
        source=entry.source,
        created_at=entry.created_at,
        supersedes=entry.supersedes,
        status="saved",
    )


def forget(
    id: Annotated[str, Field(description="The entry's id (a recall hit of type entry).", min_length=1)],
    file: MemoryName = None,
) -> Forgotten:
    """Delete a memory entry for good by its id; without a file, the tracked memory file holding it."""
    path = mcp_tools.forget(current_config(), id, file)
    return Forgotten(id=id, file=str(path))


def recall_tool(
    query: Annotated[str, Field(description="A few keywords.", min_length=1)],
    scope: Annotated[
        str | None,
        Field(description="Only entries that apply to this scope (global, a domain, project:<name>)."),
    ] = None,
    kind: Annotated[Kind | None, Field(description="Only items of this kind.")] = None,
    limit: Annotated[
        int, Field(ge=1, le=MAX_RECALL_LIMIT, description="How many hits at most.")
    ] = DEFAULT_RECALL_LIMIT,
) -> Recalled:
    """Search the synced memory (entries, curated notes, index, daily logs) by keywords: best hits first,
    each with its id, file, host and date."""
    return Recalled(hits=mcp_recall.recalled(query, scope, kind, limit))


def prompt(
    scope: Annotated[
        str | None,
        Field(description="The task's scope (global, a domain, project:<name>); memory files only."),
    ] = None,
    max_bytes: Annotated[
        int | None, Field(ge=1, description="Size cap in bytes, cut at whole entries.")
    ] = None,
    target: Annotated[
        str | None,
        Field(
            description="A tracked memory file or role directory by name or store path; default: the "
            "user's default memory file."
        ),
    ] = None,
) -> str:
    """The memory block to put at the top of your context (what `memsync prompt` prints)."""
    return mcp_tools.prompt(current_config(), target, scope, (), max_bytes)


def history(
    target: Annotated[
        str | None,
        Field(
            description="An entry id, a recall hit's id, a tracked path or a store path; default: all memory."
        ),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=1000, description="At most this many commits per store.")] = 20,
) -> str:
    """Who taught what, when, on which machine: the git history of an entry or a memory path, newest first."""
    return mcp_tools.history(target, limit)


def handoff(
    from_agent: Annotated[
        str, Field(description="The giving agent: a tracked role or memory file (name, store path or path).")
    ],
    to_agent: Annotated[
        str,
        Field(description="The receiver: a tracked role or memory file, or a new role in a tracked folder."),
    ],
    dry_run: Annotated[bool, Field(description="Only say what would be handed.")] = False,
    store: StoreName = None,
) -> dict[str, Any]:
    """Pass one agent's live memory to another in the receiver's format (ids kept, nothing twice, secrets
    skipped)."""
    return mcp_tools.handoff(from_agent, to_agent, dry_run, store)


class _Server(MCPServer[Any]):
    """MCPServer whose resources are the memory tracked at the time of each request (tracks and roles
    come and go while a session lasts), served over a stdio transport that answers every request the SDK
    cannot decode (``answering_stdio``)."""

    async def run_stdio_async(self, greeting: Greeting | None = None) -> None:
        """Serve over stdin/stdout until the end of input or SIGTERM (how hosts stop their servers: the
        transport then still gives stdin and stdout back as it found them, flags included);
        ``greeting``: the first lines, already read (``handshake``)."""
        async with anyio.create_task_group() as group:
            group.start_soon(_stop_on_sigterm, group.cancel_scope)
            async with answering_stdio(greeting) as (read_stream, write_stream):
                server = self._lowlevel_server
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()

    async def list_resources(self) -> list[types.Resource]:
        try:
            found = mcp_resources.listings(current_config())
        except MemsyncError as exc:
            raise ResourceError(str(exc)) from None
        return [
            types.Resource(uri=i.uri, name=i.name, description=i.description, mime_type=i.mime_type)
            for i in found
        ]

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uri_template=mcp_resources.URI_TEMPLATE,
                name="memsync memory",
                description="A tracked memory file, role directory, or a file in a role directory, by store "
                "and store path (see resources/list).",
            )
        ]

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents]:
        try:
            text, mime = mcp_resources.read(current_config(), str(uri))
        except mcp_resources.UnknownResource as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except MemsyncError as exc:
            raise ResourceError(str(exc)) from None
        return [ReadResourceContents(content=text, mime_type=mime)]


async def _stop_on_sigterm(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            log.info("SIGTERM: stopping")
            scope.cancel()
            return


def build_server() -> _Server:
    """The memsync MCP server, its tools registered (not started)."""
    server = _Server(name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS)
    tools: list[tuple[str, Callable[..., Any]]] = [
        ("remember", remember),
        ("forget", forget),
        ("recall", recall_tool),
        ("prompt", prompt),
        ("history", history),
        ("handoff", handoff),
        ("status", mcp_tools.status),
    ]
    for name, tool in tools:
        server.add_tool(_refusals(tool), name=name, description=" ".join((tool.__doc__ or "").split()))
    return server


def serve(greeting: Greeting) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin, its first lines ``greeting`` already
    read (``initialize`` and ``tools/list`` among them answered: ``handshake``)."""
    anyio.run(build_server().run_stdio_async, greeting)

"""The MCP server's stdio transport: the SDK's ``stdio_server`` over stdin and stdout read and written
without a thread per line (``wire``), reading stdin through :class:`Answering`, which answers each line
the SDK cannot decode with a JSON-RPC error (DESIGN "Hostile input") and, at the end of input, waits for
the answers still owed.

The SDK (``mcp`` 2.3) turns such a line (invalid JSON, a lone surrogate escape, nesting deeper than its
parser's recursion limit, JSON that is no JSON-RPC message) into an exception on its read stream, and its
dispatcher logs and drops it: a client waits for its own timeout (python-sdk issue #2751; the fix
proposed there, PR #2766, was closed unmerged). A request whose ``id`` is no string nor integer (``1.5``,
``null``, ``true``, an object) passes its adapter as a notification, which nobody answers: answered here
too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol, cast

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from memsync.formats.bounded_json import STRING_LITERAL, has_lone_surrogate
from memsync.mcp import recall as mcp_recall
from memsync.mcp.greeting import Greeting
from memsync.mcp.wire import Lines, claimed_stdout
from memsync.recall.search import held

log = logging.getLogger(__name__)

# One JSON token after optional blanks: a string literal, a punctuation mark, or a bare word (number,
# true, false, null). Read one by one, without recursion, so any depth of nesting is cheap.
_TOKEN = re.compile(rf'\s*({STRING_LITERAL.pattern}|[{{}}\[\]:,]|[^\s{{}}\[\]:,"]+)', re.DOTALL)
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_REASON_CHARS = 200
_CANCELLED = "notifications/cancelled"
_OPENING = frozenset({"initialize", "notifications/initialized"})
# How long the end of input waits for the answers still owed (a recall, a sync tool's run).
DRAIN_S = 30.0


def request_id(line: str) -> str | int | None:
    """The ``id`` member of the JSON object ``line`` starts with, read token by token up to that member
    (so a line broken, or nested too deep, after it still names its request); None when there is no
    such member before the line stops being readable, or it is no integer nor a string UTF-8 can hold.
    Never raises."""
    word = _id_token(line)
    return None if word is None else _id_value(word)


def _id_token(line: str) -> str | None:
    """The first JSON token of the ``id`` member of the object ``line`` starts with (``{`` for an object),
    None when there is no such member before the line stops being readable."""
    depth = 0
    key_next = False
    pos = 0
    while (token := _TOKEN.match(line, pos)) is not None:
        word = token.group(1)
        pos = token.end()
        if depth == 0 and word != "{":
            return None
        if word in "{[":
            depth += 1
            key_next = word == "{" and depth == 1
        elif word in "}]":
            depth -= 1
        elif depth == 1 and word == ",":
            key_next = True
        elif key_next:
            key_next = False
            colon = _TOKEN.match(line, pos)
            if word == '"id"' and colon is not None and colon.group(1) == ":":
                value = _TOKEN.match(line, colon.end())
                return None if value is None else value.group(1)
    return None


def _id_value(word: str) -> str | int | None:
    if _INTEGER.fullmatch(word):
        return int(word)
    if word.startswith('"'):
        try:
            value = json.loads(word)
        except ValueError:
            return None
        # A lone surrogate cannot be written back as UTF-8: such an id is unknown.
        return value if isinstance(value, str) and not has_lone_surrogate(value) else None
    return None


def error_for(line: str, exc: ValidationError) -> types.JSONRPCError:
    """The answer to ``line``, which the SDK's message adapter refused with ``exc``: -32700 Parse error
    when it is no JSON the SDK can read, else -32600 Invalid Request; with the line's ``id`` when it has
    one (:func:`request_id`), else null."""
    unreadable = any(error["type"] == "json_invalid" for error in exc.errors())
    code, what = (
        (types.PARSE_ERROR, "Parse error") if unreadable else (types.INVALID_REQUEST, "Invalid Request")
    )
    reason = exc.errors()[0]["msg"][:_REASON_CHARS]
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id(line), error=types.ErrorData(code=code, message=f"{what}: {reason}")
    )


_BAD_ID = types.JSONRPCError(
    jsonrpc="2.0",
    id=None,
    error=types.ErrorData(
        code=types.INVALID_REQUEST,
        message="Invalid Request: the id must be a string or an integer, or absent",
    ),
)


class _Sender(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


def _indented(value: object) -> str:
    return pydantic_core.to_json(value, indent=2).decode()


def _recalled(message: types.JSONRPCMessage) -> types.JSONRPCResponse | None:
    """The answer to ``message`` when it is a call of ``recall`` this process answers from the kept index
    it holds open (``search.held``): the result the SDK gives (``mcp_recall.call_result``, which
    ``handshake`` also serves before the SDK is loaded), without the SDK's dispatch, validation and
    second serialisation, about a fifth of a recall's time through MCP. None for anything else, left to
    the SDK (arguments it must judge, a recall that failed unexpectedly)."""
    if not isinstance(message, types.JSONRPCRequest) or message.method != "tools/call":
        return None
    if not held():
        return None
    result = mcp_recall.call_result({"method": message.method, "params": message.params}, _indented)
    return None if result is None else types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


class Answering:
    """The lines of stdin the SDK can decode as they are meant, for ``stdio_server``; every other line
    (including a request with a bad id, which the SDK would read as a notification) is answered here
    with :func:`error_for`, and a recall from the held index with :func:`_recalled`, on the server's
    write stream (given by :meth:`answer_on` once the transport exists), and never reaches the SDK. At
    the end of input it waits until every request it passed on is answered (:meth:`answered`), at most
    ``DRAIN_S``: the SDK cancels what still runs when its input ends, and a client that closed stdin
    after its last request is owed every answer."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self._answers: _Sender | None = None
        self._ready = anyio.Event()
        self._pending: set[str | int] = set()
        self._drained: anyio.Event | None = None
        # The SDK serves a tool call once the client said initialize (or initialized): so does _recalled.
        self._initialized = False

    def answer_on(self, write_stream: _Sender) -> None:
        """Send the answers to bad lines on ``write_stream`` (the transport's own, so they are written
        whole between its other messages)."""
        self._answers = write_stream
        self._ready.set()

    def answered(self, request: str | int) -> None:
        """Note that a response or an error naming ``request`` went out."""
        self._pending.discard(request)
        if not self._pending and self._drained is not None:
            self._drained.set()

    def __aiter__(self) -> Answering:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await anext(self._lines)
            except StopAsyncIteration:
                await self._drain()
                raise
            answer: types.JSONRPCResponse | types.JSONRPCError | None
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError as exc:
                answer = error_for(line, exc)
            else:
                # The SDK reads a request whose id is no string nor integer (1.5, null, true, an object)
                # as a notification and answers nothing: JSON-RPC 2.0 makes it an Invalid Request.
                if isinstance(message, types.JSONRPCNotification) and _id_token(line) is not None:
                    answer = _BAD_ID
                elif not self._initialized or (answer := _recalled(message)) is None:
                    self._note(message)
                    return line
            if isinstance(answer, types.JSONRPCError):
                log.info("answered an undecodable request (id %r): %s", answer.id, answer.error.message)
            await self._ready.wait()
            assert self._answers is not None  # set with _ready
            await self._answers.send(SessionMessage(answer))

    def _note(self, message: types.JSONRPCMessage) -> None:
        """Count a request passed on as pending (a cancelled one is answered by nobody), and see the
        session opened."""
        if (
            isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification)
            and message.method in _OPENING
        ):
            self._initialized = True
        if isinstance(message, types.JSONRPCRequest):
            self._pending.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == _CANCELLED:
            request = (message.params or {}).get("requestId")
            if isinstance(request, str | int):
                self.answered(request)

    async def _drain(self) -> None:
        if self._pending:
            self._drained = anyio.Event()
            with anyio.move_on_after(DRAIN_S):
                await self._drained.wait()
            if self._pending:
                log.warning("input ended with requests unanswered after %g s: %s", DRAIN_S, self._pending)


class _Outgoing:
    """The transport's write stream as the SDK's server sees it: each response or error sent is told to
    ``Answering`` (``answered``), and the SDK's answers to the requests ``handshake`` answered already
    (the first naming each id) are dropped: the client must not see two."""

    def __init__(self, stream: Any, answering: Answering, requests: frozenset[str | int]) -> None:
        self._stream = stream
        self._answering = answering
        self._requests = set(requests)

    async def __aenter__(self) -> _Outgoing:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        # The rest of the stream's interface (aclose, ...) is the stream's own.
        return getattr(self._stream, name)

    async def send(self, item: SessionMessage) -> None:
        """Send ``item``, unless it is the SDK's answer to a request already answered."""
        message = item.message
        request = (
            message.id
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None
            else None
        )
        if request is not None and request in self._requests:
            self._requests.discard(request)
        else:
            # Counted once the writer took it (the stream holds nothing): counted before, a handler
            # still waiting here for a busy writer was cancelled at the end of input.
            await self._stream.send(item)
        if request is not None:
            self._answering.answered(request)


async def _after(first: tuple[bytes, ...], rest: AsyncIterator[str]) -> AsyncIterator[str]:
    for raw in first:
        yield raw.decode("utf-8", errors="replace")
    async for line in rest:
        yield line


@asynccontextmanager
async def answering_stdio(greeting: Greeting | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport (read and write streams, as ``stdio_server`` yields them) over this
    process's stdin and stdout, every undecodable request answered (:class:`Answering`). ``greeting``:
    the first lines, read already (the SDK reads them first), and the ids of the requests among them
    answered already (the SDK's answers to them are dropped)."""
    lines = (Lines() if greeting is None else greeting.stdin).aiter()
    if greeting is not None and greeting.lines:
        lines = _after(greeting.lines, lines)
    answering = Answering(lines)
    # stdio_server only iterates its stdin, and only writes and flushes its stdout.
    async with (
        claimed_stdout() as wire,
        stdio_server(
            stdin=cast("anyio.AsyncFile[str]", answering), stdout=cast("anyio.AsyncFile[str]", wire)
        ) as (read_stream, write_stream),
    ):
        answering.answer_on(write_stream)
        answered = frozenset() if greeting is None else greeting.answered
        yield read_stream, _Outgoing(write_stream, answering, answered)

"""`memsync mcp`'s start: the client's ``initialize``, first ``tools/list`` and first recalls answered
before the MCP SDK is imported.

Importing the SDK (its protocol types are pydantic models of every protocol version) takes about twice
as long as the rest of the CLI, and a client waits for ``initialize`` before anything else. So the
server module is imported in a thread while the first line of stdin is read; when it is an
``initialize`` request this module can answer (a JSON-RPC request with a string or integer id, a
protocol version, capabilities and client info), the answer is written at once, with the same fields
the SDK gives: the protocol version negotiated as the SDK does (the one asked for when the SDK speaks
it, else its latest), the server's capabilities, name, version and instructions. The SDK is then handed
that line too (its session state starts from it) and its own answer to it is dropped
(``stdio.answering_stdio``). Any other first line, or none, goes to the SDK alone.

A client asks for the tools next, and some give that answer a short timeout (Claude Code and Gemini
CLI: 5 s, which the SDK's import alone can take on a loaded machine): the notifications after
``initialize`` are kept, and a ``tools/list`` request that follows them is answered from
``tool_list.TOOL_LIST`` (the SDK's own answer, written by ``scripts/mcp_tool_list.py``) and handed to
the SDK the same way. Then, while the SDK is still being imported, a ``tools/call`` of ``recall`` is
answered here too (``recall.call_result``: the same recall, the SDK's answer; the SDK never sees that
line). What a recall needs is readied from the start, in the thread that then imports the SDK
(``recall.warm``, before the SDK: the two would share one interpreter lock, each slowing the other,
and a client's first recall, often sent at once after ``initialize``, waits for the warm-up only). The
SDK's import then waits for the client's first request after the handshake (at most ``SDK_WAIT_S``), so
that a first recall is not answered beside it either. The first other request, or the SDK being loaded,
ends the handshake.

``tests/mcp/test_handshake.py`` checks these constants and the tool list against the SDK's.
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
from typing import Any

from memsync import __version__
from memsync.formats.bounded_json import has_lone_surrogate
from memsync.mcp import recall as mcp_recall
from memsync.mcp.greeting import INSTRUCTIONS, SERVER_NAME, Greeting
from memsync.mcp.tool_list import TOOL_LIST
from memsync.mcp.wire import Lines

# The SDK's handshake protocol versions (``mcp.server.runner.HANDSHAKE_PROTOCOL_VERSIONS``), oldest first:
# the last is what a client asking for another one gets.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What the SDK's MCPServer declares for memsync's server (tools, resources and prompts, none changing).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
_SERVER_MODULE = "memsync.mcp.server"
# How long the SDK's import, once recall is ready, waits for the client's first request after the
# handshake: a client that asks nothing yet finds the SDK loaded all the same soon after.
SDK_WAIT_S = 1.0
_RECALL_MODULES = ("memsync.recall.search", "memsync.recall.provenance")


def initialize_result(params: Any) -> dict[str, Any] | None:
    """The ``result`` of an ``initialize`` request whose ``params`` are these (parsed JSON), as the SDK
    gives it; None when ``params`` are not what a client sends (the SDK then answers, or refuses)."""
    if not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    client = params.get("clientInfo")
    if (
        not isinstance(version, str)
        or not isinstance(params.get("capabilities"), dict)
        or not isinstance(client, dict)
        or not isinstance(client.get("name"), str)
        or not isinstance(client.get("version"), str)
    ):
        return None
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version if version in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def _message(line: bytes) -> dict[str, Any] | None:
    """``line`` as a JSON-RPC 2.0 message (an object), None when it is not one, or when the SDK would
    refuse the line whole (a byte order mark, a string UTF-8 cannot hold): it is then the SDK's to
    answer. Never raises."""
    if line.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or has_lone_surrogate(message):
        return None
    return message


def _request_id(message: dict[str, Any]) -> str | int | None:
    request = message.get("id")
    # bool is an int to Python, not to JSON-RPC; an id the SDK reads otherwise is left to it.
    return None if isinstance(request, bool) or not isinstance(request, (str, int)) else request


def _reply(request: str | int, result: dict[str, Any]) -> tuple[str | int, bytes]:
    reply = {"jsonrpc": "2.0", "id": request, "result": result}
    return request, json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def answer(line: bytes) -> tuple[str | int, bytes] | None:
    """The id of the ``initialize`` request ``line`` and the line answering it; None when ``line`` is
    anything else (another method, a notification, a bad id, no JSON). Never raises."""
    message = _message(line)
    if message is None or message.get("method") != "initialize":
        return None
    request = _request_id(message)
    result = initialize_result(message.get("params"))
    return None if request is None or result is None else _reply(request, result)


def answer_tools(line: bytes) -> tuple[str | int, bytes] | None:
    """The id of the ``tools/list`` request ``line`` (its first page: no cursor) and the line answering
    it; None when ``line`` is anything else. Never raises."""
    message = _message(line)
    if message is None or message.get("method") != "tools/list":
        return None
    request = _request_id(message)
    params = message.get("params")
    if request is None or not (params is None or (isinstance(params, dict) and "cursor" not in params)):
        return None
    return _reply(request, json.loads(TOOL_LIST))


def _is_notification(line: bytes) -> bool:
    message = _message(line)
    return message is not None and "id" not in message and isinstance(message.get("method"), str)


def answer_call(line: bytes) -> tuple[str | int, bytes] | None:
    """The id of the ``tools/call`` request ``line`` and the line answering it, when it calls ``recall``
    with plainly valid arguments (``recall.call_result``: the SDK's answer); None when ``line`` is
    anything else. Never raises."""
    message = _message(line)
    request = None if message is None else _request_id(message)
    if message is None or request is None:
        return None
    result = mcp_recall.call_result(message)
    return None if result is None else _reply(request, result)


def serve() -> None:
    """Serve MCP over stdin/stdout until the client closes stdin: ``initialize``, the first
    ``tools/list`` and the recalls before the SDK is loaded answered here while the SDK is imported
    (module doc), everything after by the SDK's server."""
    asked = threading.Event()  # the client's first request after the handshake is answered
    # A daemon thread: a failed import is raised again, with its traceback, by the import below.
    loading = threading.Thread(target=_load, args=(asked,), name="mcp-import", daemon=True)
    loading.start()
    stdin = Lines()
    lines = [stdin.readline()]
    answered: list[str | int] = []
    reply = answer(lines[0])
    if reply is not None:
        _send(reply, answered)
        # Blocking on the client is safe here: memsync's server sends nothing unasked.
        while (line := stdin.readline()) and _is_notification(line):
            lines.append(line)
        tools = answer_tools(line)
        if tools is not None:
            lines.append(line)
            _send(tools, answered)
            line = stdin.readline() if loading.is_alive() else b""
        # Recalls before the SDK is loaded are answered here, and never reach it.
        while line and (recalled := answer_call(line)) is not None:
            _write(recalled[1])
            asked.set()
            line = stdin.readline() if loading.is_alive() else b""
        lines.append(line)
    asked.set()
    from memsync.mcp.server import serve as serve_sdk

    serve_sdk(Greeting(tuple(line for line in lines if line), frozenset(answered), stdin))


def _load(asked: threading.Event) -> None:
    """Import what a recall needs and ready it (``recall.warm``), then, once ``asked`` is set (the
    client's first request after the handshake answered) or ``SDK_WAIT_S`` passed, the SDK's server:
    recalls are answered here until the SDK is loaded, so a client's first one (often at once after
    ``initialize``) waits for the warm-up alone. The model's load holds the interpreter for a while: it
    comes last in the warm-up, once the imports before it let ``initialize`` and ``tools/list`` be
    answered."""
    for module in _RECALL_MODULES:
        importlib.import_module(module)
    mcp_recall.warm()
    asked.wait(SDK_WAIT_S)
    importlib.import_module(_SERVER_MODULE)


def _write(line: bytes) -> None:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def _send(reply: tuple[str | int, bytes], answered: list[str | int]) -> None:
    _write(reply[1])
    answered.append(reply[0])

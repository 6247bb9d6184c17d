"""A stand-in for a model provider's API on 127.0.0.1, for sessions of real agent CLIs.

The test scripts the agent's turns (text, or tool calls the host then really executes) and reads every
request the host sent: its system prompt, the context its hooks added, the tool results. The script and
the record (``ModelAPI``) know no wire format; a ``Wire`` speaks one: it answers a request with the turn
in that format, and finds in a request the tool results the host sent back. ``Anthropic`` here is the
Messages API's streaming format (server-sent events), which Claude Code speaks when ``ANTHROPIC_BASE_URL``
points here; other formats live beside it (``openai_responses_api``, ``gemini_api``) and plug in the same
way.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted agent makes: the host runs the tool and sends its result back."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Until:
    """A turn played to the agent loop's requests again and again until ``ready`` holds for one, which
    gets the next turn instead: the agent waits (``turn``, a harmless call) for something the host does
    in the background, such as offering an MCP server's tools once the server has started. After
    ``rounds`` plays it gives up: the next turn is played, and fails the test with the host's answer."""

    ready: Callable[[dict[str, Any]], bool]
    turn: Sequence[ToolCall]
    rounds: int = 60


Turn = Sequence[ToolCall] | str


@dataclass(frozen=True)
class Answer:
    """What the stand-in sends back for one request: a content type, the body and the HTTP status."""

    kind: str
    body: bytes
    status: int = 200


def json_answer(value: Any, status: int = 200) -> Answer:
    """``value`` as a JSON answer."""
    return Answer("application/json", json.dumps(value).encode(), status)


def sse_answer(events: Sequence[dict[str, Any]], *, named: bool = True) -> Answer:
    """``events`` as server-sent events: each ``data:`` one JSON object, after an ``event:`` line with its
    ``type`` when ``named``."""
    lines = (
        (f"event: {event['type']}\n" if named else "") + f"data: {json.dumps(event)}\n\n" for event in events
    )
    return Answer("text/event-stream", "".join(lines).encode())


class Wire(Protocol):
    """One wire format of a model API."""

    def answer(self, api: ModelAPI, method: str, path: str, request: dict[str, Any]) -> Answer:
        """The answer to one HTTP request (``request``: its JSON body, ``{}`` for none); a request that
        carries a turn of the agent takes it from ``api.reply``."""
        ...

    def tool_results(self, request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        """The tool results the host sent back in ``request``: (the call's id, the result as sent)."""
        ...


def offers(tool: str) -> Callable[[dict[str, Any]], bool]:
    """An ``Until``'s test: the request offers a tool called ``tool``."""
    return lambda request: any(
        isinstance(offered, dict) and offered.get("name") == tool for offered in request.get("tools", [])
    )


@dataclass
class ModelAPI:
    """The stand-in server's script and record, in any wire format. ``turns`` are played, in order, to the
    requests that offer tools (the agent loop), an ``Until`` as long as it waits; other requests (a
    title, a summary) and those after the last turn get a short text.
    ``requests`` holds every request body, ``calls`` every scripted call by the id it was sent with."""

    wire: Wire
    turns: list[Turn | Until]
    requests: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=itertools.count)
    _waited: int = 0  # the plays of the current Until so far

    def reply(self, request: dict[str, Any]) -> Turn:
        """The turn for ``request``; records the request."""
        with self._lock:
            self.requests.append(request)
            if not request.get("tools"):
                return "done"
            while self.turns and isinstance(self.turns[0], Until):
                wait = self.turns[0]
                if not wait.ready(request) and self._waited < wait.rounds:
                    self._waited += 1
                    return wait.turn
                self.turns.pop(0)
                self._waited = 0
            turn = self.turns.pop(0) if self.turns else "done"
            assert not isinstance(turn, Until)
            return turn

    def next_id(self, prefix: str) -> str:
        """A fresh id (``prefix`` then a number) for a message, a response or an item."""
        return f"{prefix}{next(self._ids):04d}"

    def call_id(self, call: ToolCall, prefix: str) -> str:
        """A fresh id for ``call``, remembered so that its result can be found by the tool's name."""
        call_id = self.next_id(prefix)
        with self._lock:
            self.calls[call_id] = call
        return call_id

    def agent_requests(self) -> list[dict[str, Any]]:
        """The requests of the agent loop (those that offered tools), in order."""
        with self._lock:
            return [request for request in self.requests if request.get("tools")]

    def tool_results(self, name: str) -> list[Any]:
        """The first result the host sent back for a scripted call of tool ``name`` (a list of at most
        one, in the wire's own shape)."""
        with self._lock:
            requests = list(self.requests)
            calls = dict(self.calls)
        return [
            result
            for request in requests
            for call_id, result in self.wire.tool_results(request)
            if getattr(calls.get(call_id), "name", None) == name
        ][:1]


@dataclass(frozen=True)
class Anthropic:
    """Anthropic's Messages API (``POST /v1/messages``, streamed as server-sent events)."""

    def answer(self, api: ModelAPI, method: str, path: str, request: dict[str, Any]) -> Answer:
        if method != "POST":
            return json_answer({}, status=404)
        if "count_tokens" in path:
            return json_answer({"input_tokens": 10})
        turn = api.reply(request)
        model = str(request.get("model", "stand-in"))
        if request.get("stream"):
            return sse_answer(self._events(api, turn, model))
        # A one-shot request (a title, a check): the whole message at once.
        text = turn if isinstance(turn, str) else "done"
        message: dict[str, Any] = {"id": "msg_once", "type": "message", "role": "assistant", "model": model}
        message |= {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        message |= {"stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10}}
        return json_answer(message)

    def tool_results(self, request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        for message in request.get("messages", []):
            if isinstance(message, dict) and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        yield str(block.get("tool_use_id", "")), block

    def _events(self, api: ModelAPI, turn: Turn, model: str) -> list[dict[str, Any]]:
        """``turn`` as the Messages API's stream events."""
        blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if isinstance(turn, str):
            blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": turn}))
        else:
            for call in turn:
                start = {
                    "type": "tool_use",
                    "id": api.call_id(call, "toolu_"),
                    "name": call.name,
                    "input": {},
                }
                blocks.append((start, {"type": "input_json_delta", "partial_json": json.dumps(call.input)}))
        stop = "end_turn" if isinstance(turn, str) else "tool_use"
        usage = {"input_tokens": 10, "output_tokens": 10}
        message: dict[str, Any] = {"id": api.next_id("msg_"), "type": "message", "role": "assistant"}
        message |= {"model": model}
        message |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
        for index, (start, delta) in enumerate(blocks):
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
            events.append({"type": "content_block_stop", "index": index})
        events.append(
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage}
        )
        events.append({"type": "message_stop"})
        return events


@contextmanager
def served(api: ModelAPI) -> Iterator[str]:
    """``api`` served on 127.0.0.1 (a free port) from a daemon thread, answering in ``api.wire``'s format;
    yields its base URL, and shuts the server down at the end."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            self._send(api.wire.answer(api, "POST", self.path, request if isinstance(request, dict) else {}))

        def do_GET(self) -> None:
            self._send(api.wire.answer(api, "GET", self.path, {}))

        def _send(self, answer: Answer) -> None:
            self.send_response(answer.status)
            self.send_header("content-type", answer.kind)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

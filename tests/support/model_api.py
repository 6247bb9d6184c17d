"""A stand-in for a model provider's Messages API on 127.0.0.1, for sessions of real agent CLIs.

The test scripts the agent's turns (text, or tool calls the host then really executes) and reads every
request the host sent: its system prompt, the context its hooks added, the tool results. Anthropic's
streaming format (server-sent events), which Claude Code speaks when ``ANTHROPIC_BASE_URL`` points here.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call the scripted agent makes: the host runs the tool and sends its result back."""

    name: str
    input: dict[str, Any]


Turn = Sequence[ToolCall] | str


@dataclass
class ModelAPI:
    """The stand-in server. ``turns`` are played, in order, to the requests that offer tools (the agent
    loop); other requests (a title, a summary) get a short text. ``requests`` holds every request body."""

    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def reply(self, request: dict[str, Any]) -> tuple[Turn, str]:
        """The turn for ``request`` and its model name; records the request."""
        with self._lock:
            self.requests.append(request)
            if request.get("tools") and self.turns:
                return self.turns.pop(0), str(request.get("model", "stand-in"))
        return "done", str(request.get("model", "stand-in"))

    def agent_requests(self) -> list[dict[str, Any]]:
        """The requests of the agent loop (those that offered tools), in order."""
        with self._lock:
            return [request for request in self.requests if request.get("tools")]

    def tool_results(self, name: str) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks the host sent back for the scripted calls of tool ``name``."""
        with self._lock:
            requests = list(self.requests)
        return [
            block
            for request in requests
            for message in request.get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict)
            and block.get("type") == "tool_result"
            and getattr(self.calls.get(block.get("tool_use_id", "")), "name", None) == name
        ][:1]

    def events(self, turn: Turn, model: str) -> bytes:
        """``turn`` as the Messages API's server-sent events."""
        blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if isinstance(turn, str):
            blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": turn}))
        else:
            for call in turn:
                call_id = f"toolu_{next(self._ids):04d}"
                self.calls[call_id] = call
                start = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
                blocks.append((start, {"type": "input_json_delta", "partial_json": json.dumps(call.input)}))
        stop = "end_turn" if isinstance(turn, str) else "tool_use"
        usage = {"input_tokens": 10, "output_tokens": 10}
        message: dict[str, Any] = {"id": f"msg_{next(self._ids):04d}", "type": "message", "role": "assistant"}
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
        return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def serve(api: ModelAPI) -> tuple[ThreadingHTTPServer, str]:
    """Start ``api`` on 127.0.0.1 (a free port) in a daemon thread; returns the server and its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            if "count_tokens" in self.path:
                self._send("application/json", json.dumps({"input_tokens": 10}).encode())
                return
            turn, model = api.reply(request if isinstance(request, dict) else {})
            if isinstance(request, dict) and request.get("stream"):
                self._send("text/event-stream", api.events(turn, model))
            else:  # a one-shot request (a title, a check): the whole message at once
                text = turn if isinstance(turn, str) else "done"
                message: dict[str, Any] = {"id": "msg_once", "type": "message", "role": "assistant"}
                message |= {"model": model}
                message |= {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
                message |= {"stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10}}
                self._send("application/json", json.dumps(message).encode())

        def do_GET(self) -> None:
            self._send("application/json", b"{}", status=404)

        def _send(self, kind: str, data: bytes, status: int = 200) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"

"""OpenAI's Chat Completions API as a ``model_api.Wire``: what Qwen Code (``--auth-type openai``) and
OpenCode (a provider on ``@ai-sdk/openai-compatible``) speak when their base URL points at the stand-in.

``POST <base>/chat/completions`` answers a turn as ``chat.completion.chunk`` server-sent events when the
request streams (the role, the text or each tool call's id and name then its arguments, as providers
stream them, the finish reason with the usage, then ``data: [DONE]``), else as one ``chat.completion``;
``GET <base>/models`` lists a model. The host sends each tool result back as a ``tool`` message with
the call's ``tool_call_id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.support.model_api import Answer, ModelAPI, Turn, json_answer, sse_answer

USAGE = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}


@dataclass(frozen=True)
class OpenAIChat:
    """The Chat Completions API: ``chat/completions`` (streamed or not) and ``models``."""

    def answer(self, api: ModelAPI, method: str, path: str, request: dict[str, Any]) -> Answer:
        route = path.split("?")[0].rstrip("/")
        if method == "GET" and route.endswith("/models"):
            return json_answer({"object": "list", "data": [{"id": "stand-in", "object": "model"}]})
        if method != "POST" or not route.endswith("/chat/completions"):
            return json_answer({"error": {"message": f"no {method} {path} here"}}, status=404)
        turn = api.reply(request)
        message, finish = self._message(api, turn)
        head = {"id": api.next_id("chatcmpl-"), "created": 0, "model": str(request.get("model", "stand-in"))}
        if not request.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return json_answer(head | {"object": "chat.completion", "choices": [choice], "usage": USAGE})
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if message["content"]:
            deltas.append({"content": message["content"]})
        for index, call in enumerate(message.get("tool_calls", [])):
            named = {"name": call["function"]["name"], "arguments": ""}
            deltas.append(
                {"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": named}]}
            )
            arguments = {"arguments": call["function"]["arguments"]}
            deltas.append({"tool_calls": [{"index": index, "function": arguments}]})
        chunk = head | {"object": "chat.completion.chunk"}
        events = [
            chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas
        ]
        events.append(
            chunk | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": USAGE}
        )
        streamed = sse_answer(events, named=False)
        return Answer(streamed.kind, streamed.body + b"data: [DONE]\n\n")

    def tool_results(self, request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        for message in request.get("messages", []):
            if isinstance(message, dict) and message.get("role") == "tool":
                yield str(message.get("tool_call_id", "")), message

    @staticmethod
    def _message(api: ModelAPI, turn: Turn) -> tuple[dict[str, Any], str]:
        """``turn`` as an assistant message and its finish reason."""
        if isinstance(turn, str):
            return {"role": "assistant", "content": turn}, "stop"
        calls = [
            {
                "id": api.call_id(call, "call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.input)},
            }
            for call in turn
        ]
        return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"


def text(message: dict[str, Any]) -> str:
    """The text of a message the host sent: its ``content`` string, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(part.get("text", "")) for part in parts if isinstance(part, dict))

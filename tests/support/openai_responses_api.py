"""OpenAI's Responses API as a ``model_api.Wire``: what Codex speaks to a model provider whose
``wire_api = "responses"`` and whose ``base_url`` points at the stand-in.

``POST <base>/responses`` streams server-sent events: ``response.created``, one
``response.output_item.done`` per output item (an assistant ``message``, or a ``function_call`` with its
``call_id`` and JSON ``arguments``), then ``response.completed``. The host sends a call's result back as
an input item ``{"type": "function_call_output", "call_id": ..., "output": ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.support.model_api import Answer, ModelAPI, ToolCall, json_answer, sse_answer

USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 10,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 20,
}


@dataclass(frozen=True)
class Responses:
    """The Responses API: ``POST /responses`` (streamed); anything else gets an empty list."""

    def answer(self, api: ModelAPI, method: str, path: str, request: dict[str, Any]) -> Answer:
        if method != "POST":
            return json_answer({"object": "list", "data": [], "models": []})
        if not path.split("?")[0].endswith("/responses"):
            return json_answer({"error": {"message": f"no {path} here"}}, status=404)
        turn = api.reply(request)
        items: list[dict[str, Any]]
        if isinstance(turn, str):
            text = {"type": "output_text", "text": turn, "annotations": []}
            items = [{"type": "message", "role": "assistant", "id": api.next_id("msg_"), "content": [text]}]
        else:
            custom = {tool.get("name") for tool in request.get("tools", []) if tool.get("type") == "custom"}
            items = [self._call(api, call, call.name in custom) for call in turn]
        response_id = api.next_id("resp_")
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}
        ]
        events += [
            {"type": "response.output_item.done", "output_index": index, "item": item}
            for index, item in enumerate(items)
        ]
        completed = {"id": response_id, "status": "completed", "output": items, "usage": USAGE}
        events.append({"type": "response.completed", "response": completed})
        return sse_answer(events)

    def _call(self, api: ModelAPI, call: ToolCall, custom: bool) -> dict[str, Any]:
        """The output item of ``call``. A tool the request offers as ``custom`` (free-form, like Codex's
        ``apply_patch``) gets ``call.input["input"]`` as its raw input; an MCP tool
        (``mcp__<server>__<tool>``) is called in its server's namespace, as Codex offers MCP tools."""
        call_id = api.call_id(call, "call_")
        if custom:
            item_id = api.next_id("ctc_")
            return {"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": call.name} | {
                "input": call.input["input"]
            }
        item: dict[str, Any] = {"type": "function_call", "id": api.next_id("fc_"), "call_id": call_id}
        if call.name.startswith("mcp__") and "__" in call.name[len("mcp__") :]:
            namespace, name = call.name.rsplit("__", 1)
            item |= {"namespace": namespace, "name": name}
        else:
            item |= {"name": call.name}
        return item | {"arguments": json.dumps(call.input)}

    def tool_results(self, request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        for item in request.get("input", []) if isinstance(request.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                yield str(item.get("call_id", "")), item

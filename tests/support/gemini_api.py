"""The Gemini API as a ``model_api.Wire``: what Gemini CLI speaks with an API key when
``GOOGLE_GEMINI_BASE_URL`` points at the stand-in.

``POST <base>/<version>/models/<model>:streamGenerateContent?alt=sse`` streams server-sent events (``data:``
lines only), each a ``GenerateContentResponse``; ``:generateContent`` answers one at once and
``:countTokens`` a count. A turn is one candidate whose parts are a text or ``functionCall``s (with an
``id``); the host sends each result back as a ``functionResponse`` part with that ``id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.support.model_api import Answer, ModelAPI, json_answer, sse_answer

USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}


@dataclass(frozen=True)
class Gemini:
    """The Gemini API's ``generateContent``, ``streamGenerateContent`` and ``countTokens``."""

    def answer(self, api: ModelAPI, method: str, path: str, request: dict[str, Any]) -> Answer:
        action = path.split("?")[0].rsplit(":", 1)[-1]
        if method != "POST" or action not in ("generateContent", "streamGenerateContent", "countTokens"):
            return json_answer({"error": {"code": 404, "message": f"no {method} {path} here"}}, status=404)
        if action == "countTokens":
            return json_answer({"totalTokens": 10})
        turn = api.reply(request)
        parts: list[dict[str, Any]]
        if isinstance(turn, str):
            parts = [{"text": turn}]
        else:
            parts = [
                {"functionCall": {"id": api.call_id(call, "call_"), "name": call.name, "args": call.input}}
                for call in turn
            ]
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        response = {"candidates": [candidate], "usageMetadata": USAGE, "modelVersion": "stand-in"}
        response |= {"responseId": api.next_id("resp_")}
        if action == "streamGenerateContent":
            return sse_answer([response], named=False)
        return json_answer(response)

    def tool_results(self, request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        for content in request.get("contents", []):
            for part in content.get("parts", []) if isinstance(content, dict) else []:
                result = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(result, dict):
                    yield str(result.get("id", "")), result

"""The MCP ``recall`` tool's work, one implementation for the two ways a call is served: by the SDK's
tool (``server.recall_tool``) and, while the SDK is still being imported, by ``handshake`` itself
(``answer_call``), whose answer is the one the SDK gives (its result shaped by the SDK's own rules:
``tests/mcp/test_early_recall.py`` compares the two).

Importing the SDK takes a second of CPU, several on a loaded machine, and a client's first recall would
wait for it. So a ``tools/call`` of ``recall`` that arrives before the SDK is loaded is answered here,
when its arguments are plainly what the tool's schema accepts (anything the SDK would judge otherwise,
or coerce, is left to it), and ``warm`` readies what the first recall needs (the kept index open and
refreshed, with the semantic extra its model and vectors) from the server's start, before the SDK is
imported. Imports nothing of the SDK.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memsync.base.defaults import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT
from memsync.errors import MemsyncError

if TYPE_CHECKING:
    from memsync.recall.documents import HitJSON

log = logging.getLogger(__name__)

TOOL = "recall"
_ARGUMENTS = frozenset({"query", "scope", "kind", "limit"})


def recalled(query: str, scope: str | None, kind: str | None, limit: int) -> list[HitJSON]:
    """The hits of the MCP ``recall`` tool for these arguments, best first, as JSON data, from the
    memory the current config tracks (``search.recall`` in a long-lived process). Raises MemsyncError
    (a bad query, limit or kind, an unreadable file or index, a bad config)."""
    # Imported when first called: the index, its readers and git history.
    from memsync.recall.search import recall
    from memsync.tracks.resolve import current_config

    hits = recall(current_config(), query, scope, (kind,) if kind else (), limit, background=True)
    return [hit.to_json() for hit in hits]


def warm() -> None:
    """Ready what the first recall needs (the modules, the config, the kept index open and current, the
    semantic model and vectors). Never raises: a failure is logged, and the recall that needs what
    failed meets it again."""
    try:
        from memsync.recall.search import warm as warm_index
        from memsync.tracks.resolve import current_config

        warm_index(current_config())
    except Exception:  # a cache warmed in the background: the recall itself reports
        log.debug("recall not warmed", exc_info=True)


def _arguments(message: dict[str, Any]) -> tuple[str, str | None, str | None, int] | None:
    """The arguments of the ``recall`` call ``message``, when they are plainly valid for the tool's
    schema (strict JSON types, no other member); None for anything the SDK must judge."""
    from memsync.formats.bounded_json import has_lone_surrogate
    from memsync.formats.jsonl.records import KINDS

    params = message.get("params")
    if not isinstance(params, dict) or params.get("name") != TOOL or set(params) - {"name", "arguments"}:
        return None
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict) or set(arguments) - _ARGUMENTS:
        return None
    query, scope, kind = arguments.get("query"), arguments.get("scope"), arguments.get("kind")
    limit = arguments.get("limit", DEFAULT_RECALL_LIMIT)
    if not isinstance(query, str) or not query or (scope is not None and not isinstance(scope, str)):
        return None
    if scope is not None and _json_text(scope):
        return None
    if any(has_lone_surrogate(text) for text in (query, scope or "")):
        return None
    if (kind is not None and kind not in KINDS) or isinstance(limit, bool) or not isinstance(limit, int):
        return None
    return (query, scope, kind, limit) if 1 <= limit <= MAX_RECALL_LIMIT else None


def _indented(value: object) -> str:
    """The SDK's text of a result: pydantic_core's JSON, indented by 2. For these values (strings,
    integers, scores rounded to 4 places, booleans, null) the standard library writes the same bytes, and
    imports nothing."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def _json_text(value: str) -> bool:
    """Whether the SDK reads the string ``value`` as the JSON it spells (null, a list, an object, true)
    before it validates an argument not typed plain ``str``, as ``scope`` is: such a call is the SDK's."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return False
    return not isinstance(parsed, str | int | float) or isinstance(parsed, bool)


def call_result(
    message: dict[str, Any], dumps: Callable[[object], str] | None = None
) -> dict[str, Any] | None:
    """The ``result`` the SDK gives ``message``, a JSON-RPC request, when it is a ``tools/call`` of
    ``recall`` with plainly valid arguments: the hits as structured content and as its indented JSON
    text, or a MemsyncError's message with ``isError`` (as ``server._refusals`` makes it). None for any
    other request, or when the recall failed unexpectedly (logged: the SDK then serves it and says why).
    ``dumps``: what writes the text (``_indented`` by default; the transport, once the SDK is loaded,
    gives pydantic_core's, the SDK's own, six times as fast)."""
    if message.get("method") != "tools/call":
        return None
    arguments = _arguments(message)
    if arguments is None:
        return None
    try:
        structured = {"hits": recalled(*arguments)}
        # A string UTF-8 cannot hold raises here and is left to the SDK.
        text = (dumps or _indented)(structured)
        text.encode()
    except MemsyncError as exc:
        log.info("recall_tool refused: %s", exc)
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
    except Exception:
        log.warning("recall answered before the SDK was loaded failed; left to the SDK", exc_info=True)
        return None
    return {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": structured}

"""The MCP SDK's own stdio client, starting `python -m memsync mcp` as a real subprocess.

Typical use (the test is synchronous; ``anyio.run`` drives the session)::

    async def scenario() -> None:
        async with mcp_session(env, errlog) as session:
            result = await call(session, "recall", {"query": "harbor"})

    anyio.run(scenario)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

T = TypeVar("T")


@asynccontextmanager
async def mcp_session(env: Mapping[str, str], errlog: TextIO) -> AsyncIterator[ClientSession]:
    """An initialized client session with a fresh `memsync mcp` server run with ``os.environ`` plus
    ``env``; the server's stderr goes to ``errlog`` (a real file)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memsync", "mcp"], env={**os.environ, **env}
    )
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
    """Call ``tool`` and return its result, whatever ``is_error`` says."""
    return await session.call_tool(tool, arguments or {})


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert block.type == "text", block
    return block.text


async def ok(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call ``tool``, require success, and return its structured content (or its text when it has none)."""
    result = await call(session, tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return text_of(result)


async def eventually(probe: Callable[[], Awaitable[T]], timeout: float, what: str) -> T:
    """Await ``probe`` until it returns something truthy (returned), or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await anyio.sleep(0.2)


def server_log(path: Path) -> str:
    """What a server wrote to its stderr log."""
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def dumps(data: Any) -> str:
    """Compact JSON (for assertion messages)."""
    return json.dumps(data, ensure_ascii=False)[:2000]

"""Write ``memsync/mcp/tool_list.py``: the ``tools/list`` result of memsync's MCP server as the SDK gives
it, which ``memsync.mcp.handshake`` sends before the SDK is imported. Run after changing a tool's
signature or docstring; ``tests/mcp/test_handshake.py`` fails until then."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from memsync.mcp.server import build_server

TARGET = Path(__file__).resolve().parent.parent / "memsync" / "mcp" / "tool_list.py"


async def _tools() -> list[dict[str, object]]:
    tools = await build_server().list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def main() -> None:
    """Write the module."""
    listed = json.dumps({"tools": asyncio.run(_tools())}, ensure_ascii=False, sort_keys=True, indent=1)
    TARGET.write_text(
        "# ruff: noqa: E501\n"
        '"""The ``tools/list`` result of memsync\'s MCP server, as the SDK gives it (written by\n'
        '``scripts/mcp_tool_list.py``; ``tests/mcp/test_handshake.py`` checks it against the SDK\'s)."""\n\n'
        f"TOOL_LIST = r'''{listed}'''\n"
    )


if __name__ == "__main__":
    main()

"""`python -m memsync`: the same entry point as the `memsync` console script.

`python -P -m memsync mcp`, what agent hosts start, goes to the MCP server without importing the CLI:
the server answers ``initialize`` while the SDK loads (``mcp.handshake``), and importing every command
first took over a second of the 5 s some hosts allow (Gemini CLI's and Qwen Code's `mcp list`).
"""

import sys

if sys.argv[1:] == ["mcp"]:
    from memsync.mcp.handshake import serve

    serve()
    raise SystemExit(0)

from memsync.cli import main

raise SystemExit(main())

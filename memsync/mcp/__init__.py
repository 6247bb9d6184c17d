"""The MCP server: its tools, resources and prompt over stdio."""

"""The agent hosts memsync meets: Claude Code, Codex, Cursor (DESIGN "Agent hosts").

Their memory folders, their hook and MCP settings files, and the edits memsync makes to those files.
"""

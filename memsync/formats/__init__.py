"""The two memory formats memsync syncs: agent-memory/0.1 JSON Lines and the markdown memory skill."""

"""Projects: a project's identity, the store path of a live path, Claude Code's project folders."""

"""Where a memory file lives when none is named (agent-memory/0.1's default location)."""

from __future__ import annotations

import getpass
from pathlib import Path


def default_memory_path() -> Path:
    """``~/.agent-memory/<user>.jsonl``: the memory file used when none is given."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "memory"
    return Path.home() / ".agent-memory" / f"{user}.jsonl"

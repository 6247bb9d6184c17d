"""What the MCP server says of itself and what it was greeted with: its name and instructions (the same
whether ``handshake`` answers ``initialize`` before the SDK is imported or the SDK's server does) and the
client's first lines. Imports nothing of the SDK."""

from __future__ import annotations

from dataclasses import dataclass

from memsync.mcp.wire import Lines

INSTRUCTIONS = (
    "memsync keeps this user's agent memory in sync between machines, people and agents through git. "
    "Call recall before relying on what you remember; call remember for something worth keeping across "
    "sessions (one sentence; source 'user' when the person said it); never store a secret."
)
SERVER_NAME = "memsync"


@dataclass(frozen=True)
class Greeting:
    """The client's first lines (``lines``, as read, before the SDK was loaded), the ids of the
    requests among them that were answered already (``answered``: the SDK's answers to them are
    dropped), and stdin read up to the end of the last of them (``stdin``)."""

    lines: tuple[bytes, ...]
    answered: frozenset[str | int]
    stdin: Lines

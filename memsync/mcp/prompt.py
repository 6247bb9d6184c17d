"""The memory block an agent puts at the top of its context (`memsync prompt`, the MCP ``prompt`` tool).

A memory file gives its view's prompt block (``jsonl.render_prompt``: by kind, scope-filtered, user
entries first); a role directory gives its snapshot text (``role_prompt``). Spec: seeds/000
"Putting it in context", seeds/002 "Snapshot.md".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memsync.base.defaults import DEFAULT_PROMPT_BYTES, DEFAULT_SNAPSHOT_BYTES
from memsync.errors import MemsyncError
from memsync.formats.markdown.roledir import role_prompt
from memsync.memoryfile.file import MemoryFile


def prompt_text(
    target: Path, scope: str | None = None, kinds: Sequence[str] = (), max_bytes: int | None = None
) -> str:
    """The prompt block of the memory file or role directory ``target``, at most ``max_bytes`` UTF-8
    bytes (default: 4,000 for a memory file, 32,000 for a role directory), cut at whole entries or lines.

    Raises MemsyncError when ``scope`` or ``kinds`` is given for a role directory (its items have
    neither), for an unknown kind, a cap below the role snapshot's minimum, or an unreadable target."""
    if target.is_dir():
        if scope is not None or kinds:
            raise MemsyncError(
                f"prompt {target}: --scope and --kind apply to memory files, not role directories. Drop them"
            )
        return role_prompt(target, DEFAULT_SNAPSHOT_BYTES if max_bytes is None else max_bytes)
    return MemoryFile(target).to_prompt(
        scope, kinds or None, DEFAULT_PROMPT_BYTES if max_bytes is None else max_bytes
    )

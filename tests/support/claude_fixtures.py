"""Claude Code's files as Claude writes them, for tests: project memory folders with their transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from memsync.hosts.claude_code import sanitize
from tests.support.helpers import git


def checkout(path: Path, url: str | None = None) -> Path:
    """A real git repository at ``path`` (created), with ``origin`` set to ``url`` when given."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    if url:
        git(path, "remote", "add", "origin", url)
    return path


def claude_folder(
    home: Path, project: Path, *, transcript: bool = True, memory: bool = True, index: str | None = None
) -> Path:
    """Claude Code's folder for ``project`` under ``home/.claude/projects``: a transcript whose lines
    carry the session's cwd (the first line, a summary, does not), and a memory folder with ``index``
    as its ``MEMORY.md`` (a one-line index by default). Returns the project folder."""
    folder = home / ".claude" / "projects" / sanitize(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    if transcript:
        lines = [
            {"type": "summary", "summary": "Fixing the cart", "leafUuid": "1"},
            {"type": "user", "cwd": str(project), "sessionId": "s1", "message": {"content": "hi"}},
        ]
        (folder / "0b1c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if memory:
        (folder / "memory").mkdir(exist_ok=True)
        text = "- [Cart](cart.md) — the cart rounds totals\n" if index is None else index
        (folder / "memory" / "MEMORY.md").write_text(text)
    return folder

"""A store's head and the commits this clone made, read from its files without starting git (refs with
``memsync.base.refs``): for the session-start hook and the cycle, called often, where a git process
would cost more than the answer."""

from __future__ import annotations

from pathlib import Path

from memsync.base.refs import read_ref


def head(git_dir: Path) -> str | None:
    """The commit ``HEAD`` of the repository at ``git_dir`` points to (through its branch), None for an
    unborn branch or an unreadable repository."""
    try:
        text = (git_dir / "HEAD").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("ref:"):
        return read_ref(git_dir, text[4:].strip())
    return text or None


def written_here(git_dir: Path) -> frozenset[str]:
    """The commits this clone at ``git_dir`` made itself, read from HEAD's reflog without running git:
    those of ``commit`` (merges included) and of a rebase's picks (a replay of this machine's commits).
    A fetched commit is never among them, whatever its ``Memsync-Host`` trailer says: the reflog is this
    machine's own record. Empty when there is no reflog (expired by a purge, unreadable)."""
    try:
        text = (git_dir / "logs" / "HEAD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    made: set[str] = set()
    for line in text.splitlines():
        fields, _, message = line.partition("\t")
        new = fields.split(" ", 2)[1:2]
        if new and (message.startswith("commit") or _picked(message)):
            made.add(new[0])
    return frozenset(made)


def _picked(message: str) -> bool:
    """A rebase step that wrote a commit (not its start on the other side's head, nor its finish)."""
    action = message.partition(":")[0]
    return action.startswith("rebase") and not action.endswith(("(start)", "(finish)", "(abort)"))

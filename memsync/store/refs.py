"""Reading a git repository's refs from its files, without starting git: for the daemon's check of a
peer's push on every refs event, and for the session-start hook's store heads (both called often, where
a git process would cost more than the answer)."""

from __future__ import annotations

from pathlib import Path


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The sha ``ref`` (e.g. ``refs/heads/main``) points to in the repository at ``git_dir``, read from
    its loose ref file or ``packed-refs`` without running git; None when absent or unreadable.

    Cheap enough to run on every refs event (to tell a peer's push from the daemon's own).
    """
    try:
        text = (git_dir / ref).read_text().strip()
        if text and not text.startswith("ref:"):
            return text
    except (OSError, UnicodeDecodeError):
        pass
    try:
        packed = (git_dir / "packed-refs").read_text()
    except (OSError, UnicodeDecodeError):
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


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

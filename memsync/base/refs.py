"""Reading a git repository's refs from its files, without starting git: for what is asked often, where
a git process would cost more than the answer (the daemon's check of a peer's push on every refs event,
the session-start hook's store heads, an encrypted remote's ciphertext refs at each fetch)."""

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

"""A store's identity: an id committed with the store, so that a remote holding another repository is
told from one whose history was rewritten (DESIGN "Hostile input": a store has an identity; a remote with
an unrelated history is refused, never merged).

A new store commits a random id at ``STORE_ID_FILE`` with its first commit; a `memsync purge` rewrites
history but keeps the file, so a purged remote is still the same store. A store made before ids gets
one derived from its root commit (``derived_id``): every peer of it derives the same bytes, so their
commits of it merge cleanly. Two histories are related when they share a commit (a merge base) or carry
the same id.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

STORE_ID_FILE = ".memsync/store-id"


def new_id() -> bytes:
    """The content of ``STORE_ID_FILE`` for a new store: a random id and a newline."""
    return f"{uuid.uuid4().hex}\n".encode()


def derived_id(roots: Sequence[str]) -> bytes | None:
    """The content of ``STORE_ID_FILE`` for a store made before ids whose history has the root commits
    ``roots`` (shas): derived from the one root, so every peer computes the same; None when there are
    several (two histories joined before ids existed: such a store is related by merge base only)."""
    return f"root-{roots[0]}\n".encode() if len(roots) == 1 else None


def unrelated_message(remote: str, url: str, ours: str | None, theirs: str | None) -> str:
    """One line for a remote whose history has no commit in common with the store's and not its id."""
    ids = f"store id {theirs}, this store's is {ours}" if theirs else "no memsync store id"
    return (
        f"{remote} ({url}) is unrelated to this store: its history shares no commit with it and has {ids}; "
        f"nothing was exchanged with it. Fix the URL, or if you mean to join that history, run `memsync "
        f"resync {remote} --adopt-unrelated`"
    )

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

from memsync.base.fsio import atomic_write
from memsync.base.remote_url import redacted
from memsync.store.commit import commit_all
from memsync.store.repo import StoreGit, log

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
        f"{remote} ({redacted(url)}) is unrelated to this store: its history shares no commit with it "
        f"and has {ids}; "
        f"nothing was exchanged with it. Fix the URL, or if you mean to join that history, run `memsync "
        f"resync {remote} --adopt-unrelated`"
    )


def foreign_message(
    remote: str, url: str, branch: str, *, other_branches: bool = False, store: str | None = None
) -> str:
    """One line refusing ``remote``'s ``branch`` as a store's history, a history that is not a memsync
    store's (a code repository, say): taking it would copy its files into the store and push memory
    onto its branch. ``other_branches``: the remote lacks ``branch`` but has other history. ``store``:
    the existing store it was to be added to (None: a new store)."""
    what = f"has other branches but no {branch}" if other_branches else f"has history on {branch}"
    how = (
        "`--branch memsync`" if store is None else f"`memsync config set stores.{store}.branch memsync` first"
    )
    return (
        f"cannot use {remote} ({redacted(url)}) for a store: it {what} and no memsync store id, so it is "
        "not a "
        f"memsync store; nothing was written or pushed. Use an empty repository for memory, or a branch "
        f"of its own in this one ({how})"
    )


def store_id(g: StoreGit, commit: str) -> str | None:
    """The store id commit ``commit`` carries (``STORE_ID_FILE``), None when it has none."""
    shown = g.run("show", f"{commit}:{STORE_ID_FILE}")
    return (shown.out.strip() or None) if shown.status == 0 else None


def ensure_identity(g: StoreGit) -> None:
    """Give a store made before store ids the id its peers derive alike (``derived_id``), committed;
    nothing when it has one (or its history has several roots). Raises ``MemsyncError``."""
    head = g.rev("HEAD")
    if head is None or store_id(g, head) is not None:
        return
    derived = derived_id(g.check("rev-list", "--max-parents=0", "HEAD").out.split())
    if derived is not None:
        atomic_write(g.worktree / STORE_ID_FILE, derived)
        commit_all(g, "memsync: store id", {STORE_ID_FILE})


def unrelated(g: StoreGit, remote: str, head: str, theirs: str) -> str | None:
    """Why the history ``theirs`` of ``remote`` is not this store's, None when it is: the two share a
    commit, or carry the same store id."""
    if g.run("merge-base", head, theirs).status == 0:
        return None
    ours, their_id = store_id(g, head), store_id(g, theirs)
    if ours is not None and ours == their_id:
        return None
    return unrelated_message(remote, g.cfg.remotes[remote], ours, their_id)


def join(g: StoreGit, remote: str, head: str, theirs: str) -> None:
    """Before the first merge with ``remote``, another memsync store made apart from this one (a second
    machine that used memsync alone, then was given the first one's remote): this store takes its
    store id, so both sides add the same id file and the merge joins the two histories into one store."""
    their_id = store_id(g, theirs)
    if their_id is not None and their_id != store_id(g, head):
        atomic_write(g.worktree / STORE_ID_FILE, f"{their_id}\n".encode())
        commit_all(g, f"memsync: store id of {remote}, whose history this store joins", {STORE_ID_FILE})
    log.info("store %s: joining the history of %s, another memsync store, at first contact", g.name, remote)

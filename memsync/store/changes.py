"""The store paths two commits differ in, from git's diff (DESIGN "One sync cycle": deliver and the
status facts work from what an exchange changed, not from a walk of the store)."""

from __future__ import annotations

from memsync.store.repo import StoreGit

_NO_BLOB = "0" * 40


def changes(g: StoreGit, old: str, new: str) -> dict[str, int | None]:
    """Store path -> its size in bytes at commit ``old`` (None where it did not exist there), for every
    path whose content differs between commits ``old`` and ``new`` (renames as a deletion and an
    addition). Two git commands, whatever the store's size: the diff and one ``cat-file`` for the old
    sizes. Raises ``git.GitError`` (a ``MemsyncError``) when git fails (a commit unknown here)."""
    raw = g.check("diff", "--raw", "-z", "--no-renames", "--no-ext-diff", "--abbrev=40", old, new).out
    fields = raw.split("\0")
    old_blobs: dict[str, str] = {}
    found: dict[str, int | None] = {}
    # Each change is ":<old mode> <new mode> <old blob> <new blob> <status>" then the path.
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if not header.startswith(":"):
            continue
        blob = header.split()[2]
        found[path] = None
        if blob != _NO_BLOB:
            old_blobs[path] = blob
    if old_blobs:
        listed = "".join(f"{blob}\n" for blob in old_blobs.values()).encode("ascii")
        sizes = g.check("cat-file", "--batch-check=%(objectsize)", stdin=listed).out.split()
        for path, size in zip(old_blobs, sizes, strict=True):
            found[path] = int(size)
    return found

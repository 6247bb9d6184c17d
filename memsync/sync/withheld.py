"""``MEMORY.md`` lines that link a held-back file stay on this machine with that file (DESIGN I6): a peer
never gets an index line linking a file it does not receive, and the line syncs once the file does.

The sync state's last synced version of an index is what this machine published (the lines linking
held-back files left out), so such a line reads as a local edit until its file is published.
"""

from __future__ import annotations

import posixpath

from memsync.base.layout import kind_of
from memsync.formats.markdown.index import parse_index, render
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile


def withhold(f: TrackFile, data: bytes | None, out: Collector) -> bytes | None:
    """``data``, a version of the whole file ``f``, without the ``MEMORY.md`` items whose first ``.md``
    link names a file the secret scanner holds back here (held in the sync state) that the store does not
    have; ``data`` itself (same bytes) when ``f`` is no index or no item is withheld. Reads the state and
    the store worktree only."""
    if data is None or kind_of(f.rel) != "index":
        return data
    blocks = parse_index(data.decode("utf-8", "surrogateescape"))
    kept = [block for block in blocks if block.key is None or not _held_back(f, block.key, out)]
    if len(kept) == len(blocks):
        return data
    return render(kept).encode("utf-8", "surrogateescape")


def _held_back(f: TrackFile, target: str, out: Collector) -> bool:
    """Whether the index ``f``'s link ``target`` names a held-back file the store lacks."""
    if not target.endswith(".md") or target.startswith("/"):
        return False
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(f.rel), target))
    if rel.startswith("../") or rel == "..":
        return False
    record = out.state.get(rel)
    if record is None or not record.held:
        return False
    return not (f.store.parent / posixpath.relpath(rel, posixpath.dirname(f.rel))).exists()

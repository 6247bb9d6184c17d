"""The merge driver kinds and the driver of each (DESIGN "Merge drivers"): ``entry``, ``daily``, ``index``,
``jsonl`` and ``appended``. A kind's driver module is imported when that kind is first merged, so git's
per-file entry point (:mod:`.driver`) loads only the driver it runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Callable

    Merge = Callable[[bytes, bytes, bytes], bytes]

KINDS = ("entry", "daily", "index", "jsonl", "appended")
"""Every driver kind, in the order they are registered."""


def merge_function(kind: str) -> Merge:
    """The three-way merge ``(base, ours, theirs) -> bytes`` of driver ``kind`` (one of :data:`KINDS`),
    its module imported here. Raises ``ValueError`` for an unknown kind."""
    if kind == "entry":
        from memsync.merge.entry import merge_entry

        return merge_entry
    if kind == "daily":
        from memsync.merge.daily import merge_daily

        return merge_daily
    if kind == "index":
        from memsync.merge.index import merge_index

        return merge_index
    if kind == "jsonl":
        from memsync.merge.jsonl import merge_jsonl

        return merge_jsonl
    if kind == "appended":  # a host's append-mostly memory file: insertions merge as a daily log's do
        from memsync.merge.daily import merge_daily

        return merge_daily
    raise ValueError(f"unknown driver kind {kind!r} (expected one of {', '.join(KINDS)})")


def merge_for_path(rel_path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """Three-way merge of the store file ``rel_path`` (store-relative POSIX path) with its driver, chosen
    by :func:`memsync.base.layout.kind_of`. Used by the sync engine's whole-file publish. Raises like the
    driver it dispatches to."""
    from memsync.base.layout import kind_of  # imported here: the path layout pulls in fsio's lock libraries

    return merge_function(kind_of(rel_path))(base, ours, theirs)

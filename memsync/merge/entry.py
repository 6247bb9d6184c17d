"""The entry merge driver, for curated entries and every other file (DESIGN "Merge drivers", entry): the
frontmatter merged key by key, the body by git's clean three-way text merge, else both versions kept
under a note saying how to resolve.
"""

from __future__ import annotations

from memsync.formats.markdown.frontmatter import frontmatter_yaml, key_blocks, split_frontmatter
from memsync.merge.keyed import merge_keyed
from memsync.merge.text import decode, one_sided

# The first words of the note the entry driver writes above two kept versions; `memsync status` greps
# files for it. The version separator lines start with BOTH_KEPT_VERSION_PREFIX.
BOTH_KEPT_NOTE_PREFIX = "[memsync] edited on two machines"
BOTH_KEPT_VERSION_PREFIX = "[memsync] version"
# Between a version line's number and the label of who wrote that version.
VERSION_FROM = ", from "
BOTH_KEPT_NOTE = (
    f"{BOTH_KEPT_NOTE_PREFIX} at once; both versions are kept below. To resolve: edit them into one text,"
    f" then delete this note and the two '{BOTH_KEPT_VERSION_PREFIX}' lines."
)


def _merge_frontmatter(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of frontmatter heads (``---`` fences included), key by key like index items."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    blocks = [key_blocks(frontmatter_yaml(head)) for head in (base, ours, theirs)]
    merged = merge_keyed(blocks[0], blocks[1], blocks[2])
    body = "".join(text for _, text in merged)
    if not body and "" in (ours, theirs):
        return ""  # a side dropped the frontmatter and nothing the other side added is left
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{body}---\n"


def _git_merge_file(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """git's own clean three-way text merge (``git merge-file``), accepted only when it is clean in both
    side orders and gives the same bytes both ways; None otherwise."""
    # Imported here, not at the top: tens of ms of the driver's start-up that only this path needs.
    import tempfile
    from pathlib import Path

    from memsync.base import git

    with tempfile.TemporaryDirectory(prefix=".memsync-merge-") as tmp:
        paths = []
        for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(data)
            paths.append(str(path))
        results = []
        for first, second in ((paths[1], paths[2]), (paths[2], paths[1])):
            done = git.run(["merge-file", "-p", "-q", first, paths[0], second], timeout=60)
            if done.status != 0:
                return None
            results.append(done.stdout)
    return results[0] if results[0] == results[1] else None


def version_line(number: int, label: str | None) -> str:
    """The line above kept version ``number`` (1 or 2): ``[memsync] version 1 of 2``, with
    ``, from HOST at TIME`` when the version's ``label`` (:mod:`.labels`) is known. No newline."""
    said = f"{BOTH_KEPT_VERSION_PREFIX} {number} of 2"
    return said if label is None else f"{said}{VERSION_FROM}{label}"


def _both_kept(ours: str, theirs: str, labels: tuple[str | None, str | None]) -> str:
    ended = [text if text.endswith("\n") or not text else text + "\n" for text in (ours, theirs)]
    # Ordered by content, each label carried along with its version: the same bytes whichever side
    # merges (two texts that differ only by a final newline are ordered by their labels).
    (first, first_label), (second, second_label) = sorted(
        zip(ended, labels, strict=True), key=lambda version: (version[0], version[1] or "")
    )
    return (
        f"{BOTH_KEPT_NOTE}\n\n{version_line(1, first_label)}\n{first}"
        f"{version_line(2, second_label)}\n{second}"
    )


def merge_entry(
    base: bytes, ours: bytes, theirs: bytes, labels: tuple[str | None, str | None] = (None, None)
) -> bytes:
    """Merge two versions of a curated entry or any other store file (bytes in, bytes out).

    A markdown frontmatter (``---`` fenced YAML at the top) is merged key by key like index items; the
    rest goes through git's own clean three-way text merge (``git merge-file``, accepted only when clean
    and identical in both side orders). When that merge is not clean, both versions of the body are kept,
    sorted by bytes, each after its :func:`version_line` (``[memsync] version N of 2``, then who wrote it
    when ``labels``, the ours and theirs sides' :mod:`.labels`, name them), under one note line starting
    with :data:`BOTH_KEPT_NOTE_PREFIX` saying how to resolve. Bytes are kept as they are (line ends, a
    bare CR, invalid UTF-8). Raises ``OSError`` only when ``git`` cannot be run.
    Implements DESIGN "Merge drivers" (entry).
    """
    trivial = one_sided(base, ours, theirs)
    if trivial is not None:
        return trivial
    (base_head, base_body), (ours_head, ours_body), (theirs_head, theirs_body) = (
        split_frontmatter(decode(data)) for data in (base, ours, theirs)
    )
    head = _merge_frontmatter(base_head, ours_head, theirs_head)
    raw_bodies = [body.encode("utf-8", "surrogateescape") for body in (base_body, ours_body, theirs_body)]
    body = one_sided(*raw_bodies)
    if body is None:
        body = _git_merge_file(*raw_bodies)
    if body is None:
        body = _both_kept(ours_body, theirs_body, labels).encode("utf-8", "surrogateescape")
    return head.encode("utf-8", "surrogateescape") + body

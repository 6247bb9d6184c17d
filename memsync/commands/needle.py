"""What a purge removes: the lines holding a text, the memory-file lines of one entry id, or the lines
whose hashes earlier purges recorded (DESIGN I6). Purge record lines themselves never match."""

from __future__ import annotations

from dataclasses import dataclass

from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import parse_record
from memsync.store.rewrite import line_hash

MIN_TEXT_CHARS = 4
# Every purge record line starts with these bytes, and no needle matches such a line: a purged text may
# be a date, a host name or a run of hex digits that a record holds, and a later purge must not remove
# an earlier record (a machine that has not adopted it yet would bring that purge's lines back).
RECORD_PREFIX = b'{"memsync_purge":1,'


@dataclass(frozen=True)
class Needle:
    """What to purge: lines containing ``text``, or memory-file lines whose ``id`` is ``entry_id``; and
    in either case (or alone) the lines whose :func:`line_hash` is in ``line_hashes`` (what the purge
    records of earlier purges list). Purge record lines never match."""

    text: str | None = None
    entry_id: str | None = None
    line_hashes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if (self.text is not None and self.entry_id is not None) or (
            self.text is None and self.entry_id is None and not self.line_hashes
        ):
            raise MemsyncError(
                "cannot purge: give either TEXT or --entry ID (not both, not neither). "
                "See `memsync purge --help`"
            )
        value = self.text if self.text is not None else self.entry_id
        if value is not None and ("\n" in value or len(value.strip()) < MIN_TEXT_CHARS):
            raise MemsyncError(
                f"cannot purge {value!r}: it must be one line of at least {MIN_TEXT_CHARS} "
                "characters, or it would remove far more than meant. Give the exact text"
            )

    def matches(self, line: bytes) -> bool:
        """True when the raw ``line`` (with or without its line end) must go."""
        if line.startswith(RECORD_PREFIX):
            return False
        if self.line_hashes and line_hash(line) in self.line_hashes:
            return True
        if self.text is not None:
            return self.text.encode("utf-8") in line
        if self.entry_id is None or self.entry_id.encode("utf-8") not in line:
            return False  # cheap pre-check: a line naming the id contains it
        obj = parse_record(line.rstrip(b"\r\n"))
        return obj is not None and obj.get("id") == self.entry_id

    def describe(self) -> str:
        """How the needle is shown to the user (a secret's text is never echoed)."""
        if self.entry_id is not None:
            return f"entry {self.entry_id}"
        return "the given text" if self.text is not None else "the lines a purge record lists"

    def drop_lines(self, data: bytes) -> tuple[bytes, list[bytes]]:
        """``data`` without the matching lines, and the dropped lines (with their line ends)."""
        kept: list[bytes] = []
        dropped: list[bytes] = []
        for line in data.splitlines(keepends=True):
            (dropped if self.matches(line) else kept).append(line)
        return b"".join(kept), dropped

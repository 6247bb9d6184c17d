"""Reading a memory file: its header, valid records with their line numbers and bytes, and problems
(malformed lines, bad fields, a missing header, a partial last line), never fatal and never removed from
the file (DESIGN "View semantics (agent-memory/0.1)": lines that are not valid entries are reported).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError
from memsync.formats.bounded_json import decode_object
from memsync.formats.jsonl.canonical import is_header
from memsync.formats.jsonl.records import FORMAT, Entry, Header, Record
from memsync.formats.jsonl.validate import check_timestamp, record_from_obj
from memsync.formats.jsonl.view import build_view

# Why a memory file cannot be read when it is missing, and what to do.
NO_MEMORY_FILE = "no such memory file. Create it with `memsync remember`"


@dataclass(frozen=True)
class Problem:
    """A line that is not a valid record (or a file-level issue at line 0). ``field`` is None when the
    whole line is at fault."""

    line: int
    message: str
    field: str | None = None

    def format(self, path: Path | str) -> str:
        """``path:line: message`` (the form ``memsync check`` prints)."""
        where = f"field {self.field!r}: " if self.field else ""
        return f"{path}:{self.line}: {where}{self.message}"


@dataclass(frozen=True)
class NumberedRecord:
    """A valid record, the 1-based line it came from and that line's exact bytes (without line end)."""

    line: int
    raw: bytes
    record: Record


@dataclass(frozen=True)
class ParsedMemory:
    """Everything read from a memory file. ``partial_tail`` is a last line without its newline (still
    being written), which is not part of the view; ``malformed`` holds the raw lines behind problems."""

    header: Header | None
    records: tuple[NumberedRecord, ...]
    problems: tuple[Problem, ...]
    partial_tail: bytes
    malformed: tuple[tuple[int, bytes], ...] = ()

    def view(self, now: datetime) -> list[Entry]:
        """build_view of this file's records at ``now``."""
        return build_view((r.record for r in self.records), now)


def _header_from_obj(obj: Mapping[str, Any], line: int) -> tuple[Header, list[Problem]]:
    problems: list[Problem] = []
    fmt = obj.get("format")
    if fmt != FORMAT:
        problems.append(
            Problem(
                line,
                f"{fmt!r} is not {FORMAT!r}: memsync reads it as {FORMAT} but will not write to it",
                "format",
            )
        )
    errors: list[tuple[str, str]] = []
    check_timestamp(obj, "created_at", False, errors)
    problems.extend(Problem(line, message, key) for key, message in errors)
    created = obj.get("created_at")
    header = Header(
        format=fmt if isinstance(fmt, str) else FORMAT,
        created_at=created if isinstance(created, str) else None,
        extra={k: v for k, v in obj.items() if k not in ("format", "created_at")},
    )
    return header, problems


def parse_memory(data: bytes) -> ParsedMemory:
    """Parse the bytes of a memory file into a ParsedMemory (see :func:`read_memory`). Never raises.

    Line 1 is the header when it is one; blank lines are ignored; a later header of the same format is
    ignored (merges of files created on two machines), one of another format is a problem.
    """
    lines = data.split(b"\n")
    partial_tail = lines.pop()  # b"" when the data ends with a newline
    header: Header | None = None
    records: list[NumberedRecord] = []
    problems: list[Problem] = []
    malformed: list[tuple[int, bytes]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue  # blank lines carry nothing; they stay in the file untouched
        obj, reason = decode_object(raw)
        if obj is None:
            problems.append(Problem(number, reason))
            malformed.append((number, raw))
        elif is_header(obj):
            if header is None and number == 1:
                header, header_problems = _header_from_obj(obj, number)
                problems.extend(header_problems)
            elif obj.get("format") != FORMAT:
                problems.append(Problem(number, f"another header ({obj.get('format')!r}); ignored", "format"))
        else:
            record, errors = record_from_obj(obj)
            if record is None:
                problems.extend(Problem(number, message, key) for key, message in errors)
                malformed.append((number, raw))
            else:
                records.append(NumberedRecord(number, raw, record))
    if header is None and (lines or partial_tail):
        problems.insert(0, Problem(1, f'missing header line {{"format": "{FORMAT}", "created_at": ...}}'))
    if partial_tail:
        problems.append(
            Problem(
                len(lines) + 1,
                "last line has no newline: it is still being written or was "
                "cut short, and is not part of the view",
            )
        )
    return ParsedMemory(header, tuple(records), tuple(problems), partial_tail, tuple(malformed))


def read_bytes(path: Path) -> bytes:
    """The bytes of the memory file ``path``. Raises MemsyncError when it is missing or unreadable."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise MemsyncError(f"read {path}: {NO_MEMORY_FILE}") from None
    except OSError as exc:
        raise MemsyncError(f"read {path}: {exc.strerror or exc}. Check the path and permissions") from None


def read_memory(path: Path) -> ParsedMemory:
    """Read and parse the memory file at ``path``: its header, valid records with their line numbers and
    bytes, problems with line numbers and fields, and a partial last line (excluded from the view).

    Raises MemsyncError when the file cannot be read. DESIGN "View semantics".
    """
    return parse_memory(read_bytes(path))


def check_memory_file(
    path: Path, more: Callable[[Path, ParsedMemory], Iterable[Problem]] | None = None
) -> list[str]:
    """Validate a memory file: one ``path:line: message`` string per problem (malformed line, bad field,
    missing header, partial last line, an id used by entries with different content, and what ``more``
    finds in the parsed file: ``clock.future_problems`` for `check`), sorted by line.

    Raises MemsyncError when the file cannot be read.
    """
    parsed = read_memory(path)
    problems = [*parsed.problems, *(more(path, parsed) if more is not None else ())]
    first_line: dict[str, tuple[int, bytes]] = {}
    for numbered in parsed.records:
        rec = numbered.record
        if not isinstance(rec, Entry):
            continue
        seen = first_line.setdefault(rec.id, (numbered.line, rec.canonical))
        if seen[1] != rec.canonical:
            problems.append(
                Problem(
                    numbered.line,
                    f"duplicate id {rec.id!r} with different content "
                    f"(first at line {seen[0]}); the view keeps one",
                    "id",
                )
            )
    return [p.format(path) for p in sorted(problems, key=lambda p: p.line)]

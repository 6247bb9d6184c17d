"""Reading the files of a role directory (seeds/002): a curated entry with its frontmatter understood and
its bytes kept, a daily log's title and ``- [HH:MM]`` items. Reading never fails on odd content: what
does not follow the skill is a :class:`Problem`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError
from memsync.formats.markdown.fields import parse_frontmatter
from memsync.formats.markdown.frontmatter import split_frontmatter
from memsync.formats.markdown.skill import CURATED_TYPES, MAX_READ_BYTES


@dataclass(frozen=True)
class Problem:
    """One thing in a role directory that does not follow the skill: ``line`` is 1-based, 0 = whole file."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class CuratedEntry:
    """A curated entry ``<slug>.md``: frontmatter understood, ``head`` and ``body`` verbatim."""

    path: Path
    slug: str
    name: str | None
    description: str | None
    type: str | None
    fields: Mapping[str, Any]
    head: str
    body: str
    problems: tuple[Problem, ...]

    @property
    def title(self) -> str:
        """The entry's name, or its slug when the frontmatter has none."""
        return self.name or self.slug


@dataclass(frozen=True)
class LogItem:
    """One ``- [HH:MM] text`` line of a daily log (continuation lines are not part of ``text``)."""

    line: int
    time: str
    text: str


@dataclass(frozen=True)
class DailyLog:
    """``daily/YYYY-MM-DD.md``: its date, title line (any ``# `` first line), timed items and full text."""

    path: Path
    date: str
    title: str | None
    items: tuple[LogItem, ...]
    text: str
    problems: tuple[Problem, ...]


_LOG_ITEM = re.compile(r"^- \[(\d{2}:\d{2})\][ \t]?(.*)$")


def read_entry(path: Path) -> CuratedEntry:
    """Read the curated entry at ``path`` (bytes kept exactly, a bare CR included); never raises on content.

    Problems: not UTF-8, frontmatter not closed or not valid YAML, no name/description/type, a type
    outside user|feedback|project|reference. Raises ``MemsyncError`` when the file cannot be read.
    """
    text, problems = read_text(path)
    head, body = split_frontmatter(text)
    front = parse_frontmatter(head)
    problems += [Problem(path, line, message) for line, message in front.problems]
    if head:
        for key in ("name", "description", "type"):
            if getattr(front, key) is None:
                problems.append(Problem(path, 1, f"frontmatter has no {key}. Add a line '{key}: ...'"))
        if front.type is not None and front.type not in CURATED_TYPES:
            problems.append(Problem(path, 1, f"type {front.type!r} is not one of {', '.join(CURATED_TYPES)}"))
    elif text.startswith("---"):
        problems.append(Problem(path, 1, "frontmatter is not closed: add a line '---' after its last key"))
    return CuratedEntry(
        path, path.stem, front.name, front.description, front.type, front.fields, head, body, tuple(problems)
    )


def read_daily_log(path: Path) -> DailyLog:
    """Read ``daily/YYYY-MM-DD.md``: title line, ``- [HH:MM]`` items, text; never raises on content.

    Free-form logs (sections, tables, multi-line bullets) are fine; problems are only a non-UTF-8 byte, a
    last line without its line end (a writer has not finished it) and a log over ``MAX_READ_BYTES``, of
    which only the lines within that size are read. Raises ``MemsyncError`` if unreadable.
    """
    text, problems = read_text(path, MAX_READ_BYTES)
    lines = text.split("\n")
    title = lines[0][2:].strip() if lines[0].startswith("# ") else None
    items = tuple(
        LogItem(number, match.group(1), match.group(2))
        for number, line in enumerate(lines, start=1)
        if (match := _LOG_ITEM.match(line.rstrip("\r")))
    )
    if text and not text.endswith("\n"):
        problems.append(Problem(path, len(lines), "last line has no line end: finish it with a newline"))
    return DailyLog(path, path.stem, title, items, text, tuple(problems))


def read_bytes(path: Path, limit: int = -1) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them when it is not negative."""
    try:
        with path.open("rb") as stream:
            return stream.read(limit)
    except OSError as exc:
        raise MemsyncError(f"cannot read {path}: {exc.strerror or exc}. Check its permissions") from exc


def read_text(path: Path, limit: int | None = None) -> tuple[str, list[Problem]]:
    """The text of ``path`` decoded as UTF-8 (bad bytes replaced and reported with their line). With
    ``limit`` (bytes), a larger file is read up to its last line end within the limit, and reported."""
    problems: list[Problem] = []
    data = read_bytes(path, -1 if limit is None else limit + 1)
    if limit is not None and len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
        problems.append(Problem(path, 0, f"larger than {limit >> 20} MiB: only its first lines were read"))
    try:
        return data.decode("utf-8"), problems
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.insert(0, Problem(path, line, "not UTF-8 text: re-save it as UTF-8"))
        return data.decode("utf-8", errors="replace"), problems

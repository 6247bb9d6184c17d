"""The markdown memory skill: a role directory's index, curated entries and daily logs, the skill's write
operations (log, write, rename, delete), the launch snapshot and the one-time legacy migration.

Implements seeds/002 (the ``memory`` skill) and DESIGN "Vocabulary" (a role directory is
``.agents/memory/<role>/`` or a Claude-Code-style folder: ``MEMORY.md`` plus topic files, no ``daily/``).
Reading never fails on odd content: what does not follow the skill is reported as a :class:`Problem`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

from memsync.errors import MemsyncError
from memsync.formats import bounded_yaml
from memsync.formats.frontmatter import frontmatter_yaml, split_frontmatter
from memsync.formats.index import IndexBlock, item_key, parse_index, render
from memsync.fsio import append_once, atomic_write, create_exclusive, writer_lock
from memsync.layout import is_ignored

log = logging.getLogger(__name__)

CURATED_TYPES = ("user", "feedback", "project", "reference")
INDEX_NAME = "MEMORY.md"
SNAPSHOT_NAME = "snapshot.md"
DAILY_DIR = "daily"
BRIEFING_NAME = "Project briefing"
DEFAULT_SNAPSHOT_BYTES = 32_000
MIN_SNAPSHOT_BYTES = 512
RECENT_LOGS = 3
# What the readers of an index or a daily log read at most (bytes): the skill keeps both short (an index
# line per entry, terse log lines), and a peer's 1 GB log must not be loaded whole for a snapshot.
MAX_READ_BYTES = 8 << 20

_DAILY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_LOG_ITEM = re.compile(r"^- \[(\d{2}:\d{2})\][ \t]?(.*)$")
# A markdown link to a .md file; the link text may hold backslash-escaped brackets. It holds no bare "[":
# each "[" then starts at most one scan to the next bracket, so a line of brackets costs linear time.
_MD_LINK = re.compile(r"\[((?:\\.|[^\[\]\\])*)\]\(<?([^()\s<>]+?\.md)>?(?:#[^)\s]*)?\)")
_DESCRIPTION_SEP = re.compile(r"^[\s\u2014\u2013:-]+")  # em dash, en dash, colon, hyphen
# A key and the rest of its line (stripped by the caller: a lazy value before trailing blanks backtracks
# quadratically over a long run of blanks).
_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?=[ \t]|$)(.*)$")
_NESTED_KEY = re.compile(r"^[ \t]+([A-Za-z_][\w.-]*)[ \t]*:(?=[ \t]|$)(.*)$")
# First characters that make a YAML scalar something other than plain text.
_NOT_PLAIN = "\"'|>[{&*!%@`#"
_YAML_FAILURES = bounded_yaml.FAILURES


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
class Frontmatter:
    """What a curated entry's frontmatter says.

    ``fields`` is the YAML mapping as loaded (``{}`` when absent or invalid), unknown keys included.
    ``type_source`` names where ``type`` was found: ``type``, ``metadata.type`` or ``metadata.node_type``.
    ``problems`` are ``(line in the file, message)`` pairs.
    """

    fields: Mapping[str, Any]
    name: str | None
    description: str | None
    type: str | None
    type_source: str | None
    problems: tuple[tuple[int, str], ...]


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
class IndexItem:
    """One item of ``MEMORY.md``: a bullet and its continuation lines starting at 1-based ``line``.

    ``target`` is the first ``.md`` link's target, ``name`` its link text, ``description`` the text after
    the link with whitespace collapsed; all ``None`` for an item without a ``.md`` link.
    """

    line: int
    key: str
    text: str
    name: str | None
    target: str | None
    description: str | None


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


@dataclass(frozen=True)
class Snapshot:
    """A rendered snapshot: ``text``, whether the byte cap ``cut`` it, and its ``path`` once written."""

    text: str
    cut: bool
    path: Path | None = None

    @property
    def size(self) -> int:
        """Size of ``text`` in bytes (UTF-8)."""
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class MigrationStep:
    """One planned or applied legacy migration step (seeds/002 "Legacy paths").

    ``action``: ``move`` (a role directory), ``convert`` (a flat ``<role>.md`` into ``project_briefing.md``)
    or ``skip``; ``reason`` says why for a skip.
    """

    action: Literal["move", "convert", "skip"]
    source: Path
    destination: Path | None
    reason: str = ""

    def describe(self, root: Path, applied: bool) -> str:
        """One line for the user, paths relative to ``root``; past tense when ``applied``."""
        src = _relative(self.source, root)
        if self.action == "skip":
            return f"skip {src}: {self.reason}"
        assert self.destination is not None
        dst = _relative(self.destination, root)
        if self.action == "move":
            return f"{'moved' if applied else 'would move'} {src} -> {dst}"
        verb = "converted" if applied else "would convert"
        return f"{verb} {src} -> {dst} (type: project entry and one index line)"


def slugify(name: str) -> str:
    """The skill's slug of an entry ``name``: lowercase, each run of non-alphanumerics -> ``_``, trimmed.

    ASCII letters and digits only, so slugs are safe file names on every OS; accents are dropped first
    ("User Timezone" -> "user_timezone", "Café notes" -> "cafe_notes"). Raises ``MemsyncError`` when
    nothing is left (e.g. a name written only in Arabic script).
    """
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    slug = re.sub(r"[^a-z0-9]+", "_", bare.lower()).strip("_")
    if not slug:
        raise MemsyncError(
            f"cannot name the entry {name!r}: it has no ASCII letter or digit to make a file name from. "
            "Use a name with at least one."
        )
    return slug


def parse_frontmatter(head: str) -> Frontmatter:
    """Understand a frontmatter block ``head`` (from ``split_frontmatter``; ``""`` for none).

    Uses ``yaml.safe_load`` within bounds (:mod:`bounded_yaml`: no aliases, limited depth and size); a
    plain one-line ``name`` or ``description`` is taken verbatim, so a `` #`` in a description is text,
    not a YAML comment, and "2026-08-10" stays text. ``type`` nested under
    ``metadata:`` (Claude Code) is understood; so is ``metadata.node_type`` when it is one of the four
    types. Invalid YAML is reported with its line and the keys are read line by line instead. Never raises.
    """
    if not head:
        return Frontmatter({}, None, None, None, None, ())
    text = frontmatter_yaml(head)
    top, nested = _scan_keys(text)
    problems: list[tuple[int, str]] = []
    loaded: Any
    try:
        loaded = bounded_yaml.load(text) if text.strip() else {}
    except _YAML_FAILURES as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        reason = str(getattr(exc, "problem", None) or exc).splitlines()[0]
        problems.append((line, f"frontmatter is not valid YAML ({reason}); its keys were read line by line"))
        loaded = None
    if loaded is not None and not isinstance(loaded, dict):
        problems.append((2, "frontmatter is not a YAML mapping of keys to values"))
        loaded = None
    fields: dict[str, Any] = loaded if loaded is not None else {}
    # name and description are free text; type is a word, so YAML's reading (comments dropped) wins there.
    values = {
        key: _field_value(key, fields, top, problems, verbatim=key != "type")
        for key in ("name", "description", "type")
    }
    kind, source = values["type"], "type" if values["type"] is not None else None
    if kind is None:
        metadata = fields.get("metadata") if loaded is not None else nested
        if isinstance(metadata, Mapping):
            if metadata.get("type") is not None:
                kind, source = str(metadata["type"]), "metadata.type"
            elif str(metadata.get("node_type")) in CURATED_TYPES:
                kind, source = str(metadata["node_type"]), "metadata.node_type"
    return Frontmatter(fields, values["name"], values["description"], kind, source, tuple(problems))


def read_entry(path: Path) -> CuratedEntry:
    """Read the curated entry at ``path`` (bytes kept exactly, a bare CR included); never raises on content.

    Problems: not UTF-8, frontmatter not closed or not valid YAML, no name/description/type, a type
    outside user|feedback|project|reference. Raises ``MemsyncError`` when the file cannot be read.
    """
    text, problems = _read_text(path)
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
    text, problems = _read_text(path, MAX_READ_BYTES)
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


class RoleDir:
    """A role directory: ``.agents/memory/<role>/`` or a Claude-Code-style memory folder.

    Reads are live (every call reads the files); writes follow the skill's operations and DESIGN I5
    (append with one ``O_APPEND`` write, replace whole files atomically). Raises ``MemsyncError`` when
    ``path`` is not a directory.
    """

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise MemsyncError(
                f"role directory {path}: not a directory. Pass a directory such as .agents/memory/<role> "
                "or ~/.claude/memory"
            )
        if not os.access(path, os.R_OK | os.X_OK):
            raise MemsyncError(f"role directory {path}: not readable. Check its permissions")
        self.path = path

    @property
    def role(self) -> str:
        """The role's name: the directory's name."""
        return self.path.resolve().name

    @property
    def index_path(self) -> Path:
        """``MEMORY.md`` of this role (it may not exist yet)."""
        return self.path / INDEX_NAME

    def index_items(self) -> list[IndexItem]:
        """The items of ``MEMORY.md`` in file order (``[]`` without one); other lines are skipped."""
        if not self.index_path.is_file():
            return []
        text, _ = _read_text(self.index_path, MAX_READ_BYTES)
        items: list[IndexItem] = []
        line = 1
        for block in parse_index(text):
            if block.key is not None:
                items.append(_index_item(line, block.key, block.text))
            line += block.text.count("\n")
        return items

    def entries(self) -> list[CuratedEntry]:
        """The curated entries by file name: top-level ``.md`` files with frontmatter or named by the index.

        Other top-level markdown (a role's own operational notes) is not an entry; ``MEMORY.md``,
        ``snapshot.md``, dotfiles and editor temp files never are.
        """
        indexed = {self._local_target(item) for item in self.index_items()}
        result = []
        for path in self._markdown_files():
            entry = read_entry(path)
            if entry.head or path.name in indexed:
                result.append(entry)
        return result

    def daily_logs(self) -> list[DailyLog]:
        """The daily logs ``daily/YYYY-MM-DD.md``, oldest first."""
        folder = self.path / DAILY_DIR
        if not folder.is_dir():
            return []
        paths = sorted(
            p for p in folder.iterdir() if _DAILY_NAME.match(p.name) and p.is_file() and not p.is_symlink()
        )
        return [read_daily_log(path) for path in paths]

    def log(self, text: str, now: datetime | None = None) -> Path:
        """Append ``- [HH:MM] text`` to today's daily log, creating it with its title; returns its path.

        ``now`` defaults to the current UTC time (the skill's ``date -u``). The line is one ``O_APPEND``
        write under memsync's writer lock; a new log is created whole or not at all, never overwriting one
        another writer made first. A last line without its line end gets one first. Raises ``MemsyncError``
        for empty or multi-line text, ``OSError`` from the file system.
        """
        text = _one_line("log text", text)
        moment = now if now is not None else datetime.now(UTC)
        day = moment.strftime("%Y-%m-%d")
        line = f"- [{moment:%H:%M}] {text}\n"
        path = self.path / DAILY_DIR / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        # A reader can see half of another process's append (the kernel grows the file page by page), so
        # memsync's own writers take turns between reading the last byte and appending.
        with writer_lock(path):
            if not create_exclusive(path, f"# Daily log — {day}\n\n{line}".encode()):
                append_once(path, (line if _ends_a_line(path) else "\n" + line).encode())
        return path

    def write_entry(self, name: str, type: str, description: str, content: str) -> Path:
        """Create or replace the curated entry ``<slugify(name)>.md`` and its index line; returns its path.

        An existing entry whose frontmatter name is exactly ``name`` is replaced in its own file (a Claude
        Code folder names files ``a-b.md``, not ``a_b.md``). The frontmatter is exactly ``name``,
        ``description``, ``type`` (each one line; a value YAML would misread is written double-quoted).
        ``MEMORY.md`` is created with its title if missing; a line already naming the file is replaced,
        others are appended. Raises ``MemsyncError`` for a type
        outside user|feedback|project|reference or an empty or multi-line name or description.
        """
        name = _one_line("name", name)
        description = _one_line("description", description)
        if type not in CURATED_TYPES:
            raise MemsyncError(
                f"cannot write entry {name!r}: type {type!r} is not one of {', '.join(CURATED_TYPES)}"
            )
        path = next(
            (entry.path for entry in self.entries() if entry.name == name), self.path / f"{slugify(name)}.md"
        )
        head = entry_head(name, description, type)
        body = content.strip("\n")
        atomic_write(path, (head + body + "\n" if body else head).encode("utf-8"))
        new_item = f"- [{_link_text(name)}]({path.name}) — {description}\n"
        self.edit_index(lambda blocks: put_index_item(blocks, new_item, {item_key(new_item)}))
        return path

    def rename(self, entry: str, new_name: str) -> Path:
        """Rename the curated entry ``entry`` (slug, file name or name) to ``new_name``; returns the new path.

        Writes ``<slugify(new_name)>.md`` with the same frontmatter and body except ``name``, removes the old
        file, and rewrites the entry's index item in place with the new link (its description is kept).
        Raises ``MemsyncError`` when the entry does not exist or another entry already has the new slug.
        """
        old = self._find(entry)
        new_name = _one_line("name", new_name)
        slug = slugify(new_name)
        new = self.path / f"{slug}.md"
        if new != old and new.exists():
            raise MemsyncError(
                f"cannot rename {old.name} to {new.name}: {new.name} already exists. Remove that one first"
            )
        current = read_entry(old)
        text = _read_bytes(old).decode("utf-8", errors="surrogateescape")
        head, body = split_frontmatter(text)
        data = (_with_name(head, new_name) + body) if head else text
        atomic_write(new, data.encode("utf-8", errors="surrogateescape"))
        if new != old:
            old.unlink()
        old_key = old.name  # index keys are link targets: formats/index.item_key
        fallback = f"- [{_link_text(new_name)}]({slug}.md) — {current.description or new_name}\n"

        def relink(blocks: list[IndexBlock]) -> list[IndexBlock]:
            for block in blocks:
                if block.key == old_key:
                    return put_index_item(blocks, _relink(block.text, new_name, slug), {old_key})
            return put_index_item(blocks, fallback, {item_key(fallback)})

        self.edit_index(relink)
        return new

    def delete(self, entry: str) -> None:
        """Delete the curated entry ``entry`` (a slug, file name or name) and drop its index item(s).

        Raises ``MemsyncError`` when the entry does not exist.
        """
        path = self._find(entry)
        path.unlink()
        key = path.name
        if self.index_path.is_file():
            self.edit_index(lambda blocks: [block for block in blocks if block.key != key])

    def render_snapshot(self, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> Snapshot:
        """The snapshot text: index, every curated entry body, the 3 most recent daily logs (newest first).

        Deterministic: the same files give the same bytes. Entries the index does not list are listed
        (name, file, description) right after it; entry bodies follow the index's order, then the
        unindexed ones by file name. Over ``max_bytes`` (UTF-8 bytes) the text is cut after the last whole
        line that fits, and a note saying so ends it. Raises ``MemsyncError`` when ``max_bytes`` is below 512.
        """
        if max_bytes < MIN_SNAPSHOT_BYTES:
            raise MemsyncError(
                f"snapshot size cap {max_bytes} bytes is too small: use at least {MIN_SNAPSHOT_BYTES}"
            )
        parts = [
            f"# Memory snapshot — {self.role}\n\n",
            "<!-- Generated by memsync from this role's MEMORY.md, curated entries and latest daily logs. "
            "Do not edit: it is regenerated. -->\n",
        ]
        if self.index_path.is_file():
            parts += ["\n## Index (MEMORY.md)\n\n", _block(_read_text(self.index_path, MAX_READ_BYTES)[0])]
        indexed, unindexed = self._entries_by_index()
        if unindexed:
            # The byte cap may cut entry bodies; this list keeps every entry findable by name.
            parts.append(f"\n## Entries not listed in {INDEX_NAME}\n\n")
            parts += [
                f"- [{_link_text(entry.title)}]({entry.path.name})"
                + (f" — {entry.description}\n" if entry.description else "\n")
                for entry in unindexed
            ]
        entries = indexed + unindexed
        if entries:
            parts.append("\n## Curated entries\n")
        for entry in entries:
            parts.append(f"\n### {entry.title} ({entry.path.name})\n\n")
            about = " · ".join(x for x in (entry.type and f"type: {entry.type}", entry.description) if x)
            if about:
                parts.append(f"{about}\n\n")
            parts.append(_block(entry.body))
        logs = self.daily_logs()[-RECENT_LOGS:][::-1]
        if logs:
            parts.append("\n## Recent daily logs\n")
        for daily in logs:
            parts += [f"\n### {DAILY_DIR}/{daily.path.name}\n\n", _block(daily.text)]
        return _cap("".join(parts), max_bytes)

    def snapshot(self, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> Snapshot:
        """Write :meth:`render_snapshot` to ``snapshot.md`` atomically (untouched when already equal).

        Only local files are read and written; it never syncs. Returns the snapshot with its ``path``.
        Raises ``MemsyncError`` for a cap below 512 bytes, ``OSError`` from the file system.
        """
        result = self.render_snapshot(max_bytes)
        path = self.path / SNAPSHOT_NAME
        data = result.text.encode("utf-8")
        if not (path.is_file() and path.read_bytes() == data):
            atomic_write(path, data)
        return dataclasses.replace(result, path=path)

    def check(self) -> list[Problem]:
        """Every problem in the role directory, ordered by path and line (``[]`` when it follows the skill).

        Index: undecodable bytes, items linking to a missing entry, two items for one entry, no index
        while entries exist. Entries: see :func:`read_entry`; an indexed file without frontmatter. Daily
        logs: file names that are not ``YYYY-MM-DD.md``, see :func:`read_daily_log`. Unindexed entries,
        index descriptions that differ from the entry's, free-form logs and non-markdown files are fine.
        """
        problems: list[Problem] = []
        items = self.index_items()
        if self.index_path.is_file():
            problems += _read_text(self.index_path, MAX_READ_BYTES)[1]
        seen: dict[str, int] = {}
        for item in items:
            local = self._local_target(item)
            if local is None:
                continue
            if local in seen:
                problems.append(
                    Problem(
                        self.index_path,
                        item.line,
                        f"second item for {local} (first on line {seen[local]}): keep one line per entry",
                    )
                )
                continue
            seen[local] = item.line
            if not (self.path / local).is_file():
                problems.append(
                    Problem(
                        self.index_path,
                        item.line,
                        f"links to {local}, which does not exist: fix the link or drop the item",
                    )
                )
        entries = self.entries()
        if entries and not self.index_path.is_file():
            problems.append(
                Problem(
                    self.path,
                    0,
                    f"no {INDEX_NAME}, though {len(entries)} curated entries exist: "
                    "add an index line per entry",
                )
            )
        for entry in entries:
            problems += entry.problems
            if not entry.head:
                message = "indexed but has no frontmatter: add name, description, type"
                problems.append(Problem(entry.path, 1, message))
        folder = self.path / DAILY_DIR
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.is_file() and not is_ignored(path.name) and not _DAILY_NAME.match(path.name):
                    problems.append(Problem(path, 0, "not a daily log name: rename it to YYYY-MM-DD.md"))
        for daily in self.daily_logs():
            problems += daily.problems
        return sorted(problems, key=lambda p: (str(p.path), p.line))

    def _markdown_files(self) -> list[Path]:
        # Symlinks are skipped: an entry's content must come from this directory (DESIGN I8).
        return sorted(
            path
            for path in self.path.iterdir()
            if path.suffix == ".md"
            and path.is_file()
            and not path.is_symlink()
            and path.name not in (INDEX_NAME, SNAPSHOT_NAME)
            and not path.name.startswith(".")
            and not is_ignored(path.name)
        )

    def _local_target(self, item: IndexItem) -> str | None:
        """The file name an index item links to when the link is to a file directly in this directory."""
        if item.target is None or "://" in item.target:
            return None
        target = item.target.removeprefix("./")
        return None if "/" in target else target

    def _entries_by_index(self) -> tuple[list[CuratedEntry], list[CuratedEntry]]:
        """The entries the index links to, in its order, and the others, by file name."""
        entries = {entry.path.name: entry for entry in self.entries()}
        ordered = []
        for item in self.index_items():
            target = self._local_target(item)
            if target in entries:
                ordered.append(entries.pop(target))
        return ordered, list(entries.values())

    def _find(self, entry: str) -> Path:
        """The path of an existing entry named by slug, file name or name (slugified as a last resort)."""
        candidates = [entry if entry.endswith(".md") else f"{entry}.md"]
        if re.search(r"[a-z0-9]", entry.lower()):
            candidates.append(f"{slugify(entry)}.md")
        for name in candidates:
            path = self.path / name
            if "/" not in name and name not in (INDEX_NAME, SNAPSHOT_NAME) and path.is_file():
                return path
        raise MemsyncError(
            f"no curated entry {entry!r} in {self.path}: name it by its slug (the file name without .md)"
        )

    def edit_index(self, edit: Callable[[list[IndexBlock]], list[IndexBlock]]) -> None:
        """Read-modify-write ``MEMORY.md``: ``edit`` maps its item blocks (``formats.index``) to new ones;
        done under memsync's writer lock, replacing the file atomically (written only if it changed).
        Raises ``OSError`` from the file system."""
        with writer_lock(self.index_path):
            if self.index_path.is_file():
                text = _read_bytes(self.index_path).decode("utf-8", errors="surrogateescape")
            else:
                text = f"# Memory index — {self.role}\n\n"
            result = render(edit(parse_index(text)))
            if result != text or not self.index_path.is_file():
                atomic_write(self.index_path, result.encode("utf-8", errors="surrogateescape"))


def role_prompt(path: Path, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> str:
    """The prompt block of the role directory ``path`` for ``memsync prompt``: the snapshot text, not written.

    ``max_bytes`` caps it (UTF-8 bytes, cut at whole lines with a note). Raises ``MemsyncError`` when
    ``path`` is not a directory or the cap is below 512 bytes.
    """
    return RoleDir(path).render_snapshot(max_bytes).text


def check_role_dir(path: Path) -> list[Problem]:
    """The problems of the role directory ``path`` for ``memsync check`` (see :meth:`RoleDir.check`).

    Raises ``MemsyncError`` when ``path`` is not a directory.
    """
    return RoleDir(path).check()


def migrate(root: Path, apply: bool = False) -> list[MigrationStep]:
    """Plan (and with ``apply`` do) the move of legacy role memory under ``root`` into ``.agents/memory/``.

    seeds/002 "Legacy paths": ``.claude/memory/<role>/`` and ``.agents-legacy/memory/<role>/`` move whole to
    ``.agents/memory/<role>/``; a flat ``.claude/memory/<role>.md`` becomes ``<role>/project_briefing.md``
    (type project) with one index line. Nothing is ever overwritten: a step whose destination exists is a
    skip. A ``.claude/memory/`` holding ``MEMORY.md`` is Claude Code's own memory folder and is left alone.
    Returns the steps in order. Raises ``MemsyncError`` when ``root`` is not a directory or a step fails
    (steps before it stay done).
    """
    if not root.is_dir():
        raise MemsyncError(f"migrate {root}: not a directory. Pass a project root or your home directory")
    steps = _plan_migration(root)
    if apply:
        for step in steps:
            _apply_step(step)
    return steps


def _plan_migration(root: Path) -> list[MigrationStep]:
    target = root / ".agents" / "memory"
    steps: list[MigrationStep] = []
    claimed: dict[Path, Path] = {}  # destination role dir -> the legacy dir this run moves there

    def move(source: Path) -> None:
        destination = target / source.name
        if destination.exists() or destination in claimed:
            reason = f"{_relative(destination, root)} already exists"
            steps.append(MigrationStep("skip", source, destination, reason))
        else:
            claimed[destination] = source
            steps.append(MigrationStep("move", source, destination))

    claude = root / ".claude" / "memory"
    if claude.is_dir() and (claude / INDEX_NAME).is_file():
        steps.append(
            MigrationStep(
                "skip",
                claude,
                None,
                "a Claude Code memory folder (it has MEMORY.md), not legacy role files; left alone",
            )
        )
    elif claude.is_dir():
        for source in _subdirs(claude):
            move(source)
        for flat in sorted(p for p in claude.iterdir() if p.is_file() and p.suffix == ".md"):
            destination = target / flat.stem / "project_briefing.md"
            moved_from = claimed.get(destination.parent)
            if destination.exists() or (moved_from is not None and (moved_from / destination.name).exists()):
                reason = f"{_relative(destination, root)} already exists"
                steps.append(MigrationStep("skip", flat, destination, reason))
            else:
                steps.append(MigrationStep("convert", flat, destination))
    legacy = root / ".agents-legacy" / "memory"
    if legacy.is_dir():
        for source in _subdirs(legacy):
            move(source)
    return steps


def _apply_step(step: MigrationStep) -> None:
    destination = step.destination
    if step.action == "skip" or destination is None:
        return
    if destination.exists():
        raise MemsyncError(
            f"migrate: {destination} appeared while migrating; nothing overwritten. Run migrate again"
        )
    try:
        if step.action == "move":
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.rename(step.source, destination)
        else:
            _convert_flat(step.source, destination)
    except OSError as exc:
        raise MemsyncError(
            f"migrate: {step.source} -> {destination} failed: {exc.strerror or exc}. Fix that, run it again"
        ) from exc
    log.debug("migrated %s -> %s", step.source, destination)


def _convert_flat(source: Path, destination: Path) -> None:
    """A flat legacy ``<role>.md`` becomes the role's ``project_briefing.md`` curated entry, then goes."""
    try:
        text = source.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemsyncError(
            f"migrate: {source} is not UTF-8 text. Convert it to UTF-8 and run migrate again"
        ) from exc
    head, body = split_frontmatter(text)
    description = parse_frontmatter(head).description
    if not description:
        first = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
        description = first[:160] or f"Project briefing migrated from {source.name}"
    destination.parent.mkdir(parents=True, exist_ok=True)
    written = RoleDir(destination.parent).write_entry(BRIEFING_NAME, "project", description, body)
    assert written == destination
    source.unlink()


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _read_bytes(path: Path, limit: int = -1) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them when it is not negative."""
    try:
        with path.open("rb") as stream:
            return stream.read(limit)
    except OSError as exc:
        raise MemsyncError(f"cannot read {path}: {exc.strerror or exc}. Check its permissions") from exc


def _read_text(path: Path, limit: int | None = None) -> tuple[str, list[Problem]]:
    """The text of ``path`` decoded as UTF-8 (bad bytes replaced and reported with their line). With
    ``limit`` (bytes), a larger file is read up to its last line end within the limit, and reported."""
    problems: list[Problem] = []
    data = _read_bytes(path, -1 if limit is None else limit + 1)
    if limit is not None and len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
        problems.append(Problem(path, 0, f"larger than {limit >> 20} MiB: only its first lines were read"))
    try:
        return data.decode("utf-8"), problems
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.insert(0, Problem(path, line, "not UTF-8 text: re-save it as UTF-8"))
        return data.decode("utf-8", errors="replace"), problems


def _scan_keys(text: str) -> tuple[dict[str, tuple[str, bool]], dict[str, str]]:
    """Top-level keys -> (raw value, value continues on the next line), and the keys under ``metadata:``."""
    top: dict[str, tuple[str, bool]] = {}
    nested: dict[str, str] = {}
    lines = [line.rstrip("\r") for line in text.split("\n")]
    parent = None
    for number, line in enumerate(lines):
        if match := _TOP_KEY.match(line):
            parent = match.group(1)
            following = lines[number + 1] if number + 1 < len(lines) else ""
            continues = following[:1] in (" ", "\t") and bool(following.strip())
            top.setdefault(parent, (match.group(2).strip(" \t"), continues))
        elif (match := _NESTED_KEY.match(line)) and parent == "metadata":
            nested.setdefault(match.group(1), _unquote(match.group(2).strip(" \t")))
    return top, nested


def _field_value(
    key: str,
    fields: Mapping[str, Any],
    top: Mapping[str, tuple[str, bool]],
    problems: list[tuple[int, str]],
    verbatim: bool,
) -> str | None:
    raw, continues = top.get(key, ("", False))
    # YAML would end a plain value at " #" and turn "yes" or a date into other types; the skill means text.
    if raw and raw[0] not in _NOT_PLAIN and not continues and (verbatim or key not in fields):
        return raw
    if key in fields:
        value = fields[key]
        if value is None:
            return None
        if isinstance(value, str | int | float | date):
            return str(value)
        problems.append((1, f"frontmatter {key} is not text"))
        return None
    return _unquote(raw) or None


def _unquote(raw: str) -> str:
    """A quoted YAML scalar's value when it parses as one string, else ``raw`` unchanged."""
    if raw[:1] in ("'", '"'):
        try:
            value = bounded_yaml.load(raw)
        except _YAML_FAILURES:
            return raw
        if isinstance(value, str):
            return value
    return raw


def entry_head(name: str, description: str, type: str) -> str:
    """The frontmatter of a curated entry as the skill's Write op fixes it: exactly name, description and
    type, each on one line (quoted where YAML needs it), the closing fence and one blank line."""
    return f"---\nname: {yaml_scalar(name)}\ndescription: {yaml_scalar(description)}\ntype: {type}\n---\n\n"


def yaml_scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when it reads back the same, else double-quoted.

    In the quoted form every character YAML would refuse or fold (controls, line separators) is escaped.
    """
    fields: dict[str, Any] = {}
    with contextlib.suppress(*_YAML_FAILURES):
        fields = bounded_yaml.load(f"k: {value}") or {}
    if value.isprintable() and value[:1] not in _NOT_PLAIN and fields.get("k") == value and " #" not in value:
        return value
    escaped = "".join("\\" + c if c in '"\\' else c if c.isprintable() else f"\\U{ord(c):08x}" for c in value)
    return f'"{escaped}"'


def _one_line(what: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise MemsyncError(f"{what} is empty: give some text")
    if "\n" in value or "\r" in value:
        raise MemsyncError(f"{what} spans several lines: the skill keeps it on one line. Join the lines")
    return value


def _link_text(name: str) -> str:
    return name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _index_item(line: int, key: str, text: str) -> IndexItem:
    match = _MD_LINK.search(text)
    if match is None:
        return IndexItem(line, key, text, None, None, None)
    name = re.sub(r"\\(.)", r"\1", match.group(1))
    description = " ".join(_DESCRIPTION_SEP.sub("", text[match.end() :]).split())
    return IndexItem(line, key, text, name, match.group(2), description or None)


def put_index_item(blocks: list[IndexBlock], item: str, keys: set[str]) -> list[IndexBlock]:
    """Replace the first block whose key is in ``keys`` by ``item`` and drop the others; else append it."""
    result: list[IndexBlock] = []
    placed = False
    for block in blocks:
        if block.key is not None and block.key in keys:
            if not placed:
                result.append(IndexBlock(key=item_key(item), text=item))
                placed = True
            continue
        result.append(block)
    if not placed:
        if result and not result[-1].text.endswith("\n"):
            result[-1] = dataclasses.replace(result[-1], text=result[-1].text + "\n")
        result.append(IndexBlock(key=item_key(item), text=item))
    return result


def _relink(item: str, new_name: str, slug: str) -> str:
    """An index item with its first ``.md`` link pointing at ``<slug>.md`` under ``new_name``."""
    match = _MD_LINK.search(item)
    if match is None:
        return item
    link = f"[{_link_text(new_name)}]({slug}.md)"
    return item[: match.start()] + link + item[match.end() :]


def _with_name(head: str, name: str) -> str:
    """A frontmatter ``head`` with its top-level ``name:`` line set to ``name`` (added first when absent)."""
    lines = head.splitlines(keepends=True)
    for number, line in enumerate(lines[1:-1], start=1):
        if (match := _TOP_KEY.match(line.rstrip("\r\n"))) and match.group(1) == "name":
            end = line[len(line.rstrip("\r\n")) :]
            lines[number] = f"name: {yaml_scalar(name)}{end}"
            return "".join(lines)
    return lines[0] + f"name: {yaml_scalar(name)}\n" + "".join(lines[1:])


def _block(text: str) -> str:
    """``text`` without leading and trailing blank lines, ending with one line end (``""`` when empty)."""
    text = text.strip("\n")
    return text + "\n" if text else ""


def _cap(text: str, max_bytes: int) -> Snapshot:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return Snapshot(text, cut=False)

    def note(omitted: int) -> str:
        return (
            f"\n<!-- memsync: snapshot cut at {max_bytes} bytes; the last {omitted} bytes were left out. "
            "Read MEMORY.md and the entry files for the rest. -->\n"
        )

    budget = max_bytes - len(note(len(data)).encode("utf-8"))
    kept: list[str] = []
    size = 0
    # Split on LF only: a bare CR inside a line stays part of that line, byte for byte.
    for line in text.split("\n"):
        cost = len(line.encode("utf-8")) + 1
        if size + cost > budget:
            break
        kept.append(line + "\n")
        size += cost
    return Snapshot("".join(kept) + note(len(data) - size), cut=True)


def _ends_a_line(path: Path) -> bool:
    """True when ``path`` is empty or its last byte is a line end."""
    with path.open("rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return True
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"

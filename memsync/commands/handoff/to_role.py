"""Items handed to a role directory: curated entries written atomically with a ``Source:`` line, memory
file entries as curated files, one line in TO's daily log (DESIGN I5)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from memsync.base.fsio import atomic_write
from memsync.commands.handoff.curated_text import curated_title
from memsync.commands.handoff.mapping import (
    LOGGED_SLUGS,
    NAME_CHARS,
    NAME_WORDS,
    RECEIPT_MARK,
    SLUG_CHARS,
    SOURCE_PREFIX,
    Agent,
    Item,
    Skip,
    derived_id,
    log_id,
    type_for_kind,
)
from memsync.commands.handoff.to_jsonl import Plan, giver
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import Entry
from memsync.formats.markdown.fields import entry_head
from memsync.formats.markdown.index import IndexBlock
from memsync.formats.markdown.index_items import put_index_item
from memsync.formats.markdown.reading import read_daily_log
from memsync.formats.markdown.roledir import RoleDir
from memsync.formats.markdown.skill import slugify
from memsync.memoryfile.clock import refuse_if_ahead

# The daily log a memory-file entry was handed from: source role:<agent>/daily/<day>.md.
_LOG_SOURCE = re.compile(r"^role:[^/]+/(?P<file>daily/\d{4}-\d{2}-\d{2}\.md)$")


def _source_line(from_name: str, item: Item) -> str:
    if item.curated is not None:
        return f"Source: handoff from {from_name} ({item.curated.path.name})"
    entry = item.entry
    if entry is None:
        return f"Source: handoff from {from_name} (daily/{item.log_date}.md, {item.log_time})"
    from_name = giver(item, from_name)
    details = [f"kind {entry.kind}", f"scope {entry.scope}"]
    if entry.source is not None:
        details.append(f"source {entry.source}")
    if entry.confidence is not None:
        details.append(f"confidence {entry.confidence}")  # str(float) reads back exactly
    details.append(f"created {entry.created_at}")
    return f"Source: handoff from {from_name}, entry {entry.id} ({', '.join(details)})"


def _core(data: bytes) -> bytes:
    """A curated file's bytes without the Source lines handoffs appended and without trailing blanks."""
    lines = data.rstrip().split(b"\n")
    while len(lines) > 1 and lines[-1].startswith(SOURCE_PREFIX.encode()):
        lines.pop()
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
    return b"\n".join(lines).rstrip()


def _with_source(data: bytes, line: str) -> bytes:
    """A curated file's bytes with a provenance line appended to its body (frontmatter untouched)."""
    return data.rstrip(b"\n") + b"\n\n" + line.encode("utf-8") + b"\n"


@dataclass(frozen=True)
class _Curated:
    """A curated entry to write into TO: ``(slug, name)`` candidates in order of preference, the index
    line's ``description``, and the file's bytes: FROM's file plus a ``Source:`` line (role -> role;
    ``original`` is FROM's file as is), or the skill's exact frontmatter and ``body`` (from an entry)."""

    item: Item
    candidates: tuple[tuple[str, str], ...]
    description: str
    type: str = ""
    body: str = ""
    data: bytes | None = None
    original: bytes | None = None

    def render(self, name: str) -> bytes:
        """The bytes of the file under the candidate ``name``."""
        if self.data is not None:
            return self.data
        head = entry_head(name, self.description, self.type)
        return (head + self.body.strip("\n") + "\n").encode("utf-8")

    def same_as(self, path: Path, name: str) -> bool:
        """Whether the existing file ``path`` already holds this entry (as handed under ``name``); for a
        copied file, whatever Source lines handoffs appended to either copy do not count."""
        current = path.read_bytes()
        if self.original is not None:
            return _core(current) == _core(self.original)
        return current == self.render(name)


def _short_name(text: str, entry_id: str) -> str:
    """A curated entry name for a JSONL text: its first words (a name slugify can use)."""
    name = " ".join(text.split()[:NAME_WORDS])[:NAME_CHARS].rstrip(".,;:!?—- ")
    try:
        slugify(name)
    except MemsyncError:
        return f"memory {entry_id}"
    return name


def _curated_plan(item: Item, from_name: str) -> _Curated | None:
    """How ``item`` becomes a curated entry of TO; ``None`` for a daily-log item."""
    source = _source_line(from_name, item)
    if item.curated is not None:
        curated = item.curated
        original = curated.path.read_bytes()
        alt = f"{curated.slug}__from_{slugify(from_name)}"
        return _Curated(
            item,
            ((curated.slug, curated.title), (alt, curated.title)),
            curated_title(curated),
            data=_with_source(original, source),
            original=original,
        )
    if item.entry is None:
        return None
    entry = item.entry
    from_name = giver(item, from_name)
    name = _short_name(entry.text, entry.id)
    description = " ".join(entry.text.split())
    body = (entry.text.strip() + "\n\n" if entry.text.strip() != description else "") + source
    names = (name, f"{name} from {from_name}", f"{name} {entry.id}")
    slugs = (slugify(n)[:SLUG_CHARS].rstrip("_") for n in names)
    return _Curated(item, tuple(zip(slugs, names, strict=True)), description, type_for_kind(entry.kind), body)


def _write_curated(role: RoleDir, writes: Sequence[tuple[_Curated, str, str]]) -> list[Path]:
    """Write the planned curated entries (each replaced atomically), then all their index lines at once.

    Adapter: RoleDir.write_entry derives the file from the name and re-renders the frontmatter, so it can
    neither copy an entry byte for byte nor write ``<slug>__from_<from>.md``, and it re-reads every entry
    per call; this reuses markdown's own quoting and index edit (writer lock, item model, atomic replace)
    instead of copying them, with one index rewrite for the whole handoff.
    """
    written, lines = [], []
    for curated, slug, name in writes:
        path = role.path / f"{slug}.md"
        atomic_write(path, curated.render(name))
        written.append(path)
        link = name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        lines.append((f"{slug}.md", f"- [{link}]({slug}.md) — {curated.description}\n"))

    def put_all(blocks: list[IndexBlock]) -> list[IndexBlock]:
        for key, line in lines:
            blocks = put_index_item(blocks, line, {key})
        return blocks

    role.edit_index(put_all)
    return written


def _choose_slug(
    curated: _Curated, folder: Path, taken: set[str]
) -> tuple[str, str] | Literal["present"] | None:
    """The first candidate that is free or already holds this entry (``"present"``); the last candidate
    belongs to this entry alone and is replaced. ``None`` when every candidate is taken in this batch."""
    last = curated.candidates[-1][0]
    for slug, name in curated.candidates:
        if slug in taken:
            continue
        path = folder / f"{slug}.md"
        if path.is_file() and curated.same_as(path, name):
            taken.add(slug)
            return "present"
        if not path.exists() or slug == last:
            taken.add(slug)
            return slug, name
    return None


def _own_entry(entry: Entry, target: Agent, curated_ids: set[str]) -> bool:
    """Whether ``entry`` is one TO itself handed out earlier: its id is derived from TO's name and one of
    TO's curated slugs, or from an item of the daily log its source names."""
    if entry.id in curated_ids:
        return True
    match = _LOG_SOURCE.match(entry.source or "")
    path = target.path / match.group("file") if match else None
    if path is None or not path.is_file():
        return False
    daily = read_daily_log(path)
    return any(entry.id == log_id(target.name, daily.date, note.time, note.text) for note in daily.items)


def to_role_dir(
    target: Agent, items: Sequence[Item], from_name: str, plan: Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Write each item as a curated entry of TO under the first free slug (or find it already there),
    then log one line in TO's daily log saying what was received."""
    taken: set[str] = set()
    writes: list[tuple[_Curated, str, str]] = []
    existing = target.path.glob("*.md") if target.path.is_dir() else ()
    curated_ids = {derived_id(target.name, path.stem) for path in existing}
    for item in items:
        if item.curated is None and item.entry is not None and _own_entry(item.entry, target, curated_ids):
            plan.present.append(item.label)
            continue
        if not item.text.strip():
            plan.skipped.append(Skip(item.label, "empty text", "nothing to describe the entry with"))
            continue
        curated = _curated_plan(item, from_name)
        if curated is None:
            plan.skipped.append(
                Skip(
                    item.label,
                    "daily-log item",
                    "a role directory receives curated entries; its daily log stays its own",
                    listed=False,
                )
            )
            continue
        choice = _choose_slug(curated, target.path, taken)
        if choice is None:
            plan.skipped.append(Skip(item.label, "no free slug in the receiver"))
        elif choice == "present":
            plan.present.append(item.label)
        else:
            plan.handed.append(item.label)
            writes.append((curated, *choice))
    if dry_run:
        return []
    if writes:
        # Its daily-log line is dated by this clock, like an entry (a memory file's appends check it).
        refuse_if_ahead(f"handoff to {target.path}", now.timestamp())
    target.path.mkdir(parents=True, exist_ok=True)
    if not writes:
        return []
    role = RoleDir(target.path)
    written = _write_curated(role, writes)
    slugs = [path.stem for path in written]
    listed = ", ".join(slugs[:LOGGED_SLUGS])
    if len(slugs) > LOGGED_SLUGS:
        listed += f" and {len(slugs) - LOGGED_SLUGS} more"
    noun = "entry" if len(slugs) == 1 else "entries"
    line = f"Received {len(slugs)} {noun} from {from_name} {RECEIPT_MARK}: {listed}"
    written.append(role.log(line, now))
    return written

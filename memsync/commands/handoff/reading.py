"""FROM's live view as handoff items: a memory file's entries (its view: no tombstoned, superseded or
expired entry) or a role directory's curated entries and recent daily-log items."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from memsync.commands.handoff.curated_text import curated_text, curated_title
from memsync.commands.handoff.mapping import (
    HANDOFF_TAG,
    RECEIPT_MARK,
    SOURCE_PREFIX,
    Agent,
    Item,
    kind_for_type,
)
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.validate import record_from_obj
from memsync.formats.markdown.reading import CuratedEntry
from memsync.formats.markdown.roledir import RECENT_LOGS, RoleDir

_DATE_KEYS = ("updated", "modified", "created")
_ENTRY_SOURCE = re.compile(
    r"Source: handoff from (?P<giver>\S+), entry (?P<id>[0-9a-f]{12}) \(kind (?P<kind>\w+), "
    r"scope (?P<scope>.+?)(?:, source (?P<source>.+?))?(?:, confidence (?P<confidence>[0-9.eE+-]+))?, "
    r"created (?P<created>\S+)\)[ \t]*\r?"
)
# _ENTRY_SOURCE backtracks over its optional parts (cubic in the length of a line of ", source ..."):
# it is only tried on lines this short, longer than any Source line a handoff writes.
_SOURCE_LINE_CHARS = 2000


def parse_since(value: str) -> datetime:
    """``--since``: a date (``2026-11-01``, midnight UTC) or an ISO-8601 time (no offset = UTC) -> aware
    datetime. Raises MemsyncError otherwise."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise MemsyncError(
            f"handoff: --since {value!r} is not a date. Give one such as 2026-11-01 or 2026-11-01T09:00:00Z"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _as_datetime(datetime.fromisoformat(value.strip()))
        except ValueError:
            return None
    return None


def _curated_created(entry: CuratedEntry) -> datetime:
    """``updated``, ``modified`` or ``created`` of the frontmatter (top level or under ``metadata:``),
    else the file's mtime."""
    metadata = entry.fields.get("metadata")
    for fields in (entry.fields, metadata if isinstance(metadata, dict) else {}):
        for key in _DATE_KEYS:
            moment = _as_datetime(fields.get(key))
            if moment is not None:
                return moment
    return datetime.fromtimestamp(entry.path.stat().st_mtime, UTC)


def _curated_tags(entry: CuratedEntry) -> tuple[str, ...]:
    tags = entry.fields.get("tags")
    if isinstance(tags, str):
        return tuple(t.strip() for t in tags.split(",") if t.strip())
    if isinstance(tags, list):
        return tuple(str(t) for t in tags)
    return ()


def _entry_items(path: Path, now: datetime) -> list[Item]:
    if not path.exists():
        return []
    return [
        Item(
            "entry",
            f"entry {e.id}",
            e.kind,
            e.text,
            e.created,
            tags=e.tags,
            scope=e.scope,
            confidence=e.confidence,
            entry=e,
        )
        for e in read_memory(path).view(now)
    ]


def _handed_entry(curated: CuratedEntry, text: str) -> Entry | None:
    """The memory-file entry a curated entry was handed from (its Source line), with its current text;
    ``None`` for an entry written in the role directory itself or a Source line that no longer parses."""
    matches = [
        match
        for line in curated.body.split("\n")
        if line.startswith(SOURCE_PREFIX) and len(line) <= _SOURCE_LINE_CHARS
        if (match := _ENTRY_SOURCE.fullmatch(line))
    ]
    if not matches:
        return None
    fields = matches[-1].groupdict()  # the last Source line is the one the latest handoff wrote
    obj = {
        "id": fields["id"],
        "kind": fields["kind"],
        "text": text,
        "scope": fields["scope"],
        "tags": [HANDOFF_TAG + fields["giver"]],
        "source": fields["source"],
        "confidence": None if fields["confidence"] is None else float(fields["confidence"]),
        "created_at": fields["created"],
    }
    record, errors = record_from_obj(obj)
    return record if isinstance(record, Entry) and not errors else None


def _role_items(path: Path) -> list[Item]:
    if not path.exists():
        return []
    role = RoleDir(path)
    items = []
    for curated in role.entries():
        title = curated_title(curated)
        entry = _handed_entry(curated, title)
        if entry is not None:
            items.append(
                Item(
                    "curated",
                    curated.path.name,
                    entry.kind,
                    title,
                    entry.created,
                    tags=entry.tags,
                    scope=entry.scope,
                    confidence=entry.confidence,
                    entry=entry,
                    curated=curated,
                )
            )
            continue
        items.append(
            Item(
                "curated",
                curated.path.name,
                kind_for_type(curated.type, title),
                curated_text(curated),
                _curated_created(curated),
                tags=_curated_tags(curated),
                curated=curated,
            )
        )
    for daily in role.daily_logs()[-RECENT_LOGS:]:
        for note in daily.items:
            if RECEIPT_MARK in note.text:
                continue
            moment = datetime.fromisoformat(f"{daily.date}T{note.time}:00+00:00")
            items.append(
                Item(
                    "log",
                    f"daily/{daily.path.name} [{note.time}]",
                    "lesson",
                    note.text,
                    moment,
                    log_date=daily.date,
                    log_time=note.time,
                )
            )
    return items


def read_items(agent: Agent, now: datetime) -> list[Item]:
    """FROM's live view as items: a memory file's view at ``now``; a role directory's curated entries and
    the ``- [HH:MM]`` items of its 3 most recent daily logs, except the receipts handoff itself logged.
    A missing path has none."""
    return _entry_items(agent.path, now) if agent.format == "jsonl" else _role_items(agent.path)

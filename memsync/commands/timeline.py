"""An entry of a memory file and its timeline: created, superseded, forgotten, each by which host and
agent, on which date, through which handoff, read from the store's history and the JSON lines the
commits added (the UI's Entry page; `memsync log ID` prints the same events)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memsync.base.paths import StoreLayout
from memsync.formats.jsonl.canonical import parse_record
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.view import winner_key
from memsync.memoryfile.file import MemoryFile
from memsync.store.facade import Store
from memsync.tracks.resolve import load_stores
from memsync.tracks.tracked import Tracked, tracked_memory

What = Literal["created", "superseded", "forgotten"]
_HANDOFF_TAG = "handoff:"


@dataclass(frozen=True)
class Change:
    """What one commit did to an entry: ``what``, and the JSON line that did it (``record``: the entry
    itself, its tombstone, or the entry that supersedes it)."""

    what: What
    record: dict[str, Any]

    @property
    def handoff(self) -> str:
        """The agent a handoff brought the line from (its ``handoff:`` tag), else ``""``."""
        tags = self.record.get("tags")
        for tag in tags if isinstance(tags, list) else ():
            if isinstance(tag, str) and tag.startswith(_HANDOFF_TAG):
                return tag.removeprefix(_HANDOFF_TAG)
        return ""


@dataclass(frozen=True)
class Event:
    """A change on the timeline, with the commit that brought it: ``host`` (its ``Memsync-Host``, ``?``
    without one), ``when``, ``sha``; ``None`` for those three while it is not committed yet."""

    change: Change
    host: str | None = None
    when: datetime | None = None
    sha: str | None = None


@dataclass(frozen=True)
class Timeline:
    """Entry ``entry`` (its winning version) of live memory file ``file`` in ``store``, whether it is
    ``forgotten``, the ids it ``supersedes`` and those that supersede it (``superseded_by``), and its
    ``events``, oldest first."""

    entry: Entry
    file: Path
    store: str | None
    forgotten: bool
    superseded_by: tuple[str, ...]
    events: tuple[Event, ...]


def changes_in(store: Store, sha: str, entry_id: str) -> list[Change]:
    """What commit ``sha`` did to entry ``entry_id``, read from the JSON lines it added (peer content:
    lines that are no JSON object are skipped)."""
    found: list[Change] = []
    for raw in store.added_lines(sha):
        record = parse_record(raw)
        if record is None:
            continue
        if record.get("id") == entry_id:
            found.append(Change("forgotten" if record.get("deleted") is True else "created", record))
        elif record.get("supersedes") == entry_id:
            found.append(Change("superseded", record))
    return found


def _holder(config_file: Path | None, entry_id: str) -> tuple[Tracked, MemoryFile, list[Entry]] | None:
    for item in tracked_memory(load_stores(config_file)):
        if item.format != "jsonl" or not item.live.is_file():
            continue
        memory = MemoryFile(item.live)
        versions = [
            line.record
            for line in read_memory(memory.path).records
            if isinstance(line.record, Entry) and line.record.id == entry_id
        ]
        if versions:
            return item, memory, versions
    return None


def timeline(config_file: Path | None, entry_id: str) -> Timeline | None:
    """The timeline of entry ``entry_id`` in the memory files config file ``config_file`` tracks, None
    when none holds it. Raises ``MemsyncError`` (no store, an unreadable file, git failing)."""
    found = _holder(config_file, entry_id)
    if found is None:
        return None
    item, memory, versions = found
    config = load_stores(config_file)
    events: list[Event] = []
    if item.store is not None and StoreLayout(config.stores[item.store].path).exists:
        store = Store(config.stores[item.store], config.host, config.identity())
        for record in reversed(store.log(entry_id)):
            events.extend(
                Event(change, record.host or "?", record.date, record.sha)
                for change in changes_in(store, record.sha, entry_id)
            )
    committed = {str(event.change.record.get("created_at")) for event in events}
    parsed = read_memory(memory.path)
    for line in parsed.records:  # what this machine wrote and no commit holds yet
        obj = line.record.to_obj()
        if (obj.get("id") == entry_id or obj.get("supersedes") == entry_id) and str(
            obj.get("created_at")
        ) not in committed:
            what: What = "created" if obj.get("id") == entry_id else "superseded"
            if obj.get("deleted") is True:
                what = "forgotten"
            events.append(Event(Change(what, obj)))
    superseded_by = tuple(
        sorted({str(e.change.record.get("id")) for e in events if e.change.what == "superseded"})
    )
    return Timeline(
        max(versions, key=winner_key),
        item.live,
        item.store,
        memory.is_forgotten(entry_id),
        superseded_by,
        tuple(events),
    )


def authors(config_file: Path | None, item: Tracked) -> dict[str, str]:
    """For the memory file ``item``, the host of the commit that first brought each entry id (from the
    JSON lines each commit of its store path added); ids not committed yet are missing. Raises
    ``MemsyncError`` when git fails."""
    config = load_stores(config_file)
    if item.store is None or not StoreLayout(config.stores[item.store].path).exists:
        return {}
    store = Store(config.stores[item.store], config.host, config.identity())
    found: dict[str, str] = {}
    for record in store.log(item.store_path):  # newest first: an older commit overwrites
        for raw in store.added_lines(record.sha):
            line = parse_record(raw)
            if line is not None and isinstance(line.get("id"), str) and line.get("deleted") is not True:
                found[line["id"]] = record.host or "?"
    return found

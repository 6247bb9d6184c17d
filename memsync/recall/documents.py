"""What recall searches and returns: a searchable ``Document`` read from the tracked memory, and a
ranked ``Hit`` (DESIGN "Agent hosts", MCP ``recall``).

What is searchable: every entry of a memory file's view (no tombstoned or superseded entry; an expiring
entry carries its ``expires`` so a search leaves it out once it is past), and in a role directory (the
markdown skill's, Claude Code's or Codex's memory folder) its curated entries (name, description and
body; an index line that links to the entry is folded into it), the index items that link to no entry,
and every line of its daily logs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from typing_extensions import TypedDict  # not typing's: pydantic needs this one on Python 3.11

from memsync.formats.jsonl.parse import ParsedMemory, read_memory
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.timestamps import parse_timestamp
from memsync.formats.markdown.skill import DAILY_DIR, kind_for_type
from memsync.formats.quoted import neutralise, neutralise_name
from memsync.tracks.tracked import Tracked

DocType = Literal["entry", "curated", "index", "log"]
# A hit's text (neutralised: peers wrote it) is cut to this many characters (a curated entry's body can
# be long); the file has it all.
TEXT_CHARS = 400
_TIMED = re.compile(r"^- \[(\d{2}:\d{2})\][ \t]?(.*)$")
# The view at this instant holds every entry that is not dead for good: expiry is a view's last filter,
# independent of the other entries, so a search applies it at its own ``now`` (``Document.live_at``).
_BEFORE_ANY_EXPIRY = datetime(1, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Document:
    """One searchable item.

    ``id``: an entry's id; a curated entry's store path (its live path when untracked); for an index
    item or a log line, that path of its file plus ``:<line>``. ``title`` (weighted double) and ``body``
    are what is indexed; ``body`` is also what a hit shows (the lines of it that matched). ``date`` is
    what the item itself says (an entry's ``created_at``, a log's day and time), else None. ``needle`` is
    the text whose first commit names the writer (an entry id, a line); None means the file's latest
    commit. ``kind``: a memory-file kind (curated types mapped as handoff maps them), None for index
    items and log lines. ``expires``: an entry's ``expires_at`` (ISO 8601 UTC), else None."""

    id: str
    type: DocType
    kind: str | None
    title: str
    body: str
    source: Tracked
    file: Path
    line: int | None = None
    date: str | None = None
    needle: str | None = None
    scope: str | None = None
    expires: str | None = None

    @property
    def store_file(self) -> str | None:
        """The store path of the file holding this item (None when no track maps it)."""
        return store_path_of(self.source, self.file)

    def live_at(self, now: datetime) -> bool:
        """Whether the item is in the view at ``now`` (an aware datetime): not expired by then."""
        return self.expires is None or parse_timestamp(self.expires) > now

    @property
    def key(self) -> tuple[str, str]:
        """What names this item across ranked lists: its file and id."""
        return (str(self.file), self.id)


class HitJSON(TypedDict):
    """A hit as plain JSON data (:meth:`Hit.to_json`)."""

    id: str
    type: str
    kind: str | None
    text: str
    file: str
    store: str | None
    store_path: str | None
    line: int | None
    host: str
    date: str
    committed: bool
    score: float
    by_meaning: bool


@dataclass(frozen=True)
class Hit:
    """A returned document with its ``score`` (higher is better), ``text`` (what matched: the entry, or
    the matching lines of a note or log, neutralised), ``host`` (who committed it; this machine's host
    when it is not committed yet), ``date`` (ISO 8601) and ``by_meaning`` (found by the semantic search
    alone: it holds no word of the query)."""

    doc: Document
    score: float
    text: str = ""
    host: str = ""
    date: str = ""
    committed: bool = False
    by_meaning: bool = False

    def to_json(self) -> HitJSON:
        """The hit as plain JSON data (what the MCP ``recall`` tool and `memsync recall --json` give).
        Names peers chose (ids, file names) are neutralised and bounded like the text and the host."""
        store_path = self.doc.store_file
        return HitJSON(
            id=neutralise_name(self.doc.id),
            type=self.doc.type,
            kind=self.doc.kind,
            text=self.text,
            file=neutralise_name(str(self.doc.file)),
            store=self.doc.source.store,
            store_path=None if store_path is None else neutralise_name(store_path),
            line=self.doc.line,
            host=self.host,
            date=self.date,
            committed=self.committed,
            score=round(self.score, 4),
            by_meaning=self.by_meaning,
        )


def store_path_of(source: Tracked, file: Path) -> str | None:
    """The store path of ``file`` inside ``source`` (None when no track maps ``source``)."""
    if source.store is None:
        return None
    if file == source.live:
        return source.store_path
    rel = file.relative_to(source.live).as_posix()
    return f"{source.store_path}/{rel}"


def shown_text(body: str, marked: str | None) -> str:
    """What a hit shows of ``body``: with ``marked`` (``body`` with each matched word's start marked by
    ``MARK``, as FTS5's ``highlight`` gives it) its lines that hold a match, else all of it;
    neutralised (peers wrote it) and cut to ``TEXT_CHARS``."""
    if marked is not None:
        lines = body.split("\n")
        matched = [line for line, hit in zip(lines, marked.split("\n"), strict=False) if MARK in hit]
        if matched:
            body = "\n".join(matched)
    return neutralise(body, TEXT_CHARS)


# Marks a matched word in ``highlight``'s output: a control character, which no indexed text keeps.
MARK = "\x01"


def _where(source: Tracked, file: Path) -> str:
    """How an id names ``file``: its store path, or its live path when untracked."""
    return store_path_of(source, file) or str(file)


def entry_documents(source: Tracked, entries: Iterable[Entry]) -> Iterator[Document]:
    """The documents of ``entries`` (current entries of the memory file ``source``)."""
    for entry in entries:
        yield Document(
            id=entry.id,
            type="entry",
            kind=entry.kind,
            title=" ".join(entry.tags),
            body=entry.text,
            source=source,
            file=source.live,
            date=entry.created_at,
            needle=entry.id,
            scope=entry.scope,
            expires=entry.expires_at,
        )


def memory_documents(source: Tracked, memory: ParsedMemory) -> Iterator[Document]:
    """The documents of the memory file ``source`` as ``memory`` (its parsed bytes) gives it: every entry
    of its view, expiring ones included (``Document.live_at`` tells)."""
    return entry_documents(source, memory.view(_BEFORE_ANY_EXPIRY))


def _role_documents(source: Tracked) -> Iterator[Document]:
    # Imported here: only re-indexing a role directory reads markdown and its YAML front matter, and a
    # kept index answers a server's first recall without it.
    from memsync.formats.markdown.roledir import RoleDir

    role = RoleDir(source.live)
    items = role.index_items()
    entries = role.entries()
    by_file = {entry.path.name: entry for entry in entries}
    folded: dict[str, list[str]] = {}
    for item in items:
        if item.target is not None and item.target in by_file:
            folded.setdefault(item.target, []).append(item.text)
            continue
        yield Document(
            id=f"{_where(source, role.index_path)}:{item.line}",
            type="index",
            kind=None,
            title=item.name or "",
            body=item.text,
            source=source,
            file=role.index_path,
            line=item.line,
            needle=item.text.splitlines()[0],
        )
    for entry in entries:
        yield Document(
            id=_where(source, entry.path),
            type="curated",
            kind=kind_for_type(entry.type, entry.description or ""),
            title=f"{entry.title} {entry.description or ''}",
            body="\n".join([entry.body, *folded.get(entry.path.name, [])]),
            source=source,
            file=entry.path,
        )
    for daily in role.daily_logs():
        for number, line in enumerate(daily.text.split("\n"), start=1):
            line = line.rstrip("\r")
            if not line.strip() or (number == 1 and line.startswith("# ")):
                continue
            timed = _TIMED.match(line)
            yield Document(
                id=f"{_where(source, daily.path)}:{number}",
                type="log",
                kind=None,
                title="",
                body=timed.group(2) if timed else line,
                source=source,
                file=daily.path,
                line=number,
                date=f"{daily.date}T{timed.group(1)}" if timed else daily.date,
                needle=line,
            )


def source_documents(source: Tracked) -> list[Document]:
    """Every searchable item of the memory file or role directory ``source`` ([] when it vanished),
    expiring entries included (``Document.live_at`` tells). Raises MemsyncError for an unreadable file."""
    if not source.live.exists():
        return []
    if source.format == "jsonl":
        return list(memory_documents(source, read_memory(source.live)))
    return list(_role_documents(source))


def source_files(source: Tracked) -> list[str]:
    """The paths of the files ``source_documents`` reads for ``source``: the memory file, or the role
    directory's top markdown files and daily logs (a superset: what decides staleness, by a stat each).
    Strings from one ``scandir`` per folder: recall checks them before each search, and ``Path``
    objects made, sorted and printed again took most of that check's time at 500 files."""
    if source.format == "jsonl":
        return [str(source.live)]
    found: list[str] = []
    for folder in (str(source.live), os.path.join(source.live, DAILY_DIR)):
        try:
            with os.scandir(folder) as entries:
                found.extend(sorted(entry.path for entry in entries if _markdown(entry.name)))
        except OSError:
            continue
    return found


def _markdown(name: str) -> bool:
    """Whether a file name's suffix is ``.md`` (as ``Path.suffix`` has it: ``.md`` alone has none)."""
    return len(name) > 3 and name.endswith(".md")

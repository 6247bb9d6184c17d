"""What recall searches and returns: a searchable ``Document`` and a ranked ``Hit`` (DESIGN "Agent
hosts", MCP ``recall``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from typing_extensions import TypedDict  # not typing's: pydantic needs this one on Python 3.11

from memsync.formats.quoted import MAX_PATH_CHARS, neutralise
from memsync.tracked import Tracked

DocType = Literal["entry", "curated", "index", "log"]
# A hit shows this many characters of its text (a curated entry's body can be long); the file has it all.
TEXT_CHARS = 400


@dataclass(frozen=True)
class Document:
    """One searchable item.

    ``id``: an entry's id; a curated entry's store path (its live path when untracked); for an index
    item or a log line, that path of its file plus ``:<line>``. ``title`` (weighted double) and ``body``
    are what is indexed, ``text`` what a hit shows (neutralised and cut when shown: ``Hit.to_json``).
    ``date`` is what the item itself says (an entry's ``created_at``, a log's day and time), else None.
    ``needle`` is the text whose first commit names the writer (an entry id, a line); None means the
    file's latest commit. ``kind``: a memory-file kind (curated types mapped as handoff maps them), None
    for index items and log lines."""

    id: str
    type: DocType
    kind: str | None
    text: str
    title: str
    body: str
    source: Tracked
    file: Path
    line: int | None = None
    date: str | None = None
    needle: str | None = None
    scope: str | None = None

    @property
    def store_file(self) -> str | None:
        """The store path of the file holding this item (None when no track maps it)."""
        return store_path_of(self.source, self.file)


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


@dataclass(frozen=True)
class Hit:
    """A returned document with its ``score`` (higher is better), ``host`` (who committed it; this
    machine's host when it is not committed yet) and ``date`` (ISO 8601)."""

    doc: Document
    score: float
    host: str = ""
    date: str = ""
    committed: bool = False

    def to_json(self) -> HitJSON:
        """The hit as plain JSON data (what the MCP ``recall`` tool and `memsync recall --json` give).
        Names peers chose (ids, file names) are neutralised and bounded like the text and the host."""
        store_path = self.doc.store_file
        return HitJSON(
            id=neutralise(self.doc.id, MAX_PATH_CHARS),
            type=self.doc.type,
            kind=self.doc.kind,
            text=neutralise(self.doc.text, TEXT_CHARS),
            file=neutralise(str(self.doc.file), MAX_PATH_CHARS),
            store=self.doc.source.store,
            store_path=None if store_path is None else neutralise(store_path, MAX_PATH_CHARS),
            line=self.doc.line,
            host=self.host,
            date=self.date,
            committed=self.committed,
            score=round(self.score, 4),
        )


def store_path_of(source: Tracked, file: Path) -> str | None:
    """The store path of ``file`` inside ``source`` (None when no track maps ``source``)."""
    if source.store is None:
        return None
    rel = file.relative_to(source.live).as_posix()
    return source.store_path if rel == "." else f"{source.store_path}/{rel}"

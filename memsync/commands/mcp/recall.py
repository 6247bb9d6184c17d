"""Recall: ranked keyword search over the views of the tracked memory (DESIGN "Agent hosts", MCP).

What is searched: the live entries of every tracked memory file (the view: no tombstoned, superseded or
expired entry), and in every tracked role directory its curated entries (name, description and body; an
index line that links to the entry is folded into it), the index items that link to no entry, and every
line of its daily logs. Ranking is BM25 by SQLite's FTS5 (stdlib ``sqlite3``; Porter stemming, Unicode
words, diacritics folded): the words of the query are OR-ed, so a hit need not hold them all, and a
match in an entry's name or tags counts twice. Ties go to the newer item. Nothing is downloaded.

Who wrote a hit and when (``host``, ``date``) is read afterwards for the returned hits only
(``provenance``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from memsync.commands.handoff.mapping import kind_for_type
from memsync.commands.mcp.hits import Document, Hit, store_path_of
from memsync.config import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import KINDS
from memsync.formats.jsonl.view import scope_matches
from memsync.formats.markdown.roledir import RoleDir
from memsync.tracked import Tracked, tracked_memory

DEFAULT_LIMIT = 10
MAX_LIMIT = 100
_WORD = re.compile(r"\w+")
_TIMED = re.compile(r"^- \[(\d{2}:\d{2})\][ \t]?(.*)$")


def _where(source: Tracked, file: Path) -> str:
    """How an id names ``file``: its store path, or its live path when untracked."""
    return store_path_of(source, file) or str(file)


def _memory_documents(source: Tracked, now: datetime) -> Iterator[Document]:
    for entry in read_memory(source.live).view(now):
        yield Document(
            id=entry.id,
            type="entry",
            kind=entry.kind,
            text=entry.text,
            title=" ".join(entry.tags),
            body=entry.text,
            source=source,
            file=source.live,
            date=entry.created_at,
            needle=entry.id,
            scope=entry.scope,
        )


def _role_documents(source: Tracked) -> Iterator[Document]:
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
            text=item.text,
            title=item.name or "",
            body=item.text,
            source=source,
            file=role.index_path,
            line=item.line,
            needle=item.text.splitlines()[0],
        )
    for entry in entries:
        summary = f"{entry.title}: {entry.description}" if entry.description else entry.title
        yield Document(
            id=_where(source, entry.path),
            type="curated",
            kind=kind_for_type(entry.type, entry.description or ""),
            text=summary,
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
                text=timed.group(2) if timed else line,
                title="",
                body=line,
                source=source,
                file=daily.path,
                line=number,
                date=f"{daily.date}T{timed.group(1)}" if timed else daily.date,
                needle=line,
            )


def documents(
    sources: Iterable[Tracked],
    scope: str | None = None,
    kinds: Sequence[str] = (),
    now: datetime | None = None,
) -> list[Document]:
    """The searchable items of ``sources`` that pass the filters: ``scope`` keeps the memory-file
    entries whose scope applies to it (``scope_matches``; items of role directories have no scope and are
    kept); ``kinds`` keeps items of those kinds only. A source that vanished meanwhile is skipped.
    Raises MemsyncError for an unknown kind or an unreadable file."""
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise MemsyncError(f"recall: kind {unknown[0]!r} is not a kind. Use one of {', '.join(KINDS)}")
    moment = now or datetime.now(UTC)
    found: list[Document] = []
    for source in sources:
        if not source.live.exists():
            continue
        docs = _memory_documents(source, moment) if source.format == "jsonl" else _role_documents(source)
        for doc in docs:
            if kinds and doc.kind not in kinds:
                continue
            if scope is not None and doc.scope is not None and not scope_matches(doc.scope, scope):
                continue
            found.append(doc)
    return found


def fts_query(query: str) -> str:
    """The FTS5 query for a free-text ``query``: each word quoted (so no word is FTS5 syntax), OR-ed.
    Raises MemsyncError when the query has no word."""
    words = _WORD.findall(query)
    if not words:
        raise MemsyncError(f"recall: the query {query!r} has no word to search for. Give a few keywords")
    return " OR ".join(
        '"' + word.replace('"', '""') + '"' for word in dict.fromkeys(w.lower() for w in words)
    )


def rank(docs: Sequence[Document], query: str, limit: int = DEFAULT_LIMIT) -> list[Hit]:
    """The at most ``limit`` documents of ``docs`` that best match ``query`` by BM25, best first (ties:
    newer first). Documents that hold no word of the query are not hits. Raises MemsyncError for an
    empty query or a ``limit`` outside 1..MAX_LIMIT."""
    if not 1 <= limit <= MAX_LIMIT:
        raise MemsyncError(f"recall: limit {limit} is outside 1..{MAX_LIMIT}. Give a smaller number")
    match = fts_query(query)
    with sqlite3.connect(":memory:") as db:
        try:
            db.execute(
                "CREATE VIRTUAL TABLE docs USING fts5("
                "title, body, date UNINDEXED, tokenize='porter unicode61 remove_diacritics 2')"
            )
        except sqlite3.OperationalError as exc:
            raise MemsyncError(
                f"recall: this Python's SQLite has no full-text search ({exc}). Use a Python built with FTS5"
            ) from None
        db.executemany(
            "INSERT INTO docs(rowid, title, body, date) VALUES (?, ?, ?, ?)",
            ((n, doc.title, doc.body, doc.date or "") for n, doc in enumerate(docs)),
        )
        rows = db.execute(
            "SELECT rowid, bm25(docs, 2.0, 1.0) AS score FROM docs WHERE docs MATCH ? "
            "ORDER BY score, date DESC LIMIT ?",
            (match, limit),
        ).fetchall()
    db.close()
    return [Hit(docs[rowid], -score) for rowid, score in rows]


def recall(
    config: Config | None,
    query: str,
    scope: str | None = None,
    kinds: Sequence[str] = (),
    limit: int = DEFAULT_LIMIT,
    now: datetime | None = None,
) -> list[Hit]:
    """Search the memory ``config`` tracks (``None``: no config yet, the default memory file only) for
    ``query``; each hit carries who committed it and when (``provenance.attribute``).

    Raises MemsyncError for an empty query, a bad limit or kind, or an unreadable file."""
    from memsync.commands.mcp.provenance import attribute  # git history: only for the hits found

    hits = rank(documents(tracked_memory(config), scope, kinds, now), query, limit)
    return [replace(hit, **fields) for hit, fields in zip(hits, attribute(config, hits), strict=True)]

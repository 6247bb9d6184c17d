"""The kept search index: one SQLite FTS5 database per machine (``<user state dir>/memsync/recall.sqlite``)
over every searchable item of the tracked memory (``documents``), so a recall is one indexed query
instead of a rebuild over every view.

It is a cache, disposable like basic-memory's: the files are the truth. Each tracked file's size,
``mtime_ns`` and inode are recorded when its memory file or role directory (a *source*) is indexed;
``refresh`` stats every tracked file (nothing else) and re-indexes the sources whose files differ,
appeared or vanished, so a recall never answers from a stale source. Writers (remember, forget) and the
daemon's cycles refresh the sources they changed at once; a memory file that only grew is read from
where it ended (``_appended``: a one-line append costs that line, not the file). A missing index, one
of another format (``PRAGMA user_version``) or a corrupt one raises ``Unusable``; ``rebuild`` makes it
anew in place.

Ranking is BM25 (Porter stemming, Unicode words, diacritics folded): the words of a query (less its
function words) are OR-ed, so a hit need not hold them all, and a match in an entry's name or tags counts
twice; ties go to the newer item. Expiry is applied at query time, so an entry whose time passed never
comes back.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memsync.base.database import Database
from memsync.base.paths import state_dir
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import NumberedRecord, parse_memory, read_bytes
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.timestamps import parse_timestamp
from memsync.formats.jsonl.view import scope_matches
from memsync.recall import embedding
from memsync.recall.documents import (
    MARK,
    Document,
    entry_documents,
    memory_documents,
    source_documents,
    source_files,
)
from memsync.store.history import LogRecord
from memsync.tracks.tracked import Tracked

log = logging.getLogger(__name__)

# Bumped whenever the tables or what is indexed change: an index of another format is rebuilt.
FORMAT = 6
_WORD = re.compile(r"\w+")
# A question's function words: left out of a query that has other words, where they would only bring
# every text that happens to use them.
_STOPWORDS = frozenset(
    "a an and are as at be by can do does did for from how i in is it its me my of on or our should so "  # noqa: SIM905
    "that the their then there these this to was we what when where which who why will with you your".split()
)
# A memory file grown since it was indexed is taken as appended to when the bytes that ended it then (this
# many, or fewer in a smaller file) are the same now: their hash (``edge``) is kept with the source.
_EDGE = 4096
# The longest header line read back to parse what was appended.
_HEADER_MAX = 64 * 1024
# How long a connection waits for another's write lock. SQLite's busy handler polls, first come is not
# first served: 40 parallel `remember` on 2 loaded cores left some writers waiting past 5 s (they then
# warned and left their entry to the next refresh); none waited past 30 s.
_BUSY_MS = 30_000
_SCHEMA = (
    # ``edge``: a memory file's (``_EDGE``); NULL for a role directory.
    "CREATE TABLE sources(id INTEGER PRIMARY KEY, live TEXT NOT NULL UNIQUE, store TEXT, "
    "store_path TEXT NOT NULL, format TEXT NOT NULL, edge BLOB)",
    "CREATE TABLE files(path TEXT PRIMARY KEY, source TEXT NOT NULL, size INTEGER, mtime_ns INTEGER, "
    "ino INTEGER)",
    "CREATE INDEX files_source ON files(source)",
    # ``file``: relative to the source ('' for a memory file); ``needle``: NULL for an entry (its id).
    "CREATE TABLE docs(rowid INTEGER PRIMARY KEY, source INTEGER NOT NULL, id TEXT NOT NULL, "
    "type TEXT NOT NULL, kind TEXT, title TEXT NOT NULL, body TEXT NOT NULL, file TEXT NOT NULL, "
    "line INTEGER, date TEXT, "
    "needle TEXT, scope TEXT, expires TEXT, expires_ts REAL)",
    "CREATE INDEX docs_source ON docs(source)",
    # Every id a memory file's lines name (entries, dead or alive, tombstones, supersede targets), as a
    # 31-bit hash (``_hash``): what tells an appended entry whose id is new from one the view must weigh
    # against earlier lines, without reading them. A collision only costs a full re-index.
    "CREATE TABLE named(source INTEGER NOT NULL, hash INTEGER NOT NULL, PRIMARY KEY (source, hash)) "
    "WITHOUT ROWID",
    "CREATE VIRTUAL TABLE fts USING fts5(title, body, content='docs', content_rowid='rowid', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER docs_added AFTER INSERT ON docs BEGIN "
    "INSERT INTO fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END",
    "CREATE TRIGGER docs_removed AFTER DELETE ON docs BEGIN "
    "INSERT INTO fts(fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body); END",
    # Search by meaning (the semantic extra): each document's vector (``embedding``), computed when the
    # document is indexed (by the daemon, or before the extra was installed: by the next semantic
    # search) and dropped with it; another model's vectors are recomputed. A vector names its model by
    # the id of its row in ``models``: the name on each of 10,000 rows was a tenth of the memory's size.
    "CREATE TABLE models(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
    "CREATE TABLE vectors(rowid INTEGER PRIMARY KEY, model INTEGER NOT NULL, vector BLOB NOT NULL)",
    "CREATE TRIGGER docs_unembedded AFTER DELETE ON docs BEGIN "
    "DELETE FROM vectors WHERE rowid = old.rowid; END",
    "CREATE TABLE provenance(store TEXT NOT NULL, file TEXT NOT NULL, needle TEXT NOT NULL, "
    "sha TEXT NOT NULL, host TEXT, date TEXT NOT NULL, PRIMARY KEY (store, file, needle))",
    # Counts the write transactions: what a process keeps of the index (``Vectors``) is good while it holds.
    "CREATE TABLE meta(generation INTEGER NOT NULL)",
    "INSERT INTO meta(generation) VALUES (0)",
    f"PRAGMA user_version = {FORMAT}",
)
# The model named by a parameter, as ``vectors.model`` holds it (NULL while no vector of it is stored).
_MODEL = "(SELECT id FROM models WHERE name = ?)"
# The documents without a vector of the model (a parameter).
_MISSING = (
    f"FROM docs d LEFT JOIN vectors v ON v.rowid = d.rowid WHERE (v.rowid IS NULL OR v.model IS NOT {_MODEL})"
)
_COLUMNS = (
    "d.rowid, d.source, d.id, d.type, d.kind, d.title, d.body, d.file, d.line, d.date, d.needle, d.scope, "
    "d.expires"
)


class Unusable(Exception):
    """The index file is missing, of another format or corrupt: ``rebuild`` it."""


def index_path() -> Path:
    """Where this machine's index lives: ``<user state dir>/memsync/recall.sqlite``."""
    return state_dir() / "recall.sqlite"


def fts_query(query: str, every: bool = False) -> str:
    """The FTS5 query for a free-text ``query``: each word but function words (``_STOPWORDS``, unless
    there is nothing else) quoted (so no word is FTS5 syntax), OR-ed (with ``every``: AND-ed, so only a
    document holding each word matches). Raises MemsyncError when the query has no word."""
    words = _WORD.findall(query)
    words = [w for w in words if w.lower() not in _STOPWORDS] or words
    if not words:
        raise MemsyncError(f"recall: the query {query!r} has no word to search for. Give a few keywords")
    return (" AND " if every else " OR ").join(
        '"' + word.replace('"', '""') + '"' for word in dict.fromkeys(w.lower() for w in words)
    )


@dataclass(frozen=True)
class Found:
    """A document a search found, with its score (BM25 or cosine: higher is better) and its row in the
    index."""

    doc: Document
    score: float
    rowid: int


Stamp = tuple[int, int, int]


def _stamp(path: Path | str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class Vectors:
    """The vectors of an index's documents (rows of ``matrix``) with each one's rowid, scope, kind and
    expiry (a POSIX time, or None), as of the index's ``generation`` (``RecallIndex.vectors``)."""

    generation: int
    rowids: list[int]
    scopes: list[str | None]
    kinds: list[str | None]
    expires: list[float | None]
    matrix: embedding.Matrix

    def closest(
        self,
        query: str,
        *,
        now: datetime,
        scope: str | None = None,
        kinds: Sequence[str] = (),
        limit: int,
        least: float = 0.0,
    ) -> list[tuple[int, float]]:
        """The rowids of the at most ``limit`` documents alive at ``now`` closest in meaning to ``query``
        (cosine, best first, at least ``least``), filtered like ``RecallIndex.search``, with their cosine.
        Reads no file but the model's: safe in another thread while the index is searched. Raises
        MemsyncError without the semantic extra."""
        meant = embedding.embed([query])[0]
        moment = now.timestamp()
        chosen: list[tuple[int, float]] = []
        want = limit * 4
        while True:
            best = embedding.nearest(meant, self.matrix, want)
            chosen = []
            for row, score in best:
                if score < least:
                    break
                expires, kind, doc_scope = self.expires[row], self.kinds[row], self.scopes[row]
                if (expires is not None and expires <= moment) or (kinds and kind not in kinds):
                    continue
                if scope is not None and doc_scope is not None and not scope_matches(doc_scope, scope):
                    continue
                chosen.append((self.rowids[row], score))
                if len(chosen) == limit:
                    break
            # Enough, or no more to read: every row read, or the last one read already below ``least``.
            if len(chosen) == limit or len(best) < want or best[-1][1] < least:
                return chosen
            want *= 4


# Per index file, its vectors as this process last read them (``RecallIndex.vectors``).
_KEPT: dict[str, Vectors] = {}


class RecallIndex(Database):
    """An open index (``open``, ``rebuild`` or ``in_memory``); close it with ``close`` or ``with``
    (``Database``).

    One connection per instance, used by one thread at a time. ``path``: the index file (None in
    memory), what names the vectors a process keeps of it (``Vectors``)."""

    def __init__(self, db: sqlite3.Connection, path: Path | None = None) -> None:
        super().__init__(db)
        self.path = path

    @classmethod
    def open(cls, path: Path) -> RecallIndex:
        """The index at ``path``. Raises ``Unusable`` when it is missing, of another format or corrupt."""
        if not path.is_file():
            raise Unusable(f"{path} is missing")
        try:
            db = _connect(str(path))
        except sqlite3.DatabaseError as exc:
            raise Unusable(str(exc)) from None
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != FORMAT:
                raise Unusable(f"{path} is of format {version}, not {FORMAT}")
            db.execute("SELECT count(*) FROM sources").fetchone()
        except (sqlite3.DatabaseError, Unusable) as exc:
            db.close()
            raise Unusable(str(exc)) from None
        return cls(db, path)

    @classmethod
    def rebuild(cls, path: Path, sources: Sequence[Tracked]) -> RecallIndex:
        """A new index at ``path`` over ``sources``, built aside and renamed over what was there
        (missing, stale or corrupt): a reader sees the old index or the new one. Raises MemsyncError when
        a memory file is unreadable, ``sqlite3.Error`` or ``OSError`` when the index cannot be written."""
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        aside.unlink(missing_ok=True)
        try:
            db = _connect(str(aside))
            try:
                db.execute("PRAGMA journal_mode = OFF")  # a file nobody else opens until it is renamed
                _create(db)
                index = cls(db)
                with index._writing():
                    index._index(sources)
                    index._embed_missing()
            finally:
                db.close()
            # A journal left by a writer of the old file would be rolled back into the new one.
            path.with_name(path.name + "-journal").unlink(missing_ok=True)
            os.replace(aside, path)
        finally:
            aside.unlink(missing_ok=True)
        return cls.open(path)

    @classmethod
    def in_memory(cls, sources: Sequence[Tracked]) -> RecallIndex:
        """A throwaway index in memory over ``sources`` (a fresh scan while the kept one is rebuilt)."""
        db = _connect(":memory:")
        _create(db)
        index = cls(db)
        with index._writing():
            index._index(sources)
            index._embed_missing()
        return index

    @contextmanager
    def _writing(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("UPDATE meta SET generation = generation + 1")
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()

    def _index(self, sources: Iterable[Tracked]) -> None:
        """Replace what the index holds of each of ``sources`` (inside a transaction)."""
        db = self._db
        for source in sources:
            live = str(source.live)
            self._drop(live)
            number = db.execute(
                "INSERT INTO sources(live, store, store_path, format) VALUES (?, ?, ?, ?)",
                (live, source.store, source.store_path, source.format),
            ).lastrowid
            assert number is not None
            if source.format == "jsonl":
                self._index_memory(number, source)
            else:
                self._record(live, [(path, _stamp(path)) for path in source_files(source)])
                self._insert(number, source.live, source_documents(source))

    def _index_memory(self, number: int, source: Tracked) -> None:
        """Index the memory file ``source`` (source ``number``) whole: its view, the ids its lines name,
        its stamp and edge (inside a transaction). Raises MemsyncError when it is unreadable."""
        stamp = _stamp(source.live)
        if stamp is None:
            return  # vanished: nothing to search, nothing recorded (its return is seen as a change)
        data = read_bytes(source.live)
        memory = parse_memory(data)
        # The size read, with the stamp taken before: a line appended meanwhile changed the mtime, so
        # the next refresh sees the file as changed and reads it again.
        self._record(str(source.live), [(source.live, (len(data), stamp[1], stamp[2]))])
        self._db.execute("UPDATE sources SET edge = ? WHERE id = ?", (_edge(data), number))
        self._name(number, memory.records)
        self._insert(number, source.live, memory_documents(source, memory))

    def _name(self, number: int, records: Iterable[NumberedRecord]) -> None:
        """Record the ids ``records`` name as named in source ``number`` (inside a transaction)."""
        self._db.executemany(
            "INSERT OR IGNORE INTO named(source, hash) VALUES (?, ?)",
            ((number, _hash(name)) for numbered in records for name in _names(numbered)),
        )

    def _drop(self, live: str) -> None:
        """Forget everything of the source ``live`` (inside a transaction)."""
        self._db.execute("DELETE FROM docs WHERE source = (SELECT id FROM sources WHERE live = ?)", (live,))
        self._db.execute("DELETE FROM named WHERE source = (SELECT id FROM sources WHERE live = ?)", (live,))
        self._db.execute("DELETE FROM files WHERE source = ?", (live,))
        self._db.execute("DELETE FROM sources WHERE live = ?", (live,))

    def _record(self, live: str, files: Iterable[tuple[Path | str, Stamp | None]]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO files(path, source, size, mtime_ns, ino) VALUES (?, ?, ?, ?, ?)",
            ((str(path), live, *stamp) for path, stamp in files if stamp is not None),
        )

    def _appended(self, source: Tracked) -> bool:
        """Index what was appended to the memory file ``source`` since it was indexed, when that is
        only new entries (ids no earlier line names, none superseding) and tombstones (inside a
        transaction); False, having changed nothing, when it is anything else: a full re-index then
        gives the view. Only the appended bytes are read and parsed, with the header line and the
        ``_EDGE`` bytes that ended the file when it was indexed: the file counts as appended to when it
        kept its inode, grew, and those bytes are the same (their hash: ``edge``). A file rewritten,
        replaced or cut is read whole again; so is one whose earlier bytes were rewritten in place while
        it grew, unless its last ``_EDGE`` bytes stayed the same (memsync and git append or rename; it
        takes an editor that writes in place)."""
        if source.format != "jsonl":
            return False
        live = str(source.live)
        row = self._db.execute(
            "SELECT f.size, f.ino, s.id, s.edge FROM files f JOIN sources s ON s.live = f.source "
            "WHERE f.path = ?",
            (live,),
        ).fetchone()
        stamp = _stamp(source.live)
        if row is None or row[3] is None or stamp is None or stamp[2] != row[1] or stamp[0] <= row[0]:
            return False
        size, number, edge = row[0], row[2], row[3]
        start = max(0, size - _EDGE)
        try:
            with source.live.open("rb") as handle:
                header = handle.readline(_HEADER_MAX)
                handle.seek(start)
                ended = handle.read(size - start)
                tail = handle.read()
        except OSError:
            return False
        if _edge(ended) != edge or not ended.endswith(b"\n") or not tail.endswith(b"\n"):
            return False
        parsed = parse_memory(header + tail)
        lines = [line for line in tail.split(b"\n") if line.strip()]
        if parsed.problems or parsed.header is None or len(parsed.records) != len(lines):
            return False
        fresh: list[Document] = []
        gone: list[str] = []
        for numbered in parsed.records:
            record = numbered.record
            if isinstance(record, Entry):
                if (
                    record.supersedes is not None
                    or record.id in gone
                    or any(doc.id == record.id for doc in fresh)
                    or self._db.execute(
                        "SELECT 1 FROM named WHERE source = ? AND hash = ?", (number, _hash(record.id))
                    ).fetchone()
                    is not None
                ):
                    return False
                fresh.extend(entry_documents(source, [record]))
            else:
                gone.append(record.id)
        fresh = [doc for doc in fresh if doc.id not in gone]
        self._db.executemany("DELETE FROM docs WHERE source = ? AND id = ?", ((number, id_) for id_ in gone))
        self._record(live, [(source.live, (size + len(tail), stamp[1], stamp[2]))])
        self._db.execute("UPDATE sources SET edge = ? WHERE id = ?", (_edge(ended + tail), number))
        self._name(number, parsed.records)
        self._insert(number, source.live, fresh)
        return True

    def _insert(self, number: int, live: Path, docs: Iterable[Document]) -> None:
        self._db.executemany(
            "INSERT INTO docs(source, id, type, kind, title, body, file, line, date, needle, scope, "
            "expires, expires_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    number,
                    doc.id,
                    doc.type,
                    doc.kind,
                    doc.title,
                    doc.body,
                    "" if doc.file == live else doc.file.relative_to(live).as_posix(),
                    doc.line,
                    doc.date,
                    None if doc.type == "entry" else doc.needle,
                    doc.scope,
                    doc.expires,
                    None if doc.expires is None else parse_timestamp(doc.expires).timestamp(),
                )
                for doc in docs
            ),
        )

    def stale(self, sources: Sequence[Tracked]) -> tuple[list[Tracked], list[str]]:
        """Which of ``sources`` the index does not hold as they are now (a file's size, ``mtime_ns`` or
        inode differs, a file appeared or vanished, or the source is mapped elsewhere), and the sources
        it holds that are no longer tracked. A stat per file; nothing is read."""
        held = {
            live: (store, store_path, fmt)
            for live, store, store_path, fmt in self._db.execute(
                "SELECT live, store, store_path, format FROM sources"
            )
        }
        stamps: dict[str, dict[str, Stamp]] = {}
        for path, source, *stamp in self._db.execute("SELECT path, source, size, mtime_ns, ino FROM files"):
            stamps.setdefault(source, {})[path] = (stamp[0], stamp[1], stamp[2])
        stale = []
        for source in sources:
            live = str(source.live)
            if held.get(live) != (source.store, source.store_path, source.format):
                stale.append(source)
                continue
            now = {path: stamp for path in source_files(source) if (stamp := _stamp(path)) is not None}
            if now != stamps.get(live, {}):
                stale.append(source)
        tracked = {str(source.live) for source in sources}
        return stale, [live for live in held if live not in tracked]

    def refresh(self, sources: Sequence[Tracked], every: bool = True, embed: bool = True) -> int:
        """Re-index those of ``sources`` that are stale (``stale``); with ``every`` (``sources`` is all
        the tracked memory), also drop the sources no longer tracked; with ``embed``, give the new
        documents their vectors (else the next semantic search does). Returns how many sources were
        re-indexed or dropped. Raises MemsyncError for an unreadable memory file."""
        stale, gone = self.stale(sources)
        if not every:
            gone = []
        if not stale and not gone:
            return 0
        with self._writing():
            # Rowids only grow: what this refresh inserts lies above the largest one before it.
            top = self._db.execute("SELECT coalesce(max(rowid), 0) FROM docs").fetchone()[0]
            self._index([source for source in stale if not self._appended(source)])
            for live in gone:
                self._drop(live)
            if embed:
                self._embed_missing(above=top)
        return len(stale) + len(gone)

    def search(
        self,
        match: str,
        *,
        now: datetime,
        scope: str | None = None,
        kinds: Sequence[str] = (),
        limit: int,
    ) -> list[Found]:
        """The at most ``limit`` documents alive at ``now`` that match the FTS5 query ``match``
        (``fts_query``), best first (ties: newer first), whose kind is one of ``kinds`` (any when empty)
        and whose scope applies to ``scope`` (``scope_matches``; items without a scope always do)."""
        where = "fts MATCH ? AND (d.expires_ts IS NULL OR d.expires_ts > ?)"
        args: list[object] = [match, now.timestamp()]
        if kinds:
            where += f" AND d.kind IN ({', '.join('?' * len(kinds))})"
            args.extend(kinds)
        sql = (
            f"SELECT {_COLUMNS}, bm25(fts, 2.0, 1.0) AS score FROM fts JOIN docs d ON d.rowid = fts.rowid "
            f"WHERE {where} ORDER BY score, d.date DESC LIMIT ?"
        )
        # A scope filter is applied here (it is not SQL): fetch more rows until enough pass or none is left.
        want = limit if scope is None else limit * 4
        while True:
            rows = self._db.execute(sql, (*args, want)).fetchall()
            found = []
            sources: dict[object, Tracked] = {}
            for row in rows:
                doc = self._document(row, sources)
                if scope is None or doc.scope is None or scope_matches(doc.scope, scope):
                    found.append(Found(doc, -row[-1], row[0]))
            if len(found) >= limit or len(rows) < want:
                return found[:limit]
            want *= 4

    def search_every(
        self,
        every: str,
        found: Sequence[Found],
        *,
        now: datetime,
        scope: str | None = None,
        kinds: Sequence[str] = (),
        limit: int,
    ) -> list[Found]:
        """What ``search(every, ...)`` gives, for ``every`` the words of a query AND-ed (``fts_query`` with
        ``every``) and ``found`` what ``search`` gave for the same words OR-ed, with the same filters and
        ``limit``: read off ``found`` when it settles the answer, else searched.

        A document's BM25 depends on the query's words, not on how they are joined, so the documents
        holding every word come in the same order (and score) in both answers: when each of ``found``
        holds every word, or ``found`` holds every match (fewer than ``limit``), the answer is those of
        ``found`` that hold every word."""
        if not found:
            return []
        rowids = [hit.rowid for hit in found]
        # One range of the AND-ed words' rows: a lookup per rowid (``IN``) cost 8 times as much.
        holding = {
            row[0]
            for row in self._db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?",
                (every, min(rowids), max(rowids)),
            )
        }
        narrowed = [hit for hit in found if hit.rowid in holding]
        if len(narrowed) == len(found) or len(found) < limit:
            return narrowed
        return self.search(every, now=now, scope=scope, kinds=kinds, limit=limit)

    def similar(
        self,
        query: str,
        *,
        now: datetime,
        scope: str | None = None,
        kinds: Sequence[str] = (),
        limit: int,
        least: float = 0.0,
    ) -> list[Found]:
        """The at most ``limit`` documents alive at ``now`` closest in meaning to ``query`` (cosine of
        ``embedding`` vectors, best first, at least ``least``), filtered like ``search``. Documents
        without a vector of this model get one first. Raises MemsyncError without the semantic extra."""
        chosen = self.vectors().closest(query, now=now, scope=scope, kinds=kinds, limit=limit, least=least)
        return self.found(chosen)

    def found(self, chosen: Sequence[tuple[int, float]]) -> list[Found]:
        """The documents of ``chosen`` (rowid and score pairs, ``Vectors.closest``), in its order; a rowid
        removed since the vectors were read is left out."""
        sources: dict[object, Tracked] = {}
        rows = {
            row[0]: row
            for row in self._db.execute(
                f"SELECT {_COLUMNS} FROM docs d WHERE d.rowid IN ({', '.join('?' * len(chosen))})",
                [rowid for rowid, _ in chosen],
            )
        }
        return [
            Found(self._document(rows[rowid], sources), score, rowid)
            for rowid, score in chosen
            if rowid in rows
        ]

    def vectors(self) -> Vectors:
        """Every document's vector with what ``similar`` filters on: kept in this process per index file
        while the index's generation is the same (a recall then reads no vector from disk). Documents
        without a vector of this model get one first, when the semantic extra is installed."""
        generation = self._db.execute("SELECT generation FROM meta").fetchone()[0]
        kept = _KEPT.get(str(self.path)) if self.path is not None else None
        if kept is not None and kept.generation == generation:
            return kept
        missing = self._db.execute(f"SELECT EXISTS (SELECT 1 {_MISSING})", (embedding.MODEL,)).fetchone()[0]
        if missing and embedding.available():
            with suppress(sqlite3.OperationalError), self._writing():  # busy: embedded again next time
                self._embed_missing()
        # Read the generation before the rows: a write in between makes the kept copy stale, never wrong.
        generation = self._db.execute("SELECT generation FROM meta").fetchone()[0]
        rows = self._db.execute(
            "SELECT d.rowid, d.scope, d.kind, d.expires_ts, v.vector "
            f"FROM docs d JOIN vectors v USING (rowid) WHERE v.model = {_MODEL}",
            (embedding.MODEL,),
        ).fetchall()
        vectors = Vectors(
            generation=generation,
            rowids=[row[0] for row in rows],
            scopes=[row[1] for row in rows],
            kinds=[row[2] for row in rows],
            expires=[row[3] for row in rows],
            matrix=embedding.from_blobs([row[4] for row in rows]),
        )
        if self.path is not None:
            _KEPT[str(self.path)] = vectors
        return vectors

    def _embed_missing(self, above: int = 0) -> None:
        """Give every document (of a rowid ``above`` this) without a vector of ``embedding.MODEL`` one,
        when the semantic extra is installed (inside a transaction)."""
        if not embedding.available():
            return
        missing = self._db.execute(
            f"SELECT d.rowid, d.title, d.body {_MISSING} AND d.rowid > ?", (embedding.MODEL, above)
        ).fetchall()
        if not missing:
            return
        # An entry without tags has an empty title: embedded as its text alone, so asking for the text
        # finds it with a cosine of 1 (a separator token would weigh in a short text's mean).
        vectors = embedding.embed(["\n".join(filter(None, (title, body))) for _, title, body in missing])
        self._db.execute("INSERT OR IGNORE INTO models(name) VALUES (?)", (embedding.MODEL,))
        self._db.executemany(
            f"INSERT OR REPLACE INTO vectors(rowid, model, vector) VALUES (?, {_MODEL}, ?)",
            (
                (rowid, embedding.MODEL, embedding.to_blob(vector))
                for (rowid, _, _), vector in zip(missing, vectors, strict=True)
            ),
        )

    def marked(self, match: str, doc: Document) -> str | None:
        """``doc``'s body with each word that ``match`` matched preceded by ``documents.MARK`` (None
        when the index no longer holds ``doc``)."""
        row = self._db.execute(
            "SELECT highlight(fts, 1, ?, '') FROM fts JOIN docs d ON d.rowid = fts.rowid "
            "WHERE fts MATCH ? AND d.id = ? AND d.source = (SELECT id FROM sources WHERE live = ?)",
            (MARK, match, doc.id, str(doc.source.live)),
        ).fetchone()
        return None if row is None else str(row[0])

    def _document(self, row: Sequence[object], sources: dict[object, Tracked]) -> Document:
        _, number, doc_id, doc_type, kind, title, body, file, line, date, needle, scope, expires = row[:13]
        if number not in sources:
            live, store, store_path, fmt = self._db.execute(
                "SELECT live, store, store_path, format FROM sources WHERE id = ?", (number,)
            ).fetchone()
            sources[number] = Tracked(store, store_path, Path(live), fmt)
        source = sources[number]
        return Document(
            id=str(doc_id),
            type=doc_type,  # type: ignore[arg-type]
            kind=kind,  # type: ignore[arg-type]
            title=str(title),
            body=str(body),
            source=source,
            file=source.live / str(file) if file else source.live,
            line=line,  # type: ignore[arg-type]
            date=date,  # type: ignore[arg-type]
            needle=str(doc_id) if doc_type == "entry" else needle,  # type: ignore[arg-type]
            scope=scope,  # type: ignore[arg-type]
            expires=expires,  # type: ignore[arg-type]
        )

    def provenance(self, store: str, file: str, needle: str) -> LogRecord | None:
        """The commit recorded as having introduced ``needle`` into store path ``file`` of ``store``."""
        row = self._db.execute(
            "SELECT sha, host, date FROM provenance WHERE store = ? AND file = ? AND needle = ?",
            (store, file, needle),
        ).fetchone()
        if row is None:
            return None
        return LogRecord(row[0], row[1], datetime.fromisoformat(row[2]), "", (file,))

    def note_provenance(self, store: str, file: str, needle: str, record: LogRecord) -> None:
        """Record that ``record`` introduced ``needle`` into ``file`` of ``store``: the oldest commit
        that added a text never changes, so it is asked of git once."""
        with suppress(sqlite3.OperationalError), self._db:  # busy: asked of git again next time
            self._db.execute(
                "INSERT OR REPLACE INTO provenance(store, file, needle, sha, host, date) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (store, file, needle, record.sha, record.host, record.date.isoformat()),
            )


def _edge(data: bytes) -> bytes:
    """The hash of the last ``_EDGE`` bytes of ``data`` (the bytes of a memory file up to a point)."""
    # Imported when a file is indexed: hashlib's import sets up OpenSSL (7 ms of a server's first recall).
    import hashlib

    return hashlib.blake2b(data[-_EDGE:], digest_size=16).digest()


def _names(numbered: NumberedRecord) -> Iterator[str]:
    """The ids a record's line names: its own, and for an entry the one it supersedes."""
    yield numbered.record.id
    if isinstance(numbered.record, Entry) and numbered.record.supersedes is not None:
        yield numbered.record.supersedes


def _hash(name: str) -> int:
    """A 31-bit hash of an id (four bytes in a SQLite row)."""
    import hashlib  # see _edge

    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "big") >> 1


def _connect(where: str) -> sqlite3.Connection:
    db = sqlite3.connect(where, isolation_level=None, check_same_thread=False, timeout=_BUSY_MS / 1000)
    try:
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        # A cache: no fsync per commit. A power cut may corrupt it; a corrupt index is rebuilt.
        db.execute("PRAGMA synchronous = OFF")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def _create(db: sqlite3.Connection) -> None:
    try:
        for statement in _SCHEMA:
            db.execute(statement)
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc):
            raise MemsyncError(
                f"recall: this Python's SQLite has no full-text search ({exc}). Use a Python built with FTS5"
            ) from None
        raise


def size_of(path: Path) -> int:
    """The bytes the index at ``path`` takes on disk (its journal included)."""
    return sum(
        os.stat(p).st_size for p in (path, path.with_name(path.name + "-journal")) if os.path.exists(p)
    )

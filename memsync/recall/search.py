"""Recall: the tracked memory searched through the kept index, fused and put in scope order, each hit
with what matched and who wrote it when (DESIGN "Agent hosts", MCP ``recall``; `memsync recall`).

The kept index (``index``) is refreshed before each search: a stat per tracked file, the stale sources
re-indexed. When it is missing, of another format or corrupt, it is rebuilt: in a one-shot command at
once, in a long-lived process (``background=True``: the MCP server) in a thread while recall answers
from a fresh scan (a throwaway index in memory). A long-lived process holds the index open between
uses (``Holder``: the MCP server between recalls, the daemon between cycles), and the server readies it
before its first recall (``warm``). Nothing is downloaded.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from memsync.base.defaults import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT
from memsync.config.file import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import KINDS
from memsync.recall import embedding
from memsync.recall.documents import Hit, shown_text
from memsync.recall.index import RecallIndex, Unusable, fts_query, index_path
from memsync.recall.ranking import Ranked, Vantage, fuse, here
from memsync.tracks.tracked import Tracked, tracked_memory

log = logging.getLogger(__name__)

R = TypeVar("R")

# How many of the semantic ranking's best are fused with the lexical list, the cosine below which a
# text is not taken to mean the query (a query of one rare word would otherwise bring unrelated
# entries; related texts score 0.25 and more with this model), and the weight of the semantic list in
# the fusion (the lexical one counts 1). Chosen on half of bench/recall_eval.py's queries (a hash of
# each query's text), checked on the other half: docs/benchmarks.md.
SEMANTIC_DEPTH = 10
SEMANTIC_FLOOR = 0.1
SEMANTIC_WEIGHT = 1.5
# With the semantic list, the documents holding every word of the query are a third list of this
# weight: a document found by its own words then ties with the best match by meaning (1 + 0.5 against
# 1.5) rather than being pushed out of the first places by the semantic list's (keyword questions'
# recall@5 0.980 -> 1.000, paraphrases' unchanged; 0.25 changed nothing, 0.75 lost a paraphrase). Chosen
# like the three above.
ALL_WORDS_WEIGHT = 0.5

# How often a held index (``Holder``) runs ``PRAGMA optimize``: SQLite's advice for a connection that
# stays open is now and then, not at each use.
OPTIMIZE_EVERY_S = 3600.0

# One rebuild at a time per process; while it runs, recall answers from a fresh scan.
_rebuilding = threading.Lock()


class _Scanner:
    """The thread that scans the vectors while the keyword search runs (``rank``), started at the first
    scan: a daemon, since a scan writes nothing a process must finish (an executor's worker would hold
    up the process's exit)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._started = False
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], R]) -> Future[R]:
        """``job`` run in the thread; its result or exception in the future returned."""
        future: Future[R] = Future()
        with self._lock:
            if not self._started:
                threading.Thread(target=self._run, name="recall-scan", daemon=True).start()
                self._started = True
        self._jobs.put((future, job))
        return future

    def _run(self) -> None:
        while True:
            future, job = self._jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, who raises it
                future.set_exception(exc)


_SCANNER = _Scanner()


def _check(query: str, kinds: Sequence[str], limit: int) -> str:
    if not 1 <= limit <= MAX_RECALL_LIMIT:
        raise MemsyncError(f"recall: limit {limit} is outside 1..{MAX_RECALL_LIMIT}. Give a smaller number")
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise MemsyncError(f"recall: kind {unknown[0]!r} is not a kind. Use one of {', '.join(KINDS)}")
    return fts_query(query)


def rank(
    index: RecallIndex,
    query: str,
    *,
    now: datetime,
    vantage: Vantage,
    scope: str | None = None,
    kinds: Sequence[str] = (),
    limit: int = DEFAULT_RECALL_LIMIT,
) -> list[Ranked]:
    """The at most ``limit`` best documents of ``index`` for the free-text ``query`` that are alive at
    ``now`` (``scope`` and ``kinds`` filter as ``RecallIndex.search`` does), in scope order seen from
    ``vantage``: the keyword list alone, or with the semantic extra fused (``ranking.fuse``) with the
    semantic list and the documents holding every word of the query. Raises MemsyncError for a query
    without a word, or a model that cannot be read."""
    match = fts_query(query)
    if not embedding.available():
        found = index.search(match, now=now, scope=scope, kinds=kinds, limit=limit)
        return fuse([[hit.doc for hit in found]], limit, vantage)
    # The scan by meaning (numpy) and the keyword search (SQLite) each let go of the interpreter while
    # they work: side by side, a recall takes the longer of the two rather than their sum.
    vectors = index.vectors()
    scan = _SCANNER.submit(
        functools.partial(
            vectors.closest,
            query,
            now=now,
            scope=scope,
            kinds=kinds,
            limit=SEMANTIC_DEPTH,
            least=SEMANTIC_FLOOR,
        )
    )
    found = index.search(match, now=now, scope=scope, kinds=kinds, limit=limit)
    lexical = [hit.doc for hit in found]
    meant = index.found(scan.result())
    every = fts_query(query, every=True)
    if every == match:  # one word: the same query
        whole = lexical
    else:
        holding = index.search_every(every, found, now=now, scope=scope, kinds=kinds, limit=limit)
        whole = [hit.doc for hit in holding]
    fused = fuse(
        [lexical, [hit.doc for hit in meant], whole],
        limit,
        vantage,
        weights=(1.0, SEMANTIC_WEIGHT, ALL_WORDS_WEIGHT),
    )
    # Said with each hit: a query no text holds a word of still gets the closest texts by meaning, and
    # a reader must be able to tell those from a match (nonsense is "close" to something).
    worded = {doc.key for doc in (*lexical, *whole)}
    return [replace(item, by_meaning=item.doc.key not in worded) for item in fused]


def kept_index(
    sources: Sequence[Tracked], *, path: Path | None = None, background: bool = False
) -> RecallIndex:
    """The kept index at ``path`` (default ``index_path()``) brought up to date with ``sources`` (all
    the tracked memory). When it is unusable: rebuilt here, or with ``background`` in a thread while a
    fresh in-memory index over ``sources`` is returned. Raises MemsyncError for an unreadable memory
    file, ``sqlite3.Error``/``OSError`` when the index cannot be written."""
    where = path or index_path()
    try:
        index = RecallIndex.open(where)
    except Unusable as why:
        log.debug("recall index: %s; rebuilt", why)
        if not background:
            return RecallIndex.rebuild(where, sources)
        if _rebuilding.acquire(blocking=False):
            threading.Thread(target=_rebuild, args=(where, sources), name="recall-index", daemon=True).start()
        return RecallIndex.in_memory(sources)
    try:
        index.refresh(sources)
    except sqlite3.DatabaseError as exc:  # corrupt past its header: rebuilt like a missing one
        index.close()
        log.debug("recall index %s: %s; rebuilt", where, exc)
        where.unlink(missing_ok=True)
        return kept_index(sources, path=where, background=background)
    except BaseException:
        index.close()
        raise
    return index


class Holder:
    """The kept index a long-lived process holds open between its uses (the MCP server between recalls,
    the daemon between cycles: its ``Session``): a use sets up no connection (opening and closing one,
    with its ``PRAGMA optimize``, was 12 ms of the 18 a daemon cycle spent on the index at 10,000
    entries), and SQLite's page cache stays warm (a held connection answered the benchmark's queries in
    about half the time of a new one each). Opened again when its file was replaced (a rebuild: another
    inode) or a use failed in SQLite; a file missing for now leaves it held (renamed back, it is the same
    file). ``PRAGMA optimize`` runs every ``OPTIMIZE_EVERY_S``. One use at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Path, tuple[int, RecallIndex]] = {}
        self._optimized = time.monotonic()

    @contextmanager
    def use(
        self,
        where: Path,
        sources: Sequence[Tracked],
        *,
        every: bool = True,
        embed: bool = True,
        rebuild: bool = False,
    ) -> Iterator[RecallIndex | None]:
        """The index at ``where`` brought up to date with ``sources`` (``RecallIndex.refresh``'s ``every``
        and ``embed``), for one use: the one held, else opened. When it is unusable: None, or with
        ``rebuild`` (``sources`` then all the tracked memory) a fresh index in memory while the file is
        rebuilt in a thread (``kept_index``). Raises as ``kept_index`` does; a ``sqlite3.Error`` raised
        by the use closes the index (opened again next time)."""
        with self._lock:
            inode = _inode(where)  # before opening: a file replaced meanwhile is seen as replaced next time
            index = self._refreshed(where, inode, sources, every, embed)
            if index is None:
                if rebuild:
                    index = kept_index(sources, path=where, background=True)
                else:
                    index = _opened(where, sources, every, embed)
            if index is None:
                yield None
                return
            keep = True
            try:
                yield index
            except sqlite3.Error:
                keep = False
                raise
            finally:
                self._keep(where, inode, index, keep)

    def holds(self, where: Path) -> bool:
        """Whether an index at ``where`` is held open (taken as is: the next use refreshes it)."""
        return where in self._held

    def _refreshed(
        self, where: Path, inode: int | None, sources: Sequence[Tracked], every: bool, embed: bool
    ) -> RecallIndex | None:
        """The index held for ``where`` refreshed, when its file is the one at ``where`` (``inode``)."""
        held = self._held.get(where)
        if held is None or inode is None:
            return None
        if held[0] != inode:
            del self._held[where]
            held[1].close()
            return None
        try:
            held[1].refresh(sources, every=every, embed=embed)
        except sqlite3.DatabaseError:
            del self._held[where]
            held[1].close()  # corrupt since it was opened: opened again, or rebuilt
            return None
        return held[1]

    def _keep(self, where: Path, inode: int | None, index: RecallIndex, keep: bool) -> None:
        """Hold ``index`` after a use (``keep``: it did not fail in SQLite), when it is the file's; else
        close it."""
        held = self._held.get(where)
        if not keep or index.path is None or inode is None:
            if held is not None and held[1] is index:
                del self._held[where]
            index.close()
            return
        if held is not None and held[1] is not index:
            held[1].close()
        self._held[where] = (inode, index)
        if time.monotonic() - self._optimized >= OPTIMIZE_EVERY_S:
            index.optimize()
            self._optimized = time.monotonic()

    def close(self) -> None:
        """Close every index held (``Database.close``: optimized first)."""
        with self._lock:
            for _, index in self._held.values():
                index.close()
            self._held.clear()


# The MCP server's index (``recall`` with ``background``).
_SERVER = Holder()


@contextmanager
def _searched(sources: Sequence[Tracked], *, background: bool) -> Iterator[RecallIndex]:
    """The kept index brought up to date with ``sources`` (``kept_index``) for one search; with
    ``background`` (a long-lived process), the one this process holds open (``_SERVER``)."""
    if not background:
        with kept_index(sources) as index:
            yield index
        return
    with _SERVER.use(index_path(), sources, rebuild=True) as held:
        assert held is not None  # rebuild: never None
        yield held


def held() -> bool:
    """Whether this long-lived process (the MCP server) holds the kept index open and, with the semantic
    extra, has the model loaded: its next recall then reads only what changed since the last one, a few
    milliseconds at 10,000 entries."""
    return _SERVER.holds(index_path()) and (not embedding.available() or embedding.loaded())


def _opened(where: Path, sources: Sequence[Tracked], every: bool, embed: bool) -> RecallIndex | None:
    """The index at ``where`` refreshed with ``sources`` (``RecallIndex.refresh``), None when it is
    unusable."""
    try:
        index = RecallIndex.open(where)
    except Unusable:
        return None
    try:
        index.refresh(sources, every=every, embed=embed)
    except BaseException:
        index.close()
        raise
    return index


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def warm(config: Config | None) -> None:
    """Ready this long-lived process's first recall over the memory ``config`` tracks: the index held
    open and up to date (``_searched``), and with the semantic extra the model loaded and the vectors
    read. Raises as ``recall`` does."""
    with _searched(tracked_memory(config), background=True) as index:
        if embedding.available():
            index.similar("memsync", now=datetime.now(UTC), limit=1)


def _rebuild(where: Path, sources: Sequence[Tracked]) -> None:
    try:
        RecallIndex.rebuild(where, sources).close()
    except (MemsyncError, sqlite3.Error, OSError) as exc:
        log.warning("recall index %s not rebuilt: %s", where, exc)
    finally:
        _rebuilding.release()


def refresh(
    config: Config | None,
    only: Callable[[Tracked], bool] | None = None,
    *,
    embed: bool = False,
    holder: Holder | None = None,
) -> None:
    """Bring the kept index up to date with the tracked memory of ``config`` (only the sources ``only``
    accepts, when given: a writer's file, a store's tracks), if it is usable: an unusable one is left
    to the next recall. ``embed``: the new documents get their vectors now; else the next semantic
    search gives them (the daemon's cycles: the model takes hundreds of MB resident, which a daemon
    must not hold). ``holder``: the index held open by a long-lived process (the daemon's), else it is
    opened and closed here. Never raises: the index is a cache."""
    used = holder or Holder()
    try:
        sources = tracked_memory(config)
        if only is not None:
            sources = [source for source in sources if only(source)]
        with used.use(index_path(), sources, every=only is None, embed=embed):
            pass
    except (MemsyncError, sqlite3.Error, OSError) as exc:
        log.warning("recall index not refreshed: %s", exc)
    finally:
        if holder is None:
            used.close()


def written(config: Config | None, path: Path) -> None:
    """Bring the kept index up to date with the memory file at ``path`` that this process just wrote
    (remember, forget), so the next recall finds it without re-indexing (a new entry with its vector:
    remember loads the model anyway, for its near-duplicate hint). Never raises."""
    live = Path(os.path.abspath(path))
    refresh(config, lambda source: source.live == live, embed=True)


def recall(
    config: Config | None,
    query: str,
    scope: str | None = None,
    kinds: Sequence[str] = (),
    limit: int = DEFAULT_RECALL_LIMIT,
    now: datetime | None = None,
    *,
    vantage: Vantage | None = None,
    background: bool = False,
) -> list[Hit]:
    """Search the memory ``config`` tracks (``None``: no config yet, the default memory file only) for
    ``query``: the best ``limit`` hits in scope order (``ranking.fuse``; ``vantage`` default: the
    working directory), each with the text that matched and who committed it and when
    (``provenance.attribute``). Dead entries (tombstoned, superseded, expired at ``now``) never come
    back. ``background``: see ``kept_index``.

    Raises MemsyncError for an empty query, a bad limit or kind, or an unreadable file or index."""
    from memsync.recall.provenance import attribute  # git history: only for the hits found

    match = _check(query, kinds, limit)
    moment = now or datetime.now(UTC)
    try:
        with _searched(tracked_memory(config), background=background) as index:
            ranked = rank(
                index, query, now=moment, vantage=vantage or here(), scope=scope, kinds=kinds, limit=limit
            )
            # A note shows the lines that matched; an entry, an index item or a log line is shown whole.
            texts = [
                shown_text(
                    item.doc.body, index.marked(match, item.doc) if item.doc.type == "curated" else None
                )
                for item in ranked
            ]
            hits = [
                Hit(item.doc, item.score, text, by_meaning=item.by_meaning)
                for item, text in zip(ranked, texts, strict=True)
            ]
            attributed = attribute(config, hits, index)
    except (sqlite3.Error, OSError) as exc:
        raise MemsyncError(
            f"recall: the search index {index_path()} failed ({exc}). Delete it: memsync rebuilds it"
        ) from exc
    return [replace(hit, **fields) for hit, fields in zip(hits, attributed, strict=True)]

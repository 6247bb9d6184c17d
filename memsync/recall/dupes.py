"""Near-duplicates: entries that say the same thing in other words, found by meaning (``embedding``, the
``semantic`` extra), for a person to supersede one. Nothing here writes or deletes.

Compared: the live entries of memory files and the curated entries of role directories (what an agent
remembered on purpose; index items and daily-log lines are left out). ``SIMILAR`` is the cosine from
which two texts count as the same thing: on the evaluation's cases (bench/recall_eval_cases.py), as
stored, no two different facts reach 0.51, while rewordings score 0.38 to 0.83 (three of five above 0.8:
a rewording that shares few words is missed rather than a different fact named).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memsync.recall import embedding
from memsync.recall.documents import Document, source_documents
from memsync.tracks.tracked import Tracked

SIMILAR = 0.8


@dataclass(frozen=True)
class Pair:
    """Two entries that say the same thing, with their cosine ``similarity`` (0 to 1)."""

    first: Document
    second: Document
    similarity: float


def _entries(sources: Sequence[Tracked], now: datetime) -> list[Document]:
    return [
        doc
        for source in sources
        for doc in source_documents(source)
        if doc.type in ("entry", "curated") and doc.live_at(now)
    ]


def _text(doc: Document) -> str:
    return f"{doc.title}\n{doc.body}"


def near_duplicates(sources: Sequence[Tracked], threshold: float = SIMILAR) -> list[Pair]:
    """The pairs of live entries of ``sources`` whose similarity is at least ``threshold``, most similar
    first. Raises MemsyncError when the semantic extra is not installed or a memory file is unreadable."""
    docs = _entries(sources, datetime.now(UTC))
    matrix = embedding.embed([_text(doc) for doc in docs])
    return [Pair(docs[i], docs[j], score) for i, j, score in embedding.similar_pairs(matrix, threshold)]


def similar_entry(
    path: Path, text: str, written: str, threshold: float = SIMILAR
) -> tuple[str, float] | None:
    """The live entry of the memory file ``path`` (other than the one just ``written``, by id) most
    similar to ``text`` when at least ``threshold``, as (id, similarity); None when there is none, or
    without the semantic extra (remember then says nothing). Raises MemsyncError for an unreadable file."""
    if not embedding.available():
        return None
    docs = [
        doc
        for doc in _entries([Tracked(None, path.name, path, "jsonl")], datetime.now(UTC))
        if doc.id != written
    ]
    if not docs:
        return None
    matrix = embedding.embed([_text(doc) for doc in docs])
    best = embedding.nearest(embedding.embed([f"\n{text}"])[0], matrix, 1)
    if not best or best[0][1] < threshold:
        return None
    row, score = best[0]
    return docs[row].id, score

"""The final order of recall's hits: ranked lists fused (reciprocal rank fusion), then scope order.

Each ranker (the lexical index; a semantic one plugs in the same way) gives its documents best first.
``fuse`` scores each document by the sum of ``weight / (K + rank)`` over the lists that hold it (a
list's weight: 1 unless given), keeps the
best ``limit``, then orders those by scope: the current project's memory first, then this person's
(the personal store, or memory no store syncs), then team memory (every other store); within a scope
by fused score, newer before older at equal score. With a single list the fused order is that list's.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memsync.config.file import PERSONAL_STORE
from memsync.projects.identity import project_key
from memsync.recall.documents import Document

# The usual constant of reciprocal rank fusion: a list's first places count, its tail barely does.
K = 60


@dataclass(frozen=True)
class Vantage:
    """Where recall is asked from: the project checkout (the working directory) and its key in store
    paths (``projects/<key>/...``), both None outside a project."""

    project: Path | None = None
    key: str | None = None

    def tier(self, doc: Document) -> int:
        """0 for the current project's memory, 1 for this person's, 2 for a team's."""
        if self.project is not None and str(doc.file).startswith(f"{self.project}{os.sep}"):
            return 0
        if self.key is not None:
            store_path = doc.store_file
            if doc.scope == f"project:{self.key}" or (
                store_path is not None and store_path.startswith(f"projects/{self.key}/")
            ):
                return 0
        return 1 if doc.source.store in (None, PERSONAL_STORE) else 2


@functools.cache
def _vantage_of(cwd: str) -> Vantage:
    folder = Path(cwd)
    # A project is a folder with its own git checkout (``.git``) among the working directory's ancestors.
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists() and candidate != Path.home():
            return Vantage(candidate, project_key(candidate))
    return Vantage()


def here(cwd: Path | None = None) -> Vantage:
    """The vantage of ``cwd`` (default: the working directory), looked up once per directory and
    process."""
    try:
        return _vantage_of(str(cwd) if cwd is not None else os.getcwd())
    except OSError:
        return Vantage()


@dataclass(frozen=True)
class Ranked:
    """A document in the final order with its fused score (higher is better); ``by_meaning`` when only
    the semantic list held it (no word of the query is in it)."""

    doc: Document
    score: float
    by_meaning: bool = False


def fuse(
    lists: Sequence[Sequence[Document]], limit: int, vantage: Vantage, weights: Sequence[float] = ()
) -> list[Ranked]:
    """The at most ``limit`` best documents of ``lists`` (each best first) by reciprocal rank fusion,
    each list counting by its weight in ``weights`` (1 for a list without one), in scope order (module
    doc). Pure."""
    scores: dict[tuple[str, str], float] = {}
    docs: dict[tuple[str, str], Document] = {}
    for number, ranked in enumerate(lists):
        weight = weights[number] if number < len(weights) else 1.0
        for place, doc in enumerate(ranked, start=1):
            scores[doc.key] = scores.get(doc.key, 0.0) + weight / (K + place)
            docs.setdefault(doc.key, doc)
    # sorted() is stable: among equal scores the first list's order (ties already newer first) holds.
    best = sorted(scores, key=lambda key: -scores[key])[:limit]
    newest = sorted(best, key=lambda key: docs[key].date or "", reverse=True)
    order = {key: n for n, key in enumerate(newest)}
    tiers = {key: vantage.tier(docs[key]) for key in best}
    best.sort(key=lambda key: (tiers[key], -scores[key], order[key]))
    return [Ranked(docs[key], scores[key]) for key in best]

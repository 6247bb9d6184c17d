"""The recall evaluation: does recall return the entry a question is about, lexical alone and hybrid?

The memory: the shared corpus (../shared/corpus: its two memory files and its two role directories, read
in place) plus two generated memory files (projects orbit and nova) holding the entries of
bench/recall_eval_cases.py: plain facts, entries superseded by a correction, tombstoned and expired
entries, the same fact in two projects, near-duplicates. The questions: each case's paraphrase (written
by a person) and a keyword question made of the answer's three rarest words; for the corpus, a keyword
question for every live entry of its memory files and the written paraphrases.

Printed for each ranker: recall@1, recall@5, MRR, and how many dead entries (superseded, tombstoned,
expired) came back in any top 5, over all the questions, over the tuning half (the fusion's parameters
were chosen on it) and over the other, held-out half, through recall's own index (memsync/recall/, in
memory): lexical is its BM25 search, hybrid fuses it with its search by meaning (the ``semantic`` extra)
as ``recall`` does.

With ``--session-start``, also the context a session starts with (``session_start``), the queries
being the session's first prompts: how often the session-start context holds an answer in its first
``CONTEXT_CHARS`` characters, and how often it or the first-prompt hook's context does; target: at
least as often as lexical recall@5 finds one.

    python bench/recall_eval.py [--corpus DIR] [--json] [--session-start]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import recall_eval_cases as cases  # noqa: E402

from memsync.recall import embedding  # noqa: E402
from memsync.recall.documents import Document, source_documents  # noqa: E402
from memsync.recall.index import RecallIndex, fts_query  # noqa: E402
from memsync.recall.ranking import Vantage  # noqa: E402
from memsync.recall.search import rank  # noqa: E402
from memsync.tracks.tracked import Tracked  # noqa: E402

CORPUS = Path(os.environ.get("MEMSYNC_CORPUS", REPO.parent / "shared" / "corpus"))
# Every expiry of the corpus and of the generated entries has passed by then; nothing is dated after it.
NOW = datetime(2026, 12, 1, tzinfo=UTC)
TOP = 5
# How deep the lexical list is read for the fusion (recall reads it to its limit).
DEPTH = 10
_WORD = re.compile(r"[^\W_]{4,}")
_STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "were",
        "when",
        "what",
        "which",
        "their",
        "there",
        "they",
        "them",
        "then",
        "than",
        "into",
        "only",
        "also",
        "must",
        "every",
        "never",
        "always",
        "after",
        "before",
        "about",
        "does",
        "should",
        "would",
        "could",
        "been",
        "being",
        "your",
        "more",
        "most",
        "some",
        "such",
        "over",
        "under",
        "same",
        "other",
        "each",
        "both",
        "just",
        "like",
        "here",
        "where",
        "while",
        "because",
        "until",
    ]
)

# The start of the session-start context an answer must be in (what an agent surely reads).
CONTEXT_CHARS = 2000

Ranker = Callable[[str], list[Document]]


@dataclass(frozen=True)
class Query:
    """One question, the ids of the entries that answer it, and where it comes from (``group``)."""

    text: str
    answers: frozenset[str]
    group: str


@dataclass(frozen=True)
class Memory:
    """The evaluation's memory: its sources, questions, and the ids of its dead entries."""

    sources: tuple[Tracked, ...]
    queries: tuple[Query, ...]
    dead: frozenset[str]


@dataclass(frozen=True)
class Score:
    """One ranker's figures over all questions."""

    recall1: float
    recall5: float
    mrr: float
    dead: int
    queries: int


def _id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _entry(text: str, kind: str, scope: str, created: datetime, **extra: object) -> dict[str, object]:
    return {
        "id": _id(scope + text),
        "kind": kind,
        "text": text,
        "scope": scope,
        "tags": [],
        "source": "session:eval",
        "confidence": 0.9,
        "expires_at": None,
        "supersedes": None,
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        **extra,
    }


def _write(path: Path, lines: Sequence[dict[str, object]]) -> None:
    header = {"format": "agent-memory/0.1", "created_at": "2026-09-01T00:00:00Z"}
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [header, *lines]))


def _generated(root: Path) -> tuple[list[Tracked], list[tuple[str, frozenset[str], str]], set[str]]:
    """The two generated memory files; the (paraphrase, answers, group) of their cases; their dead ids."""
    orbit: list[dict[str, object]] = []
    nova: list[dict[str, object]] = []
    asked: list[tuple[str, frozenset[str], str]] = []
    dead: set[str] = set()
    clock = iter(datetime(2026, 9, 2, tzinfo=UTC) + timedelta(hours=n) for n in range(10_000))

    def add(target: list[dict[str, object]], text: str, kind: str = "fact", **extra: object) -> str:
        scope = "project:nova" if target is nova else "project:orbit"
        line = _entry(text, kind, scope, next(clock), **extra)
        target.append(line)
        return str(line["id"])

    for kind, text, question in cases.FACTS:
        asked.append((question, frozenset({add(orbit, text, kind)}), "fact"))
    for old, new, question in cases.SUPERSEDED:
        old_id = add(orbit, old)
        dead.add(old_id)
        asked.append((question, frozenset({add(orbit, new, supersedes=old_id)}), "superseded"))
    for gone, live, question in cases.TOMBSTONED:
        gone_id = add(orbit, gone)
        dead.add(gone_id)
        orbit.append(
            {"id": gone_id, "deleted": True, "created_at": next(clock).strftime("%Y-%m-%dT%H:%M:%SZ")}
        )
        asked.append((question, frozenset({add(orbit, live)}), "tombstoned"))
    for passed, live, question in cases.EXPIRED:
        dead.add(add(orbit, passed, expires_at="2026-10-01T00:00:00Z"))
        asked.append((question, frozenset({add(orbit, live)}), "expired"))
    for here, there, question in cases.TWO_PROJECTS:
        asked.append((question, frozenset({add(orbit, here), add(nova, there)}), "two projects"))
    for one, other, question in cases.NEAR_DUPES:
        asked.append((question, frozenset({add(orbit, one), add(orbit, other)}), "near-duplicate"))
    files = []
    for name, lines in (("orbit.jsonl", orbit), ("nova.jsonl", nova)):
        _write(root / name, lines)
        files.append(Tracked(None, name, root / name, "jsonl"))
    return files, asked, dead


def _corpus(corpus: Path) -> tuple[list[Tracked], dict[str, str], set[str]]:
    """The corpus's sources (read in place), its live entries' texts by id, and its dead ids."""
    sources = [
        Tracked(None, f"jsonl/{p.name}", p, "jsonl") for p in sorted((corpus / "jsonl").glob("*.jsonl"))
    ]
    sources += [Tracked(None, f"skill/{p.name}", p, "role") for p in sorted((corpus / "skill").iterdir())]
    texts: dict[str, str] = {}
    dead: set[str] = set()
    for source in (s for s in sources if s.format == "jsonl"):
        lines = [json.loads(line) for line in source.live.read_text().splitlines()[1:] if line.strip()]
        for line in lines:
            if line.get("deleted"):
                dead.add(line["id"])
            elif line.get("supersedes"):
                dead.add(line["supersedes"])
            if (
                line.get("expires_at")
                and datetime.fromisoformat(line["expires_at"].replace("Z", "+00:00")) <= NOW
            ):
                dead.add(line["id"])
        texts.update({line["id"]: line["text"] for line in lines if "text" in line})
    for key in dead:
        texts.pop(key, None)
    return sources, texts, dead


def _keywords(text: str, frequency: Counter[str]) -> str:
    """The three rarest words of ``text`` in the memory (ties: the first in the text), in text order."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP))
    rare = sorted(words, key=lambda w: (frequency[w], words.index(w)))[:3]
    return " ".join(w for w in words if w in rare)


def build(root: Path, corpus: Path | None = CORPUS) -> Memory:
    """The evaluation's memory under ``root`` (the generated files) plus ``corpus`` when it exists."""
    sources, asked, dead = _generated(root)
    corpus_texts: dict[str, str] = {}
    if corpus is not None and (corpus / "jsonl").is_dir():
        more, corpus_texts, corpus_dead = _corpus(corpus)
        sources += more
        dead |= corpus_dead
    docs = live_documents(sources)
    frequency: Counter[str] = Counter(w for doc in docs for w in {w.lower() for w in _WORD.findall(doc.body)})
    texts = {doc.id: doc.body for doc in docs}
    queries = [Query(question, answers, group) for question, answers, group in asked]
    # A case of two answers is asked by the words of the smaller id's: the same question in every run
    # (a set's order changes with the string hash seed).
    queries += [
        Query(_keywords(texts[min(answers)], frequency), answers, f"{group}, keywords")
        for _, answers, group in asked
    ]
    for key, text in corpus_texts.items():
        queries.append(Query(_keywords(text, frequency), _same_text(docs, key, text), "corpus, keywords"))
    for key, question in cases.CORPUS if corpus_texts else ():
        queries.append(Query(question, _same_text(docs, key, corpus_texts[key]), "corpus"))
    return Memory(tuple(sources), tuple(queries), frozenset(dead))


def _same_text(docs: Sequence[Document], key: str, text: str) -> frozenset[str]:
    """The entry ``key`` and the curated notes it was made from (the corpus's entries are the first
    sentence of a note's description): each answers a question about it."""
    start = text[:60]
    return frozenset({key} | {doc.id for doc in docs if doc.type == "curated" and start in doc.title})


def live_documents(sources: Sequence[Tracked]) -> list[Document]:
    """What recall can return from ``sources`` at ``NOW``."""
    return [doc for source in sources for doc in source_documents(source) if doc.live_at(NOW)]


def lexical(index: RecallIndex) -> Ranker:
    """Recall's keyword search of ``index`` (each query ranked once: hybrid reads the same lists)."""

    @functools.cache
    def ranked(query: str) -> list[Document]:
        return [hit.doc for hit in index.search(fts_query(query), now=NOW, limit=DEPTH)]

    return ranked


def hybrid(index: RecallIndex) -> Ranker:
    """Recall's hybrid ranking (``search.rank`` with the semantic extra), each query ranked once (every
    subset of the questions reads the same lists)."""

    @functools.cache
    def ranked(query: str) -> list[Document]:
        return [item.doc for item in rank(index, query, now=NOW, vantage=Vantage(), limit=DEPTH)]

    return ranked


def score(memory: Memory, ranker: Ranker) -> Score:
    """``ranker``'s figures over the questions of ``memory``."""
    first = top = 0
    reciprocal = 0.0
    dead = 0
    for query in memory.queries:
        ids = [doc.id for doc in ranker(query.text)[:TOP]]
        dead += sum(key in memory.dead for key in ids)
        place = next((n for n, key in enumerate(ids, start=1) if key in query.answers), None)
        if place is not None:
            first += place == 1
            top += 1
            reciprocal += 1.0 / place
    count = len(memory.queries)
    return Score(first / count, top / count, reciprocal / count, dead, count)


def paraphrased(query: Query) -> bool:
    """Whether ``query`` was written by a person (``recall_eval_cases``), not drawn from its answer's
    rarest words: the questions search by meaning is for."""
    return not query.group.endswith(", keywords")


def held_out(query: Query) -> bool:
    """Whether ``query`` is of the held-out half (by a hash of its text): recall's fusion parameters
    (``memsync.recall.search``) were chosen on the other half only."""
    return hashlib.sha256(query.text.encode()).digest()[-1] % 2 == 1


def evaluate(root: Path, corpus: Path | None = CORPUS) -> dict[str, Score]:
    """The figures of each ranker available here: lexical, and hybrid when the extra is installed, over
    all the questions, over the tuning half and the held-out half apart (``held_out``: a change of the
    fusion is kept only when it does better on both), and over the paraphrases and the keyword
    questions apart (``paraphrased``): keywords are found by either ranker, so the paraphrases are
    where a better model or ranking shows."""
    memory = build(root, corpus)
    subsets: dict[str, Callable[[Query], bool]] = {
        "tuning half": lambda query: not held_out(query),
        "held-out half": held_out,
        "paraphrases": paraphrased,
        "keywords": lambda query: not paraphrased(query),
    }
    with RecallIndex.in_memory(memory.sources) as index:
        rankers = {"lexical": lexical(index)}
        if embedding.available():
            rankers["hybrid"] = hybrid(index)
        found = {name: score(memory, ranker) for name, ranker in rankers.items()}
        for label, keep in subsets.items():
            part = Memory(memory.sources, tuple(filter(keep, memory.queries)), memory.dead)
            found |= {f"{name}, {label}": score(part, ranker) for name, ranker in rankers.items()}
    return found


def session_start(root: Path, corpus: Path | None = CORPUS, every: int = 1) -> tuple[float, float]:
    """How the context a session starts with answers the evaluation's queries, each taken as the
    session's first prompt, on a machine (``tests.support.peers.Peer``) tracking the evaluation's memory
    files and role directories, all committed by one `memsync sync`, at its first session: the share
    of queries whose answer is in the first ``CONTEXT_CHARS`` characters of the session-start context
    (`memsync hook session-start`, a real subprocess: given no prompt, one context for every query),
    and the share whose answer is there or in the first-prompt context (`memsync hook prompt-context`,
    a real subprocess per query, each a new session; at most ``CONTEXT_CHARS`` characters). An answer
    is there when the start of its text (as the contexts quote it) is. ``every``: take every n-th query
    only (a hook process each is minutes for all of them on a loaded machine)."""
    from memsync.formats.quoted import neutralise
    from tests.support.helpers import bare_remote
    from tests.support.peers import Peer

    (root / "memory").mkdir(parents=True)
    if corpus is not None and corpus.is_dir():  # tracked from a copy: a sync may write to what it tracks
        corpus = Path(shutil.copytree(corpus, root / "corpus"))
    memory = build(root / "memory", corpus)
    tracks = {str(source.live): source.store_path for source in memory.sources}
    peer = Peer.create(root, "eval", bare_remote(root / "remote.git"), extra_tracks=tracks)
    synced = peer.cli("sync", timeout=600)
    assert synced.returncode in (0, 75), synced.stderr

    def hook(action: str, event: str, **fields: str) -> str:
        payload = {"session_id": "eval", "cwd": str(root), "hook_event_name": event, **fields}
        done = subprocess.run(
            [sys.executable, "-P", "-m", "memsync.hook", action],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env={**os.environ, **peer.env},
            cwd=root,
            timeout=120,
            check=True,
        )
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else ""

    shown = hook("session-start", "SessionStart", source="startup")[:CONTEXT_CHARS]
    texts = {doc.id: doc.body for doc in live_documents(memory.sources)}

    def there(key: str, context: str) -> bool:
        quoted = json.dumps(neutralise(texts[key], 60), ensure_ascii=False)[1:-1]
        return quoted[:40] in context

    queries = memory.queries[::every]
    alone = with_prompt = 0
    for number, query in enumerate(queries):
        if any(there(key, shown) for key in query.answers):
            alone += 1
            with_prompt += 1
            continue
        prompted = hook("prompt-context", "UserPromptSubmit", session_id=f"eval-{number}", prompt=query.text)
        assert len(prompted) <= CONTEXT_CHARS, len(prompted)
        with_prompt += any(there(key, prompted) for key in query.answers)
    return alone / len(queries), with_prompt / len(queries)


def report(figures: dict[str, Score]) -> tuple[list[str], bool]:
    """The lines printed for ``figures``, and whether every target is met (True without the extra: only
    lexical is measured, and it has no target but dead == 0)."""
    lines = [
        f"{name:8} queries {s.queries}  recall@1 {s.recall1:.3f}  recall@{TOP} {s.recall5:.3f}  "
        f"MRR {s.mrr:.3f}  dead returned {s.dead}"
        for name, s in figures.items()
    ]
    checks = [("dead returned == 0", all(s.dead == 0 for s in figures.values()))]
    if "hybrid" in figures:
        gain = figures["hybrid"].recall5 - figures["lexical"].recall5
        checks += [
            (f"hybrid recall@{TOP} >= 0.90", figures["hybrid"].recall5 >= 0.90),
            (f"hybrid recall@{TOP} >= lexical + 0.08 (gain {gain:+.3f})", gain >= 0.08 - 1e-9),
        ]
    else:
        lines.append(f"hybrid: not measured, the semantic extra is not installed ({embedding.INSTALL_HINT})")
    lines += [f"{'PASS' if ok else 'FAIL'}  {label}" for label, ok in checks]
    return lines, all(ok for _, ok in checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--session-start",
        action="store_true",
        help="also measure the session-start and first-prompt contexts (minutes)",
    )
    args = parser.parse_args()
    if not (args.corpus / "jsonl").is_dir():
        print(f"recall_eval: no corpus at {args.corpus}; generated entries only", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        figures = evaluate(Path(tmp), args.corpus)
        context = session_start(Path(tmp) / "session", args.corpus) if args.session_start else None
    if args.json:
        print(json.dumps({name: vars(s) for name, s in figures.items()}, indent=2))
        return 0
    lines, ok = report(figures)
    if context is not None:
        lexical5 = figures["lexical"].recall5
        alone, with_prompt = context
        met = with_prompt >= lexical5
        ok = ok and met
        lines += [
            f"session-start context alone: an answer in its first {CONTEXT_CHARS:,} characters for "
            f"{alone:.3f} of the queries",
            f"session-start context + first-prompt context: an answer for {with_prompt:.3f} of the queries, "
            f"lexical recall@{TOP} {lexical5:.3f}: {'PASS' if met else 'MISSED'}",
        ]
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

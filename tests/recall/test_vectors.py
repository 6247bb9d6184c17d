"""Search by meaning through the kept index: each document gets its vector when it is indexed (a writer's
remember, a rebuild), not at the next semantic search; a process that keeps the vectors between recalls
sees every later write (a new entry found by meaning, a forgotten one gone)."""

from __future__ import annotations

import contextlib
import io
import sqlite3
import warnings
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.cli import main
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.parse import read_memory
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall import embedding
from memsync.recall.index import RecallIndex, index_path, size_of
from memsync.recall.search import kept_index
from memsync.tracks.tracked import Tracked, tracked_memory
from tests.support.helpers import run_cli
from tests.support.peers import entry_line

pytestmark = pytest.mark.skipif(not embedding.available(), reason="the semantic extra is not installed")


def _ok(*args: str) -> str:
    """``memsync ARGS`` in-process through the CLI edge; its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code == 0
    return out.getvalue()


def _unembedded() -> list[str]:
    with contextlib.closing(sqlite3.connect(index_path())) as db:
        rows = db.execute(
            "SELECT d.body FROM docs d LEFT JOIN vectors v ON v.rowid = d.rowid "
            "WHERE v.model IS NOT (SELECT id FROM models WHERE name = ?)",
            (embedding.MODEL,),
        ).fetchall()
    return [row[0] for row in rows]


def test_remember_gives_the_new_entry_its_vector_at_once(home: Path) -> None:
    _ok("init")
    _ok("remember", "The harbor gate opens at six.", "--kind", "fact")
    _ok("recall", "harbor")  # builds the index
    assert _unembedded() == []
    _ok("remember", "Lanterns are lit at dusk on the pier.", "--kind", "fact")
    with contextlib.closing(sqlite3.connect(index_path())) as db:
        bodies = [row[0] for row in db.execute("SELECT body FROM docs")]
    assert "Lanterns are lit at dusk on the pier." in bodies
    assert _unembedded() == []


def test_vectors_kept_between_recalls_follow_every_write(home: Path) -> None:
    _ok("init")
    for text in ("The harbor gate opens at six.", "Ferries leave from the north quay."):
        _ok("remember", text, "--kind", "fact")
    now = datetime.now(UTC)

    def meant(query: str) -> list[str]:
        with kept_index(tracked_memory(None)) as index:
            return [hit.doc.body for hit in index.similar(query, now=now, limit=3, least=0.99)]

    assert meant("The harbor gate opens at six.") == ["The harbor gate opens at six."]
    _ok("remember", "Lanterns are lit at dusk on the pier.", "--kind", "fact")
    assert meant("Lanterns are lit at dusk on the pier.") == ["Lanterns are lit at dusk on the pier."]
    gone = next(e.id for e in read_memory(default_memory_path()).view(now) if e.text.startswith("The harbor"))
    _ok("forget", gone)
    assert meant("The harbor gate opens at six.") == []


def test_a_sync_leaves_the_new_vectors_to_the_next_recall(home: Path) -> None:
    """The daemon's cycle (here one `memsync sync` process) indexes what changed but loads no model (it
    takes hundreds of MB resident): the next recall gives the new entry its vector."""
    _ok("init")
    _ok("remember", "The harbor gate opens at six.", "--kind", "fact")
    _ok("recall", "harbor")
    MemoryFile(default_memory_path()).remember(NewEntry("Lanterns are lit at dusk on the pier.", "fact"))
    done = run_cli("sync")
    assert done.returncode in (0, 75), done.stderr
    assert _unembedded() == ["Lanterns are lit at dusk on the pier."]
    _ok("recall", "lanterns")
    assert _unembedded() == []


_WORDS = [
    "deploy",
    "staging",
    "database",
    "cache",
    "review",
    "branch",
    "release",
    "token",
    "schema",
    "migration",
    "queue",
    "worker",
    "timeout",
    "backup",
    "invoice",
    "customer",
    "upload",
    "session",
    "replica",
    "index",
]


@pytest.mark.slow
def test_the_index_with_its_vectors_stays_within_twice_the_memory_it_covers(tmp_path: Path) -> None:
    """10,000 short entries (as bench/recall.py's), each with its vector: 256 dimensions stored in four
    bits each, 128 bytes per document (one byte each made such an index 2.65 times the memory; a
    rebuild and the model's 10,000 vectors take about 13 s on a loaded machine: slow tier)."""
    texts = [" ".join(_WORDS[(n * k + n // 7) % len(_WORDS)] for k in (1, 3, 7, 11)) for n in range(10_000)]
    memory = tmp_path / "memory.jsonl"
    memory.write_bytes(
        b'{"format": "agent-memory/0.1", "created_at": "2026-09-01T00:00:00Z"}\n'
        + b"".join(entry_line(f"{text} item {n}.") for n, text in enumerate(texts))
    )
    where = tmp_path / "recall.sqlite"
    with RecallIndex.rebuild(where, [Tracked(None, "memory.jsonl", memory, "jsonl")]) as index:
        hits = index.similar(texts[7], now=datetime.now(UTC), limit=1)
    # Every document has its vector: asked by its words, an entry is found with a cosine near 1.
    assert hits and hits[0].doc.body.startswith(f"{texts[7]} item ") and hits[0].score >= 0.95
    assert size_of(where) <= 2 * memory.stat().st_size


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=32), st.integers(-149, 127))
def test_a_stored_vector_keeps_its_direction(components: list[float], exponent: int) -> None:
    """Any finite vector, of float32's largest or smallest (subnormal) components too, is stored
    without a numpy warning (an overflow once turned such a vector into garbage) and keeps its direction.
    The components given are repeated to the vector's length (cheap to draw), then scaled by 2**exponent."""
    import numpy as np

    unscaled = np.resize(np.asarray(components, dtype=np.float64), embedding.DIMENSIONS)
    vector = (unscaled * 2.0**exponent).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = embedding.from_blobs([embedding.to_blob(vector)])[0]
    scaled = vector.astype(np.float64) / max(float(np.abs(vector).max()), 1e-300)
    length = float(np.linalg.norm(scaled))
    if length == 0:
        assert not stored.any()
        return
    # The cosine with the original: four bits per component keep the direction of any vector.
    assert float(stored @ (scaled / length)) >= 0.9
    # A blob of another size (another model, a torn write) is similar to nothing.
    assert not embedding.from_blobs([embedding.to_blob(vector)[:-1]]).any()


def test_a_vector_without_a_direction_is_stored_as_similar_to_nothing() -> None:
    """An empty text embeds as the zero vector; it, and a vector with a NaN or infinite
    component (``embed`` never gives one), are stored as the zero vector: found by no query, without a
    numpy warning."""
    import numpy as np

    empty = embedding.embed([""])[0]
    assert not empty.any()
    broken = [np.r_[np.float32(np.inf), empty[1:]], np.r_[np.float32(np.nan), np.ones(255, np.float32)]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        blobs = [embedding.to_blob(vector) for vector in (empty, *broken)]
    assert blobs == [embedding.to_blob(np.zeros(embedding.DIMENSIONS, np.float32))] * 3
    stored = embedding.from_blobs(blobs)
    assert not stored.any()
    assert embedding.nearest(embedding.embed(["harbor gate"])[0], stored, 3) == []

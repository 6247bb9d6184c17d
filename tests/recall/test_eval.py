"""The recall evaluation (bench/recall_eval.py) in the quick tier: a few hundred questions with known
answers over the shared corpus plus generated entries; no dead entry ever returned, lexical recall above
a floor, and the hybrid ranking (where the semantic extra is installed) measured against its targets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memsync.recall import embedding
from tests.support.helpers import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))

import recall_eval

# Lexical recall@5 measured 0.687 over the corpus and the generated cases; a drop below this is a regression.
LEXICAL_FLOOR = 0.62

needs_extra = pytest.mark.skipif(not embedding.available(), reason="the semantic extra is not installed")


@pytest.fixture(scope="module")
def figures(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, recall_eval.Score]:
    return recall_eval.evaluate(tmp_path_factory.mktemp("eval"), corpus)


def test_the_questions_cover_every_case(corpus: Path, tmp_path: Path) -> None:
    """At least 300 questions, of every group the evaluation promises, each with an answer that exists."""
    memory = recall_eval.build(tmp_path, corpus)
    groups = {query.group for query in memory.queries}
    assert len(memory.queries) >= 300
    for group in ("fact", "superseded", "tombstoned", "expired", "two projects", "near-duplicate", "corpus"):
        assert group in groups and f"{group}, keywords" in groups
    ids = {doc.id for doc in recall_eval.live_documents(memory.sources)}
    assert all(query.answers and query.answers <= ids for query in memory.queries)
    # Dead entries exist (else "none returned" would prove nothing) and none is an answer.
    assert len(memory.dead) >= 25
    assert not memory.dead & set().union(*(query.answers for query in memory.queries))


def test_lexical_recall_returns_no_dead_entry_and_keeps_its_level(
    figures: dict[str, recall_eval.Score],
) -> None:
    lexical = figures["lexical"]
    assert lexical.dead == 0
    assert lexical.recall5 >= LEXICAL_FLOOR
    assert lexical.recall1 <= lexical.recall5 and lexical.recall1 <= lexical.mrr <= lexical.recall5


@needs_extra
def test_hybrid_returns_no_dead_entry_and_beats_lexical_by_eight_points(
    figures: dict[str, recall_eval.Score],
) -> None:
    """Measured: hybrid recall@5 0.791 against lexical 0.687 (wordllama's 256 dimensions; the former
    64-dimension model gave 0.716)."""
    hybrid, lexical = figures["hybrid"], figures["lexical"]
    assert hybrid.dead == 0
    assert hybrid.recall5 - lexical.recall5 >= 0.08 - 1e-9
    assert hybrid.mrr > lexical.mrr


@needs_extra
@pytest.mark.xfail(
    strict=True,
    reason="the strongest static model found whose weights ship inside a package (wordllama, 256 "
    "dimensions) reaches 0.791 (tuning half 0.787, held-out 0.795): the paraphrased questions share almost "
    "no word with their answers, and late interaction over its token vectors or query expansion from its "
    "vocabulary did no better on both halves (docs/design.md)",
)
def test_hybrid_reaches_recall_at_5_of_090(figures: dict[str, recall_eval.Score]) -> None:
    assert figures["hybrid"].recall5 >= 0.90


def test_the_figures_are_broken_down_into_paraphrases_and_keyword_questions(
    figures: dict[str, recall_eval.Score],
) -> None:
    """Each ranker's figures over the written paraphrases and over the keyword questions apart: together
    they are all the questions."""
    for name in ("lexical", "hybrid") if embedding.available() else ("lexical",):
        whole, written, keywords = (figures[f"{name}{part}"] for part in ("", ", paraphrases", ", keywords"))
        assert written.queries >= 100 and written.queries + keywords.queries == whole.queries
        found = written.recall5 * written.queries + keywords.recall5 * keywords.queries
        assert found == pytest.approx(whole.recall5 * whole.queries)
    # Keywords drawn from the answer find it; a paraphrase mostly does not.
    assert figures["lexical, keywords"].recall5 >= 0.95 > 0.5 > figures["lexical, paraphrases"].recall5


def test_the_figures_are_given_for_the_tuning_half_and_the_held_out_half(
    figures: dict[str, recall_eval.Score],
) -> None:
    """A change of the fusion is judged on both halves: each ranker's figures over the half its
    parameters were chosen on and over the other; together they are all the questions, each about half."""
    lines, _ = recall_eval.report(figures)
    for name in ("lexical", "hybrid") if embedding.available() else ("lexical",):
        whole, tuning, held = (figures[f"{name}{part}"] for part in ("", ", tuning half", ", held-out half"))
        assert tuning.queries + held.queries == whole.queries
        assert min(tuning.queries, held.queries) >= 0.4 * whole.queries
        found = tuning.recall5 * tuning.queries + held.recall5 * held.queries
        assert found == pytest.approx(whole.recall5 * whole.queries)
        assert tuning.dead + held.dead == whole.dead
        assert any(line.startswith(f"{name}, tuning half queries {tuning.queries} ") for line in lines)


@needs_extra
def test_hybrid_finds_each_keyword_question_lexical_finds_and_more_paraphrases(
    figures: dict[str, recall_eval.Score],
) -> None:
    """Measured: keywords 1.000 both; paraphrases 0.481 hybrid against 0.222 lexical (the semantic list
    alone crowded out 4 of the 200 keyword answers, 0.980, before the documents holding every word of
    the query were fused in)."""
    assert figures["hybrid, keywords"].recall5 >= figures["lexical, keywords"].recall5
    assert figures["hybrid, paraphrases"].recall5 >= figures["lexical, paraphrases"].recall5 + 0.2


def test_the_bench_prints_every_figure(figures: dict[str, recall_eval.Score]) -> None:
    lines, _ = recall_eval.report(figures)
    text = "\n".join(lines)
    assert "lexical  queries" in text and "PASS  dead returned == 0" in text
    for figure in ("recall@1", "recall@5", "MRR"):
        assert figure in text
    if embedding.available():
        assert "hybrid   queries" in text and "hybrid recall@5 >= 0.90" in text
    else:
        assert "hybrid: not measured" in text


@pytest.mark.slow
def test_the_session_start_context_is_measured_through_the_hook(corpus: Path, tmp_path: Path) -> None:
    """The session-start figures come from real hooks' contexts over the evaluation's memory: some
    answers are in the session-start context's first 2,000 characters, not all (a context that holds no
    prompt cannot); the first-prompt hook's context, given each query, adds most of the rest. Every 10th
    query: a hook process per query (the benchmark runs them all)."""
    alone, with_prompt = recall_eval.session_start(tmp_path, corpus, every=10)
    assert 0 < alone < 0.5 and with_prompt > 0.5

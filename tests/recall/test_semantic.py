"""Search by meaning (the semantic extra): recall finds an entry asked for in other words, with the network
unreachable; `memsync dupes` lists rewordings and deletes nothing; remember names a near-duplicate;
doctor says which recall this machine has; the kept index never returns a dead entry by meaning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.formats.jsonl.location import default_memory_path
from memsync.recall import embedding
from memsync.recall.index import RecallIndex
from memsync.tracks.tracked import Tracked
from tests.support.helpers import cli_main

pytestmark = pytest.mark.skipif(not embedding.available(), reason="the semantic extra is not installed")

FACTS = (
    "The orbit API runs on PostgreSQL 15 with pgbouncer in transaction mode.",
    "No production deploys on Friday; releases wait until Monday morning.",
    "Alice prefers code review comments written as questions, not orders.",
    "Logs ship to Loki and are retained for 30 days.",
    "Image uploads are resized by a Lambda function and stored in the media bucket.",
    "Email is sent through Postmark; templates are in the notifications service.",
)


def _write_memory(home: Path, texts: tuple[str, ...]) -> None:
    """The default memory file holding ``texts`` as live entries (written directly: a CLI start per
    entry would load the model each time)."""
    folder = home / ".agent-memory"
    folder.mkdir(parents=True, exist_ok=True)
    header = {"format": "agent-memory/0.1", "created_at": "2026-09-01T00:00:00Z"}
    lines: list[dict[str, object]] = [
        {
            "id": f"f{n:011d}",
            "kind": "fact",
            "text": text,
            "scope": "global",
            "tags": [],
            "source": "user",
            "confidence": 1.0,
            "expires_at": None,
            "supersedes": None,
            "created_at": f"2026-09-02T00:{n:02d}:00Z",
        }
        for n, text in enumerate(texts)
    ]
    default_memory_path().write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))


def _remember(home: Path, text: str) -> str:
    result = cli_main("remember", text)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _memory_file(home: Path) -> Path:
    return next((home / ".agent-memory").glob("*.jsonl"))


def test_recall_finds_what_is_meant_with_the_network_unreachable(home: Path) -> None:
    """No word of the question is in the answer: keywords alone find nothing, meaning finds it first."""
    question, answer = "which provider delivers our outgoing mail?", FACTS[5]
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], check=False).returncode:
        pytest.skip("unshare -n (a network namespace without interfaces) is not available here")
    _write_memory(home, FACTS)
    result = cli_main("recall", "--json", question)
    assert result.returncode == 0, result.stderr
    # The same query again, in a network namespace with no interface at all: nothing is downloaded.
    offline = subprocess.run(
        ["unshare", "-n", sys.executable, "-m", "memsync", "recall", "--json", question],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    assert offline.returncode == 0, offline.stderr
    for out in (result.stdout, offline.stdout):
        assert json.loads(out.splitlines()[0])["text"] == answer


def test_dupes_lists_rewordings_with_their_similarity_and_deletes_nothing(home: Path) -> None:
    first = "The staging deploy happens automatically after each merge to main."
    second = "Every merge to main is deployed to staging automatically."
    _write_memory(home, (first, *FACTS, second))
    memory = _memory_file(home)
    before = memory.read_bytes()
    result = cli_main("dupes")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    similarity, one, other = lines[0].split()
    assert 0.8 <= float(similarity) <= 1.0
    texts = {json.loads(line)["id"]: json.loads(line)["text"] for line in before.decode().splitlines()[1:]}
    assert {texts[one], texts[other]} == {first, second}
    assert {lines[1].strip(), lines[2].strip()} == {first, second}
    assert lines[3] == "1 pair; supersede one of each: memsync remember TEXT --supersedes ID"
    assert memory.read_bytes() == before


def test_dupes_names_an_unknown_store(home: Path) -> None:
    result = cli_main("dupes", "--store", "nope")
    assert result.returncode == 1
    assert (
        result.stderr.startswith("memsync: dupes: no store is called 'nope'")
        and "Traceback" not in result.stderr
    )


def test_remember_writes_a_near_duplicate_and_names_the_entry_it_repeats(home: Path) -> None:
    first = _remember(home, "The staging deploy happens automatically after each merge to main.")
    old = first.split()[1]
    assert "similar to" not in first
    second = _remember(home, "Every merge to main is deployed to staging automatically.")
    new = second.split()[1]
    assert f"; similar to {old} (0.8" in second
    assert f"forget {old}, or write with --supersedes {old} next time" in second
    ids = [json.loads(line)["id"] for line in _memory_file(home).read_text().splitlines()[1:]]
    assert ids == [old, new]
    # An unrelated entry gets no hint.
    assert "similar to" not in _remember(home, FACTS[2])


def test_doctor_says_recall_searches_by_meaning(home: Path) -> None:
    result = cli_main("doctor")
    assert f"OK   recall: keywords and meaning ({embedding.MODEL})" in result.stdout


_NOW = datetime(2026, 12, 1, tzinfo=UTC)
_WORDS = st.sampled_from(FACTS).map(lambda fact: fact.split()[:6]).map(" ".join)
_FATES = st.sampled_from(["live", "tombstoned", "superseded", "expired"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.tuples(_WORDS, _FATES), min_size=1, max_size=12), query=_WORDS)
def test_search_by_meaning_never_returns_a_dead_entry(
    tmp_path: Path, entries: list[tuple[str, str]], query: str
) -> None:
    """Whatever the memory, the kept index's search by meaning returns live entries only."""
    lines: list[dict[str, object]] = []
    dead: set[str] = set()
    for n, (text, fate) in enumerate(entries):
        key = f"e{n:04d}"
        created = (_NOW - timedelta(days=60, hours=-n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        expires = "2026-11-01T00:00:00Z" if fate == "expired" else None
        lines.append(
            {
                "id": key,
                "kind": "fact",
                "text": text,
                "scope": "global",
                "tags": [],
                "source": "user",
                "confidence": 1.0,
                "expires_at": expires,
                "supersedes": None,
                "created_at": created,
            }
        )
        if fate == "tombstoned":
            lines.append({"id": key, "deleted": True, "created_at": created})
        if fate == "superseded":
            lines.append({**lines[-1], "id": f"s{n:04d}", "supersedes": key, "text": f"{text} now"})
        if fate != "live":
            dead.add(key)
    memory = tmp_path / f"m{len(list(tmp_path.iterdir()))}.jsonl"
    header = {"format": "agent-memory/0.1", "created_at": "2026-09-01T00:00:00Z"}
    memory.write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))
    with RecallIndex.in_memory([Tracked(None, memory.name, memory, "jsonl")]) as index:
        found = index.similar(query, now=_NOW, limit=100)
    assert not {hit.doc.id for hit in found} & dead


def test_the_model_is_mapped_from_its_wheel_as_stored_and_embeds_as_when_read_whole() -> None:
    """The token vectors are mapped from the installed safetensors file (float16, as stored: a process
    reads the pages of the tokens it embeds), and a text's vector is the one the whole file read and
    widened to float32 gives, to the bit."""
    import numpy as np
    from safetensors.numpy import load_file

    tokenizer, vectors = embedding._model()
    assert isinstance(vectors, np.memmap) and vectors.dtype == np.float16 and vectors.shape == (32000, 256)
    weights = embedding._folder()
    assert weights is not None
    whole = load_file(str(weights.joinpath(*embedding._WEIGHTS)))["embedding.weight"].astype(np.float32)
    texts = [*FACTS, "", "🙂", "x" * 5000]
    expected = np.zeros((len(texts), embedding.DIMENSIONS), dtype=np.float32)
    encoded = tokenizer.encode_batch(
        [text[: embedding.MAX_CHARS] for text in texts], add_special_tokens=False
    )
    for row, tokens in enumerate(encoded):
        if tokens.ids:
            expected[row] = whole[np.asarray(tokens.ids) % len(whole)].mean(axis=0)
    norms = np.linalg.norm(expected, axis=1, keepdims=True)
    expected = (expected / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    assert np.array_equal(embedding.embed(texts), expected)


def test_weights_that_are_not_the_models_are_refused(tmp_path: Path) -> None:
    """A weights file of another shape, or torn short of its stated size, is refused (ValueError, which
    ``embed`` reports as unusable model files), never read past its end."""
    narrow = tmp_path / "narrow.safetensors"
    header = json.dumps({"embedding.weight": {"dtype": "F16", "shape": [4, 8], "data_offsets": [0, 64]}})
    narrow.write_bytes(len(header).to_bytes(8, "little") + header.encode() + bytes(64))
    with pytest.raises(ValueError, match="not 256 wide"):
        embedding._weights(narrow)
    torn = tmp_path / "torn.safetensors"
    header = json.dumps({"embedding.weight": {"dtype": "F16", "shape": [4, 256], "data_offsets": [0, 2048]}})
    torn.write_bytes(len(header).to_bytes(8, "little") + header.encode() + bytes(100))
    with pytest.raises(ValueError):
        embedding._weights(torn)


def test_an_entry_holding_every_word_of_the_query_is_not_crowded_out_by_meaning(home: Path) -> None:
    """A keyword search keeps its answer with the extra: the one entry holding each word of the query is
    among the first five, though six entries holding none of its words mean something nearer the query
    (cosine 0.15 to 0.37 against 0.04) and fill the semantic list."""
    answer = (
        "Release checklist: bump the version, tag, publish the wheel and update the changelog; the smoke "
        "test only checks that the manifest is well formed enough to parse."
    )
    near = (
        "Good shape is sufficient here.",
        "The shape is fine and sufficient.",
        "Is it good? Shaped fine, quite sufficient.",
        "Properly shaped, adequate, sufficient.",
        "Nicely structured and adequate.",
        "Reasonably shaped, adequately so.",
    )
    _write_memory(home, (*near, *FACTS, answer))
    result = cli_main("recall", "--json", "--limit", "5", "well formed enough")
    assert result.returncode == 0, result.stderr
    texts = [json.loads(line)["text"] for line in result.stdout.splitlines()]
    assert answer in texts, texts


def test_a_hit_that_holds_no_word_of_the_query_says_it_was_found_by_meaning(home: Path) -> None:
    """Meaning always finds something "closest", even for nonsense: each hit says whether it holds a word
    of the query, and a query no text holds a word of says so before its hits."""
    _write_memory(home, FACTS)
    nonsense = cli_main("recall", "qwxzv plorkt")
    assert nonsense.returncode == 0, nonsense.stderr
    assert "no text holds a word of 'qwxzv plorkt'; the closest in meaning:" in nonsense.stderr
    shown = [line for line in nonsense.stdout.splitlines() if not line.startswith("    ")]
    assert shown and all(line.endswith("(by meaning)") for line in shown), shown
    worded = cli_main("recall", "--json", "Friday deploys")
    assert worded.returncode == 0, worded.stderr
    hits = [json.loads(line) for line in worded.stdout.splitlines()]
    flags = {hit["text"]: hit["by_meaning"] for hit in hits}
    assert flags[FACTS[1]] is False, flags
    assert any(flags.values()), flags  # the rest of the list is filled by meaning, and says so
    assert "no text holds a word" not in worded.stderr

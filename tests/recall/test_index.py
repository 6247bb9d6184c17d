"""The kept search index: written at once by remember and forget, brought up to date by the daemon after
a peer's push, rebuilt when missing, corrupt or of another format, and never a source of dead entries
(hypothesis: whatever the memory, recall returns exactly the live entries that match). What a hit shows
(the matching lines of a curated note) and the scope order of hits."""

from __future__ import annotations

import contextlib
import io
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.cli import main
from memsync.formats.jsonl.parse import read_memory
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall.documents import Document
from memsync.recall.index import FORMAT, RecallIndex, fts_query, index_path
from memsync.recall.ranking import Vantage, fuse
from memsync.recall.search import kept_index
from memsync.tracks.tracked import Tracked
from tests.support.helpers import run_cli, wait_for
from tests.support.mcp_client import mcp_session, ok
from tests.support.peers import Peer, running

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _ok(*args: str) -> str:
    """``memsync ARGS`` in-process through the CLI edge (fast); its stdout. The real subprocess path is
    taken by the curated-note, MCP and daemon tests."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code == 0
    return out.getvalue()


def _run(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _indexed(query: str, path: Path | None = None) -> list[str]:
    """The bodies the kept index holds for ``query``, read from the file without refreshing it."""
    with RecallIndex.open(path or index_path()) as index:
        return [hit.doc.body for hit in index.search(fts_query(query), now=datetime.now(UTC), limit=50)]


def test_remember_and_forget_update_the_index_at_once(home: Path) -> None:
    _ok("init")
    _ok("remember", "The harbor gate opens at six.", "--kind", "fact")
    assert "The harbor gate opens at six." in _ok("recall", "harbor")  # builds the index
    added = _ok("remember", "The harbor crane is red.", "--kind", "fact").split()[1]
    assert sorted(_indexed("harbor")) == ["The harbor crane is red.", "The harbor gate opens at six."]
    _ok("forget", added)
    assert _indexed("harbor") == ["The harbor gate opens at six."]


def test_a_corrupt_index_is_rebuilt_and_recall_still_answers(home: Path) -> None:
    _ok("init")
    _ok("remember", "The lighthouse keeper likes tea.", "--kind", "fact")
    _ok("recall", "lighthouse")
    index_path().write_bytes(b"this is no SQLite database at all\n" * 200)
    assert "The lighthouse keeper likes tea." in _ok("recall", "lighthouse keeper")
    assert _indexed("lighthouse") == ["The lighthouse keeper likes tea."]


def test_an_index_of_another_format_is_rebuilt(home: Path) -> None:
    _ok("init")
    _ok("remember", "The ferry leaves at noon.", "--kind", "fact")
    _ok("recall", "ferry")
    with sqlite3.connect(index_path()) as db:
        db.execute("DELETE FROM docs")
        db.execute(f"PRAGMA user_version = {FORMAT + 1}")
    db.close()
    assert "The ferry leaves at noon." in _ok("recall", "ferry")
    with sqlite3.connect(index_path()) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    db.close()
    assert _indexed("ferry") == ["The ferry leaves at noon."]


def test_recall_shows_the_matching_lines_of_a_curated_note(home: Path) -> None:
    role = home / ".agents" / "memory" / "ops"
    role.mkdir(parents=True)
    (role / "deploys.md").write_text(
        "---\nname: Deploys\ndescription: how we ship to production\ntype: project\n---\n\n"
        "Tests run on every branch.\nNo production deploys on Friday afternoons.\nRollbacks use the tag.\n"
    )
    _ok("init", "--track", str(role))
    shown = _run("recall", "friday")
    assert "No production deploys on Friday afternoons." in shown
    assert "how we ship" not in shown and "Tests run" not in shown and "Rollbacks" not in shown


@pytest.mark.slow
def test_the_daemon_indexes_what_a_peer_pushed(tmp_path: Path, remote: Path, peers: list[Peer]) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    peers += [alice, bob]
    assert bob.cli("recall", "anything").returncode == 0  # bob's index exists before alice writes
    bob_index = bob.home / ".local" / "state" / "memsync" / "recall.sqlite"
    with running(alice, bob):
        alice.append_entry("The harbor crane was repainted blue.")
        # Nobody asks bob's recall: his daemon's cycle put the delivered entry into his index.
        wait_for(
            lambda: _indexed("crane", bob_index) == ["The harbor crane was repainted blue."],
            60,
            what="alice's entry in bob's index",
        )


def test_mcp_answers_from_a_fresh_scan_and_builds_the_index_aside(home: Path, tmp_path: Path) -> None:
    _ok("init")
    _ok("remember", "The bakery opens at seven.", "--kind", "fact")
    assert not index_path().exists()

    async def scenario() -> None:
        with (tmp_path / "server.log").open("w") as err:
            async with mcp_session({}, err) as session:
                hits = (await ok(session, "recall", {"query": "bakery"}))["hits"]
                assert [hit["text"] for hit in hits] == ["The bakery opens at seven."]

    anyio.run(scenario)
    wait_for(lambda: index_path().exists(), 30, what="the index built in the background")
    assert _indexed("bakery") == ["The bakery opens at seven."]


def _doc(name: str, store: str | None, live: Path, date: str) -> Document:
    source = Tracked(store, live.name, live, "jsonl")
    return Document(
        id=name, type="entry", kind="fact", title="", body=name, source=source, file=live, date=date
    )


def test_hits_come_project_first_then_personal_then_team(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    team = _doc("team", "team", tmp_path / "team.jsonl", "2026-11-03")
    mine = _doc("mine", "personal", tmp_path / "mine.jsonl", "2026-11-01")
    here = _doc("here", "team", project / ".agents" / "memory" / "x.jsonl", "2026-11-02")
    older = _doc("older", None, tmp_path / "old.jsonl", "2026-10-01")
    ranked = fuse([[team, mine, older, here]], 3, Vantage(project, "shop"))
    assert [item.doc.id for item in ranked] == ["mine", "older", "team"]  # `here` ranked 4th: not kept
    ranked = fuse([[team, mine, older, here]], 4, Vantage(project, "shop"))
    assert [item.doc.id for item in ranked] == ["here", "mine", "older", "team"]
    # Equal scores (fused from two lists in mirrored places): the newer first.
    ranked = fuse([[older, mine], [mine, older]], 2, Vantage())
    assert [item.doc.id for item in ranked] == ["mine", "older"]


@st.composite
def _operations(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    """A sequence of (operation, entry number, hours) on a memory file: remember (expiring after
    ``hours`` when > 0), supersede, forget; entry numbers refer to what was remembered before."""
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["remember", "remember", "supersede", "forget"]),
                st.integers(0, 20),
                st.integers(-48, 48),
            ),
            min_size=1,
            max_size=25,
        )
    )
    return ops


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_operations(), later=st.integers(0, 72))
def test_recall_never_returns_a_dead_entry(tmp_path_factory: pytest.TempPathFactory, ops, later) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("memory")
    path = root / "ada.jsonl"
    memory = MemoryFile(path)
    source = Tracked(None, path.name, path, "jsonl")
    where = root / "recall.sqlite"
    ids: list[str] = []
    for n, (op, target, hours) in enumerate(ops):
        moment = NOW + timedelta(minutes=n)
        expires = None if hours <= 0 else (moment + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
        live = {entry.id for entry in memory.view(moment)} if path.exists() else set()
        if op == "remember" or not ids:
            ids.append(memory.remember(NewEntry(f"harbor note {n}", "fact", expires=expires), now=moment).id)
        elif op == "supersede" and ids[target % len(ids)] in live:
            old = ids[target % len(ids)]
            new = NewEntry(f"harbor correction {n}", expires=expires, supersedes=old)
            ids.append(memory.remember(new, now=moment).id)
        elif op == "forget" and ids[target % len(ids)] in live:
            memory.forget(ids[target % len(ids)])
        # The kept index follows each write (a stat tells it), and answers like the view at any time.
        at = moment + timedelta(hours=later)
        with kept_index([source], path=where) as index:
            found = {hit.doc.id for hit in index.search(fts_query("harbor"), now=at, limit=100)}
        assert found == {entry.id for entry in read_memory(path).view(at)}


def test_close_optimizes_once_and_a_second_close_is_harmless(tmp_path: Path) -> None:
    """SQLite's advice before closing a connection that ran queries: ``PRAGMA optimize`` (it analyzes what
    the planner asked statistics for); closing twice is safe, a use after the close fails as sqlite3 says."""
    live = tmp_path / "ada.jsonl"
    MemoryFile(live).remember(NewEntry("harbor note", "fact"), now=NOW)
    where = tmp_path / "index.sqlite"
    index = RecallIndex.rebuild(where, [Tracked(None, live.name, live, "jsonl")])
    assert [hit.doc.body for hit in index.search(fts_query("harbor"), now=NOW, limit=5)] == ["harbor note"]
    ran: list[str] = []
    index._db.set_trace_callback(ran.append)
    index.close()
    index.close()
    assert ran.count("PRAGMA optimize") == 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        index.search(fts_query("harbor"), now=NOW, limit=5)
    with RecallIndex.open(where) as again:  # the index closed is whole
        assert [hit.doc.body for hit in again.search(fts_query("harbor"), now=NOW, limit=5)] == [
            "harbor note"
        ]

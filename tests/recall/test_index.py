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

from memsync.base.fsio import append_once, atomic_write
from memsync.cli import main
from memsync.formats.jsonl.parse import read_memory
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall import embedding, search
from memsync.recall.documents import Document
from memsync.recall.index import FORMAT, RecallIndex, fts_query, index_path
from memsync.recall.ranking import Vantage, fuse
from memsync.recall.search import Holder, kept_index, recall
from memsync.tracks.resolve import current_config
from memsync.tracks.tracked import Tracked
from tests.support.helpers import run_cli, wait_for
from tests.support.mcp_client import mcp_session, ok
from tests.support.peers import Peer, entry_line, running

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


def test_a_hit_whose_commit_is_recorded_is_credited_without_running_git(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit that introduced an entry never changes: once recorded in the index, a recall credits it
    to that commit's host and date without starting git at all."""
    _ok("init")
    _ok("remember", "The harbor gate opens at six.", "--kind", "fact")
    _ok("sync")
    _ok("recall", "harbor")  # the index built
    config = current_config()
    assert config is not None
    first = [hit.to_json() for hit in recall(config, "harbor", background=True)]
    assert [(hit["text"], hit["host"], hit["committed"]) for hit in first] == [
        ("The harbor gate opens at six.", config.host, True)
    ]
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert [hit.to_json() for hit in recall(config, "harbor", background=True)] == first
    assert not trace.exists() or "start" not in trace.read_text()


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


def test_a_held_index_stays_open_across_uses_until_its_file_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon holds the index from one cycle's refresh to the next: each use sees what was appended
    since, through the same connection, which runs no ``PRAGMA optimize`` until ``OPTIMIZE_EVERY_S``
    passed; a rebuild (the file replaced) or a use failing in SQLite has the next use open it anew."""
    live = tmp_path / "ada.jsonl"
    memory = MemoryFile(live)
    memory.remember(NewEntry("harbor gate", "fact"), now=NOW)
    where = tmp_path / "index.sqlite"
    source = Tracked(None, live.name, live, "jsonl")
    RecallIndex.rebuild(where, [source]).close()
    holder = Holder()

    def found() -> tuple[RecallIndex, list[str]]:
        with holder.use(where, [source]) as index:
            assert index is not None
            return index, sorted(hit.doc.body for hit in index.search(fts_query("harbor"), now=NOW, limit=9))

    first, bodies = found()
    assert bodies == ["harbor gate"]
    ran: list[str] = []
    first._db.set_trace_callback(ran.append)
    memory.remember(NewEntry("harbor crane", "fact"), now=NOW)
    assert found() == (first, ["harbor crane", "harbor gate"])
    assert "PRAGMA optimize" not in ran
    monkeypatch.setattr(search, "OPTIMIZE_EVERY_S", 0.0)
    assert found() == (first, ["harbor crane", "harbor gate"])
    assert ran.count("PRAGMA optimize") == 1
    assert found()[0] is first  # still usable: the optimization kept its busy timeout
    assert first._db.execute("PRAGMA busy_timeout").fetchone()[0] > 0

    RecallIndex.rebuild(where, [source]).close()  # another file at the path
    memory.remember(NewEntry("harbor tide", "fact"), now=NOW)
    second, bodies = found()
    assert second is not first and bodies == ["harbor crane", "harbor gate", "harbor tide"]
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        first.search(fts_query("harbor"), now=NOW, limit=5)
    with pytest.raises(sqlite3.OperationalError), holder.use(where, [source]):
        raise sqlite3.OperationalError("disk I/O error")
    third, bodies = found()
    assert third is not second and bodies == ["harbor crane", "harbor gate", "harbor tide"]
    holder.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        third.search(fts_query("harbor"), now=NOW, limit=5)


def _header() -> bytes:
    return b'{"created_at":"2026-12-01T00:00:00Z","format":"agent-memory/0.1"}\n'


def _bytes_read() -> int:
    """The bytes this process has read through ``read``-like calls so far (Linux ``/proc/self/io``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_a_refresh_after_one_appended_line_reads_that_line_not_the_file(tmp_path: Path) -> None:
    """The daemon's cycle and a writer refresh the index after an append: what they read is the appended
    bytes (and the header, the last few KiB the index saw, and pages of the index), not the whole memory
    file again."""
    live = tmp_path / "ada.jsonl"
    filler = " ".join(f"harbor{n}" for n in range(200))  # ~1.6 KB per entry
    # Forgotten entries: a file as large as a living one's, without the time to index its texts.
    lines = [entry_line(f"{filler} {n}", id=f"old{n}") for n in range(400)]
    lines += [b'{"deleted":true,"id":"old%d"}\n' % n for n in range(400)]
    append_once(live, _header() + b"".join(lines), create=True)
    where = tmp_path / "index.sqlite"
    source = Tracked(None, live.name, live, "jsonl")
    RecallIndex.rebuild(where, [source]).close()
    append_once(live, entry_line("the lighthouse keeper retired"))
    size = live.stat().st_size
    if embedding.available():  # the model's files are read once per process, not per refresh
        embedding.embed(["warm"])
    with RecallIndex.open(where) as index:
        before = _bytes_read()
        assert index.refresh([source]) == 1
        read = _bytes_read() - before
        hits = [hit.doc.body for hit in index.search(fts_query("lighthouse"), now=NOW, limit=5)]
    assert hits == ["the lighthouse keeper retired"]
    assert size > 600_000
    assert read < size // 4, f"{read} bytes read for one line appended to a file of {size}"


def test_a_file_rewritten_in_place_while_it_grew_is_read_whole(tmp_path: Path) -> None:
    """A memory file edited in place (same inode) and grown looks like an append by its size and inode:
    the bytes that ended it tell that it was not, so the edited entry is indexed as it now reads."""
    live = tmp_path / "ada.jsonl"
    first = entry_line("the ferry leaves at noon")
    append_once(live, _header() + first + entry_line("the bakery opens early"), create=True)
    where = tmp_path / "index.sqlite"
    source = Tracked(None, live.name, live, "jsonl")
    RecallIndex.rebuild(where, [source]).close()
    inode = live.stat().st_ino
    edited = live.read_bytes().replace(b"ferry leaves at noon", b"ferry leaves at nine")
    with live.open("r+b") as handle:  # as an editor that writes in place does
        handle.write(edited + entry_line("the tide turns at six"))
    assert live.stat().st_ino == inode
    with RecallIndex.open(where) as index:
        index.refresh([source])
        assert [hit.doc.body for hit in index.search(fts_query("ferry"), now=NOW, limit=5)] == [
            "the ferry leaves at nine"
        ]
        assert [hit.doc.body for hit in index.search(fts_query("tide"), now=NOW, limit=5)] == [
            "the tide turns at six"
        ]


@st.composite
def _appends(draw: st.DrawFn) -> list[tuple[str, int]]:
    """Lines appended to a memory file, each (what, earlier line number): a new entry, a new version of
    an earlier id, a tombstone, an entry superseding an earlier id, an entry whose id an earlier
    ``supersedes`` named in advance; or the file rewritten without its line ``n``, through a rename, or in
    place with a new entry at its end (same inode, grown: an append by its stat)."""
    return draw(
        st.lists(
            st.tuples(
                st.sampled_from(
                    ["new", "new", "version", "tombstone", "supersede", "named", "rewrite", "in place"]
                ),
                st.integers(0, 30),
            ),
            min_size=1,
            max_size=20,
        )
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_appends(), batch=st.booleans())
def test_the_index_follows_appended_lines_as_the_view_does(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int]], batch: bool
) -> None:
    """Whatever is appended (or the file rewritten), one line or several between two refreshes, the kept
    index holds exactly the view's entries: nothing dead comes back, nothing alive is missing."""
    root = tmp_path_factory.mktemp("memory")
    live = root / "ada.jsonl"
    append_once(live, _header() + entry_line("harbor start", id="s0"), create=True)
    where = root / "index.sqlite"
    source = Tracked(None, live.name, live, "jsonl")
    RecallIndex.rebuild(where, [source]).close()
    ids = ["s0"]
    for n, (op, pick) in enumerate(ops):
        earlier = ids[pick % len(ids)]
        fresh = f"e{n}"
        stamp = f"2026-12-01T00:{n:02d}:00.000000Z"
        if op in ("rewrite", "in place"):
            lines = live.read_bytes().split(b"\n")
            kept = [
                line for number, line in enumerate(lines) if number == 0 or number != 1 + pick % len(lines)
            ]
            if op == "rewrite":
                atomic_write(live, b"\n".join(kept))
                continue
            with live.open("r+b") as handle:  # as an editor that writes in place does
                handle.write(b"\n".join(kept).rstrip(b"\n") + b"\n" + entry_line(f"harbor {n}", id=fresh))
                handle.truncate()
        else:
            append_once(
                live,
                {
                    "new": entry_line(f"harbor {n}", id=fresh, created_at=stamp),
                    "version": entry_line(f"harbor again {n}", id=earlier, created_at=stamp),
                    "tombstone": b'{"deleted":true,"id":"%s","created_at":"%s"}\n'
                    % (earlier.encode(), stamp.encode()),
                    "supersede": entry_line(
                        f"harbor fix {n}", id=fresh, supersedes=earlier, created_at=stamp
                    ),
                    "named": entry_line(
                        f"harbor ahead {n}", id=fresh, supersedes=f"later{n}", created_at=stamp
                    )
                    + entry_line(f"harbor later {n}", id=f"later{n}", created_at=stamp),
                }[op],
            )
        ids.append(fresh)
        if batch and n % 2 == 0:
            continue
        with kept_index([source], path=where) as index:
            found = {hit.doc.id for hit in index.search(fts_query("harbor"), now=NOW, limit=200)}
        assert found == {entry.id for entry in read_memory(live).view(NOW)}


def test_the_kept_index_sees_each_file_of_a_role_directory_change(tmp_path: Path) -> None:
    """The check before each search stats every markdown file of a role directory: a daily log appended
    to in place, a note added, a note removed are each seen at the next refresh; other files are not
    looked at."""
    role = tmp_path / "role"
    (role / "daily").mkdir(parents=True)
    (role / "MEMORY.md").write_text("# Memory\n")
    log = role / "daily" / "2026-11-30.md"
    log.write_text("# Daily log — 2026-11-30\n\n- [09:00] The crane was inspected.\n")
    source = Tracked(None, "role", role, "role")
    where = tmp_path / "index.sqlite"

    def found(word: str) -> list[str]:
        with kept_index([source], path=where) as index:
            return [hit.doc.body.strip() for hit in index.search(fts_query(word), now=NOW, limit=5)]

    assert found("crane") == ["The crane was inspected."]
    append_once(log, b"- [10:00] The crane was repainted.\n")
    assert sorted(found("crane")) == ["The crane was inspected.", "The crane was repainted."]
    note = role / "ferry.md"
    note.write_text(
        "---\nname: Ferry\ndescription: the ferry\ntype: project\n---\n\nThe ferry runs hourly.\n"
    )
    assert found("hourly") == ["The ferry runs hourly."]
    (role / "notes.txt").write_text("hourly words outside markdown\n")
    (role / "daily" / ".md").write_text("hourly words in a nameless file\n")
    with RecallIndex.open(where) as index:
        assert index.refresh([source]) == 0
    note.unlink()
    assert found("hourly") == []

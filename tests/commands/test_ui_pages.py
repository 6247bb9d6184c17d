"""The pages of `memsync ui` beyond Memory search and Review, through a real server subprocess and real
stores: an entry and its timeline, the Memory page's filters, Conflicts (keep one, keep both, edit),
Machines (last commit, what a host had not pulled, the chart), and undo of the last change. Each checks
the live files and the store, not only the page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.support.peers import Peer
from tests.support.ui_client import ui_server


def _ok(peer: Peer, *args: str) -> str:
    done = peer.cli(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _entries(peer: Peer) -> list[dict[str, object]]:
    return [json.loads(line) for line in peer.memory_file.read_text().splitlines()[1:]]


def _remember(peer: Peer, text: str, kind: str) -> str:
    said = _ok(peer, "remember", text, "--kind", kind, "--file", str(peer.memory_file))
    return said.split()[1]


@pytest.mark.slow  # a store or two, several CLI runs and a server: 10-20 s on a busy machine
def test_an_entry_page_shows_its_timeline_and_supersede_forget_and_undo_write_the_file(
    tmp_path: Path, remote: Path
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    old = _remember(alice, "Builds run on the big runner.", "fact")
    alice.write_curated("release", "Tag, then push.", description="The release checklist is in docs.")
    said = _ok(alice, "handoff", str(alice.role_dir), str(alice.memory_file))
    assert "1 handed" in said, said
    handed = next(e for e in _entries(alice) if "release checklist" in str(e["text"]))
    _ok(alice, "sync")
    with ui_server(alice.env) as ui:
        status, page = ui.get("/entry", id=str(handed["id"]))
        timeline = page.split("id=timeline", 1)[1]
        assert "<td>qa</td>" in timeline and "alice" in timeline  # through the handoff from role qa
        _, page = ui.get("/")
        assert f'href="/file?path={quote(str(alice.role_dir / "release.md"))}"' in page
        status, page = ui.get("/entry", id=old)
        assert status == 200 and "Builds run on the big runner." in page
        timeline = page.split("id=timeline", 1)[1]
        assert "created" in timeline and "alice" in timeline and "not synced yet" not in timeline

        status, page = ui.post("/entry/supersede", {"id": old, "text": "Builds run on the arm runner."})
        assert status == 200, page
        new = next(e for e in _entries(alice) if e.get("supersedes") == old)
        assert new["text"] == "Builds run on the arm runner." and new["source"] == "user"
        assert f'href="/entry?id={old}"' in page  # the new entry links to the one it supersedes
        status, page = ui.get("/entry", id=old)
        assert "superseded" in page and f'href="/entry?id={new["id"]}"' in page

        status, page = ui.post("/undo", {}, referer=f"/entry?id={new['id']}")
        assert status == 200 and "undid supersede" in html.unescape(page)
        lines = _entries(alice)
        assert lines[-2]["id"] == new["id"] and lines[-2]["deleted"] is True
        back = lines[-1]
        assert back["text"] == "Builds run on the big runner." and back["kind"] == "fact"
        view = _ok(alice, "show", str(alice.memory_file))
        assert "Builds run on the big runner." in view and "arm runner" not in view

        ui.get("/entry", id=str(back["id"]))
        status, page = ui.post("/entry/forget", {"id": str(back["id"])})
        assert any(e.get("id") == back["id"] and e.get("deleted") is True for e in _entries(alice))
        assert "big runner" not in _ok(alice, "show", str(alice.memory_file))
        ui.post("/undo", {})
        assert "Builds run on the big runner." in _ok(alice, "show", str(alice.memory_file))
        # Nothing left to undo: the button is gone and a forged undo changes nothing.
        status, page = ui.get("/")
        assert "id=undo" not in page
    _ok(alice, "sync")
    assert b"Builds run on the big runner." in alice.read_store("memory/memory.jsonl")


@pytest.mark.slow  # a store or two, several CLI runs and a server: 10-20 s on a busy machine
def test_the_memory_page_filters_by_kind_host_scope_and_date(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    _remember(alice, "The staging database restarts at noon.", "fact")
    _ok(alice, "sync")
    _remember(bob, "Never deploy on Fridays.", "avoid")
    _ok(bob, "sync")
    with ui_server(bob.env) as ui:
        status, page = ui.get("/")
        assert status == 200
        entries = page.split("id=entries", 1)[1]
        assert "staging database" in entries and "Fridays" in entries
        _, page = ui.get("/", kind="avoid")
        assert "Fridays" in page and "staging database" not in page
        _, page = ui.get("/", host="alice")
        assert "staging database" in page and "Fridays" not in page
        _, page = ui.get("/", scope="global", since="2000-01-01", until="2000-01-02")
        assert "staging database" not in page and "Fridays" not in page
        _, page = ui.get("/", q="deploy Fridays", host="bob")
        hits = page.split("id=hits", 1)[1]
        assert "Fridays" in hits and "bob" in hits


@pytest.mark.slow  # two machines, a conflict made through three syncs, a server: about 20 s
def test_a_conflict_is_resolved_on_its_page_and_the_resolution_syncs(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    head = "---\nname: deploys\ndescription: how we deploy\ntype: project\n---\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Tuesdays.\n")
    _ok(alice, "sync")
    _ok(bob, "sync")
    entry = bob.role_dir / "deploys.md"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Wednesdays, after the standup.\n")
    entry.write_text(head + "Deploy on Thursdays, never on Fridays.\n")
    _ok(alice, "sync")
    bob.cli("sync")
    both = entry.read_text()
    assert BOTH_KEPT_NOTE_PREFIX in both

    with ui_server(bob.env) as ui:
        status, page = ui.get("/conflicts")
        assert status == 200 and "Wednesdays" in page and "Thursdays" in page
        sides = re.findall(r"<h3>([12]): ([^<]+)</h3>", page)
        hosts = {label.split(",")[0]: number for number, label in sides}
        assert set(hosts) == {"alice", "bob"}, sides

        ui.post("/conflicts/resolve", {"file": str(entry), "keep": hosts["alice"]})
        assert entry.read_text() == head + "Deploy on Wednesdays, after the standup.\n"
        _, page = ui.get("/conflicts")
        assert "No file holds two kept versions" in page

        ui.post("/undo", {})  # the conflict is back as it was
        assert entry.read_text() == both
        ui.get("/conflicts")
        ui.post("/conflicts/resolve", {"file": str(entry), "keep": "both"})
        assert BOTH_KEPT_NOTE_PREFIX not in entry.read_text()
        assert "Wednesdays" in entry.read_text() and "Thursdays" in entry.read_text()

        ui.get("/file", path=str(entry))
        ui.post("/file", {"path": str(entry), "text": head + "Deploy on Wednesdays only.\n"})
        assert entry.read_text() == head + "Deploy on Wednesdays only.\n"
        # Only tracked whole files are edited: an append-only file or a path outside is refused.
        status, _ = ui.post("/file", {"path": str(bob.memory_file), "text": "x"})
        assert status == 409 and bob.memory_file.read_text().startswith('{"created_at"')
        status, _ = ui.post("/file", {"path": str(tmp_path / "elsewhere.md"), "text": "x"})
        assert status == 409 and not (tmp_path / "elsewhere.md").exists()
    _ok(bob, "sync")
    _ok(alice, "sync")
    assert (alice.role_dir / "deploys.md").read_text() == head + "Deploy on Wednesdays only.\n"


@pytest.mark.slow  # a store or two, several CLI runs and a server: 10-20 s on a busy machine
def test_a_supersede_fork_is_listed_on_the_conflicts_page_until_one_superseder_is_forgotten(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    old = _remember(alice, "CI runs on Travis.", "fact")
    _ok(alice, "sync")
    _ok(bob, "sync")
    jenkins = _ok(alice, "remember", "CI runs on Jenkins now.", "--supersedes", old).split()[1]
    actions = _ok(bob, "remember", "CI runs on GitHub Actions now.", "--supersedes", old).split()[1]
    for peer in (alice, bob, alice):
        _ok(peer, "sync")

    with ui_server(bob.env) as ui:
        status, page = ui.get("/conflicts")
        assert status == 200, page
        fork = page.split("<section class=fork>", 1)[1]
        assert f'href="/entry?id={old}"' in fork and "superseded on two machines at once" in fork
        sides = dict(re.findall(r"<h3>([0-9a-f]{12}): ([^<]+)</h3>", fork))
        assert set(sides) == {jenkins, actions}, fork
        assert sides[jenkins].startswith("alice, ") and sides[jenkins].endswith("CI runs on Jenkins now.")
        assert sides[actions].startswith("bob, ")
        assert sides[actions].endswith("CI runs on GitHub Actions now.")

        status, page = ui.post("/entry/forget", {"id": jenkins, "back": "/conflicts"})
        assert status == 200 and f"forgot {jenkins}" in page and "No file holds two kept versions" in page
    assert {"id": jenkins, "deleted": True}.items() <= _entries(bob)[-1].items()
    _ok(bob, "sync")
    _ok(alice, "sync")
    assert _ok(alice, "conflicts") == "no file holds two kept versions\n"


@pytest.mark.slow  # a store or two, several CLI runs and a server: 10-20 s on a busy machine
def test_undo_of_a_forget_on_the_conflicts_page_brings_the_fork_back_after_a_compact_too(
    tmp_path: Path, remote: Path
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    old = _remember(alice, "CI runs on Travis.", "fact")
    jenkins = _ok(alice, "remember", "CI runs on Jenkins now.", "--supersedes", old).split()[1]
    actions = _ok(alice, "remember", "CI runs on GitHub Actions now.", "--supersedes", old).split()[1]
    with ui_server(alice.env) as ui:
        ui.get("/conflicts")
        status, page = ui.post("/entry/forget", {"id": jenkins, "back": "/conflicts"})
        assert status == 200 and "No file holds two kept versions" in page
        # A compact drops the superseded entry (not live): the undo still names it.
        _ok(alice, "compact", str(alice.memory_file))
        assert old not in {e.get("id") for e in _entries(alice)}
        status, page = ui.post("/undo", {}, referer="/conflicts")
        assert status == 200 and f"undid forget of {jenkins}" in page, page
        back = _entries(alice)[-1]
        assert back["text"] == "CI runs on Jenkins now." and back["supersedes"] == old
        assert back["kind"] == "fact" and back["id"] not in (jenkins, actions)
        assert f"superseding {old}" in page
        status, page = ui.get("/conflicts")
        fork = page.split("<section class=fork>", 1)[1]
        assert set(re.findall(r"<h3>([0-9a-f]{12}): ", fork)) == {back["id"], actions}, fork
    listed = _ok(alice, "conflicts")
    assert f"entry {old} superseded by 2 live entries" in listed and str(back["id"]) in listed
    assert "1 entry superseded on two machines at once" in alice.cli("doctor").stdout


@pytest.mark.slow  # a store, CLI runs and a server: 10-20 s on a busy machine
def test_control_and_bidi_characters_of_an_entry_are_never_shown_raw(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    raw = "Deploy \x1b[31mred\x1b[0m, ring\x07, back\x08 and \u202etxt.exe done"
    entry_id = _remember(alice, raw, "fact")
    assert _entries(alice)[-1]["text"] == raw  # the file keeps them
    raw_chars = ("\x1b", "\x07", "\x08", "\u202e")
    shown = _ok(alice, "show", str(alice.memory_file))
    line = next(line for line in shown.splitlines() if line.startswith(entry_id))
    assert line.endswith("Deploy [31mred[0m, ring, back and txt.exe done"), line
    # As stored with --json, the same data to a JSON reader, every such character escaped on the line.
    stored = next(
        json.loads(row) for row in _ok(alice, "show", "--json", str(alice.memory_file)).splitlines()
    )
    as_json = _ok(alice, "show", "--json", str(alice.memory_file))
    assert stored["text"] == raw and not any(char in as_json for char in raw_chars), as_json
    assert "\\u202etxt.exe" in as_json
    with ui_server(alice.env) as ui:
        for where, params in (("/entry", {"id": entry_id}), ("/", {"q": "deploy"}), ("/", {})):
            status, page = ui.get(where, **params)
            assert status == 200 and "Deploy [31mred[0m, ring, back and txt.exe done" in page, where
            assert not any(char in page for char in raw_chars), (where, page)
        status, page = ui.post("/entry/supersede", {"id": entry_id, "text": "Deploy in blue."})
        assert status == 200, page
    assert [e["text"] for e in _entries(alice) if e["id"] == entry_id] == [raw]


@pytest.mark.slow  # a store or two, several CLI runs and a server: 10-20 s on a busy machine
def test_the_machines_page_shows_each_host_its_last_commit_what_it_lacks_and_a_chart(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    alice.append_entry("The cache warms at six.")
    _ok(alice, "sync")
    bob.append_entry("The cache lives on the second disk.")
    _ok(bob, "sync")
    with ui_server(bob.env) as ui:
        status, page = ui.get("/machines")
    assert status == 200
    rows = {
        host: int(lacks)
        for host, lacks in re.findall(r"<tr><td>main</td><td>(\w+)</td><td>.*?</td><td>(\d+)</td></tr>", page)
    }
    # alice's last commit lacks bob's; bob's has everything this copy of the history has.
    assert rows == {"alice": 1, "bob": 0}, rows
    chart = page.split("<svg", 1)[1].split("</svg>", 1)[0]
    assert re.search(r"<title>alice \d{4}-\d\d-\d\d: \d+</title>", chart)
    assert re.search(r"<title>bob \d{4}-\d\d-\d\d: \d+</title>", chart)
    assert "<script" not in page and "src=" not in page  # nothing fetched, nothing run

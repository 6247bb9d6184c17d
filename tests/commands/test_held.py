"""Held-back lines and the allow-list: `memsync held`, `memsync held allow`, the UI's Held back page; the
hash (never the text) syncs, and a peer's scanner lets the same line pass."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync.secrets.allowed import line_hash, parse_allowed
from memsync.secrets.files import scan_appended, scan_whole
from tests.support.peers import Peer, entry_line
from tests.support.ui_client import ui_server

KEY_LINE = "The docs' example key is AKIAIOSFODNN7EXAMPLE, not a real one."


def _ok(peer: Peer, *args: str) -> str:
    done = peer.cli(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@given(st.binary(max_size=2000))
def test_the_allow_list_reader_takes_any_peer_bytes(data: bytes) -> None:
    allowed = parse_allowed(data)
    assert all(len(h) == 64 for h in allowed)


def test_the_scanner_lets_an_allowed_line_pass_and_holds_the_others() -> None:
    allowed = line_hash(KEY_LINE.encode())
    other = b"password=hunter2isnotreal\n"
    lines = [KEY_LINE.encode() + b"\n", b"plain\n", other]
    assert scan_appended("roles/qa/daily/2026-11-30.md", lines).keys() == {0, 2}
    assert scan_appended("roles/qa/daily/2026-11-30.md", lines, allowed=[allowed]).keys() == {2}
    whole = f"---\nname: k\n---\n{KEY_LINE}\n".encode()
    assert scan_whole(whole) is not None and scan_whole(whole, [allowed]) is None
    assert scan_whole(whole + other, [allowed]) == (5, "Secret assignment")


@pytest.mark.slow  # a store, a server and several syncs: about 15 s on a busy machine
def test_a_false_positive_marked_in_the_page_syncs_its_hash_and_is_published(
    tmp_path: Path, remote: Path
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    line = entry_line(KEY_LINE)
    with alice.memory_file.open("ab") as out:
        out.write(line)
    _ok(alice, "sync")
    assert KEY_LINE.encode() not in alice.read_store("memory/memory.jsonl")
    listed = _ok(alice, "held")
    assert f"{alice.memory_file}:2  [main] AWS Access Key: " in listed and "AKIAIOSFODNN7EXAMPLE" in listed

    with ui_server(alice.env) as ui:
        status, page = ui.get("/held")
        assert status == 200 and "AKIAIOSFODNN7EXAMPLE" in page  # shown on this machine
        status, page = ui.post("/held/allow", {"file": str(alice.memory_file), "line": "2"})
        assert status == 200, page
    record = alice.read_store(".memsync/allowed.jsonl")
    assert hashlib.sha256(line.rstrip(b"\n")).hexdigest() in record.decode()
    assert b"AKIA" not in record and json.loads(record)["host"] == "alice"
    _ok(alice, "sync")
    assert line in alice.read_store("memory/memory.jsonl")
    assert _ok(alice, "held") == "no line is held back\n"
    assert KEY_LINE in alice.store_git("show", "origin/main:memory/memory.jsonl")  # pushed


@pytest.mark.slow  # two machines, five syncs: about 20 s on a busy machine
def test_a_peer_stops_holding_a_line_allowed_elsewhere(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    head = "---\nname: keys\ndescription: where keys live\ntype: reference\n---\n"
    (alice.role_dir / "keys.md").write_text(f"{head}{KEY_LINE}\n")
    _ok(alice, "sync")
    assert not (alice.store / "roles/qa/keys.md").exists()
    said = _ok(alice, "held", "allow", str(alice.role_dir / "keys.md"), "6")
    assert said.startswith(f"allowed {alice.role_dir / 'keys.md'}:6")
    _ok(alice, "sync")
    assert (alice.store / "roles/qa/keys.md").read_text() == f"{head}{KEY_LINE}\n"
    _ok(bob, "sync")
    mine = bob.role_dir / "keys.md"
    assert mine.read_text() == f"{head}{KEY_LINE}\n"
    # bob edits the file: his scanner reads the whole file again, the key line with it.
    mine.write_text(f"{head}{KEY_LINE}\nThe real keys are in the team vault.\n")
    _ok(bob, "sync")
    assert _ok(bob, "held") == "no line is held back\n"
    _ok(alice, "sync")
    assert "team vault" in (alice.role_dir / "keys.md").read_text()

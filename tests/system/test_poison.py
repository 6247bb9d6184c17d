"""One poisoned line never takes down a command (DESIGN "Hostile input"): `show`, `check`, `prompt`,
`compact`, `handoff` (both ways and as a prompt), `sync` and `log` on memory files holding lines nested
10^6 deep and every other line a bounded reader refuses, as real subprocesses. Each such line is
reported with its number by `check`, skipped by the views and kept verbatim by compaction and sync."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memsync.formats.jsonl.parse import read_memory
from memsync.formats.markdown.roledir import RoleDir
from tests.support.helpers import cli_main
from tests.support.peers import HEADER, MEMORY_FILE, Peer
from tests.support.poison import POISON_LINES

DEEP = b"[" * 1_000_000 + b"]" * 1_000_000  # the line a peer pushed: 2 MB of brackets
DEEP_OBJECT = b'{"id":"deep","kind":"fact","text":' + b"[" * 50_000 + b"]" * 50_000 + b"}"
POISON = [DEEP, DEEP_OBJECT, *POISON_LINES]


def _entry(entry_id: str, text: str) -> bytes:
    record = {"id": entry_id, "kind": "lesson", "text": text, "created_at": "2026-11-01T00:00:00Z"}
    return json.dumps(record).encode() + b"\n"


def _poisoned(path: Path) -> dict[int, bytes]:
    """Write a memory file of good entries with every poison line between them; returns the poison
    lines by line number."""
    lines = [HEADER]
    poison: dict[int, bytes] = {}
    for number, line in enumerate(POISON):
        lines.append(_entry(f"good{number:08d}", f"good lesson {number}"))
        lines.append(line + b"\n")
        poison[len(lines)] = line
    path.write_bytes(b"".join(lines))
    return poison


def _ok(result: subprocess.CompletedProcess[str], code: int = 0) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and "unexpected error" not in result.stderr


def test_every_command_reads_past_poison_lines_and_keeps_them(tmp_path: Path, home: Path) -> None:
    memory = tmp_path / "poisoned.jsonl"
    poison = _poisoned(memory)
    before = memory.read_bytes()

    shown = cli_main("show", str(memory))
    _ok(shown)
    assert {f"good{n:08d}" for n in range(len(POISON))} <= {
        line.split()[0] for line in shown.stdout.splitlines()
    }
    assert f"{len(poison)} problems in" in shown.stderr

    check = cli_main("check", str(memory))
    _ok(check, 1)
    reported = {int(line.split(":")[1]) for line in check.stdout.splitlines()}
    assert set(poison) <= reported, sorted(set(poison) - reported)
    assert f"{memory}:3: a line of 2000000 bytes" in check.stdout
    assert f"{memory}:5: nested more than 32 deep" in check.stdout

    prompt = cli_main("prompt", str(memory))
    _ok(prompt)
    assert all(f"- good lesson {n}" in prompt.stdout for n in range(len(POISON)))

    role = tmp_path / "agents" / "reviewer"
    role.parent.mkdir()
    handed = cli_main("handoff", str(memory), str(role))
    _ok(handed)
    assert len(RoleDir(role).entries()) == len(POISON)
    as_prompt = cli_main("handoff", str(memory), "--format", "prompt")
    _ok(as_prompt)
    assert "good lesson 0" in as_prompt.stdout
    back = cli_main("handoff", str(role), str(tmp_path / "back.jsonl"))
    _ok(back)
    assert len(read_memory(tmp_path / "back.jsonl").records) == len(POISON)
    assert memory.read_bytes() == before

    compact = cli_main("compact", str(memory))
    _ok(compact)
    kept = memory.read_bytes().split(b"\n")
    assert all(line in kept for line in poison.values())


@pytest.mark.slow
def test_sync_and_log_carry_a_poison_line_verbatim(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    good = alice.append_entry("a lesson after the poison")
    with alice.memory_file.open("ab") as out:
        out.write(DEEP + b"\n" + DEEP_OBJECT + b"\n")
    last = alice.append_entry("the last lesson")
    for peer in (alice, bob, alice):
        _ok(peer.cli("sync"))
    live = bob.read_live(MEMORY_FILE)
    assert DEEP + b"\n" in live and DEEP_OBJECT + b"\n" in live and good in live and last in live
    entry_id = json.loads(last)["id"]
    for peer in (alice, bob):
        log = peer.cli("log", entry_id)
        _ok(log)
        assert "added: the last lesson" in log.stdout
    check = bob.cli("check", str(bob.memory_file))
    _ok(check, 1)
    assert len(check.stdout.splitlines()) == 2

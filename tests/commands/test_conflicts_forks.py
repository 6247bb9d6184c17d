"""`memsync conflicts`, `doctor` and `show` on a supersede fork: two machines superseded one entry of the
memory file while apart; both new entries stay live (spec), and the person is told until one is
forgotten."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support.peers import Peer, sync


def _remember(peer: Peer, *args: str) -> str:
    said = peer.main_ok("remember", *args, "--file", str(peer.memory_file)).stdout
    found = re.match(r"remembered ([0-9a-f]{12}) ", said)
    assert found, said
    return found[1]


def test_a_supersede_fork_is_listed_on_both_machines_until_resolved(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    old = _remember(alice, "CI runs on Travis")
    sync(alice, bob)
    jenkins = _remember(alice, "CI runs on Jenkins now", "--supersedes", old)
    actions = _remember(bob, "CI runs on GitHub Actions now", "--supersedes", old)
    sync(alice, bob, alice)

    for peer in (alice, bob):
        listed = peer.main_ok("conflicts").stdout.splitlines()
        assert listed[0] == (
            f"{peer.memory_file} [main]: entry {old} superseded by 2 live entries; "
            f"keep one: `memsync forget ID --file {peer.memory_file}` the wrong one"
        ), listed
        assert len(listed) == 3, listed
        by_id = {line.split(": ", 1)[1].split(":", 1)[0]: line for line in listed[1:]}
        assert re.fullmatch(rf"    \d: {jenkins}: alice, 20\d\d-.*: CI runs on Jenkins now", by_id[jenkins])
        assert re.fullmatch(
            rf"    \d: {actions}: bob, 20\d\d-.*: CI runs on GitHub Actions now", by_id[actions]
        )
    assert "WARN forks in main: 1 entry superseded on two machines at once" in bob.main("doctor").stdout
    shown = bob.main_ok("show", str(bob.memory_file))
    assert f"memsync: {old} was superseded on two machines at once, by " in shown.stderr
    assert jenkins in shown.stdout and actions in shown.stdout

    bob.main_ok("forget", jenkins, "--file", str(bob.memory_file))
    assert bob.main_ok("conflicts").stdout == "no file holds two kept versions\n"
    assert "superseded on two machines" not in bob.main_ok("show", str(bob.memory_file)).stderr
    sync(bob, alice)
    assert alice.main_ok("conflicts").stdout == "no file holds two kept versions\n"


def test_every_hint_that_names_a_memory_file_quotes_it_for_the_shell(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    hostile = alice.memory_file.parent / '<img src=x onerror=alert(9)>"&.jsonl'
    alice.add_track(hostile, "hostile.jsonl")
    old = alice.main_ok("remember", "CI runs on Travis", "--file", str(hostile)).stdout.split()[1]
    for text in ("CI runs on Jenkins now", "CI runs on GitHub Actions now"):
        alice.main_ok("remember", text, "--supersedes", old, "--file", str(hostile))
    quoted = shlex.quote(str(hostile))
    listed = alice.main_ok("conflicts").stdout
    assert f"keep one: `memsync forget ID --file {quoted}` the wrong one" in listed, listed
    assert shlex.split(f"memsync forget ID --file {quoted}")[-1] == str(hostile)
    missing = alice.main("forget", "0123456789ab", "--file", str(hostile))
    assert missing.returncode != 0 and f"`memsync show {quoted}`" in missing.stderr, missing.stderr
    hostile.write_bytes(hostile.read_bytes() + b"not json\n")
    shown = alice.main_ok("show", str(hostile))
    assert f"see `memsync check {quoted}`" in shown.stderr, shown.stderr

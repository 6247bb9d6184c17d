"""`memsync conflicts`, `memsync resolve` and doctor's count: a curated entry two machines edited at once."""

from __future__ import annotations

from pathlib import Path

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.peers import Peer


def _ok(peer: Peer, *args: str) -> str:
    done = peer.cli(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def test_two_versions_are_listed_with_host_and_time_and_resolved_by_an_edit(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    head = "---\nname: deploys\ndescription: how we deploy\ntype: project\n---\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Tuesdays.\n")
    _ok(alice, "sync")
    _ok(bob, "sync")
    entry = bob.role_dir / "deploys.md"
    assert entry.read_text() == head + "Deploy on Tuesdays.\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Wednesdays, after the standup.\n")
    entry.write_text(head + "Deploy on Thursdays, never on Fridays.\n")
    _ok(alice, "sync")
    bob.cli("sync")
    assert BOTH_KEPT_NOTE_PREFIX in entry.read_text()

    listed = _ok(bob, "conflicts").splitlines()
    assert listed[0] == f"{entry} [main]", listed
    labels = {line.split(": ", 1)[1].split(",")[0]: line.split(": ", 1)[0].strip() for line in listed[1:]}
    assert set(labels) == {"alice", "bob"}, listed
    assert all(" 20" in line and line.count(":") >= 3 for line in listed[1:]), listed  # a date and a time
    assert "conflicts in main: 1 file with two versions kept: `memsync conflicts`" in bob.cli("doctor").stdout

    keep = labels["alice"]  # the version alice wrote, whichever number it got
    said = _ok(bob, "resolve", str(entry), "--keep", keep)
    assert said == f"resolved {entry}: kept version {keep}; it syncs as an edit\n"
    assert entry.read_text() == head + "Deploy on Wednesdays, after the standup.\n"
    assert _ok(bob, "conflicts") == "no file holds two kept versions\n"
    _ok(bob, "sync")
    _ok(alice, "sync")
    assert (alice.role_dir / "deploys.md").read_text() == head + "Deploy on Wednesdays, after the standup.\n"
    assert "no file holds two kept versions" in bob.cli("doctor").stdout

    refused = bob.cli("resolve", str(entry), "--keep", "1")
    assert refused.returncode == 1 and "holds no two kept versions" in refused.stderr

"""`memsync conflicts`, `memsync resolve` and doctor's count: a curated entry two machines edited at once."""

from __future__ import annotations

import time
from pathlib import Path

from memsync.merge.entry import BOTH_KEPT_NOTE
from memsync.merge.labels import LABEL_TIME_FORMAT
from tests.support.peers import Peer


def _utc(seconds: int) -> str:
    return time.strftime(LABEL_TIME_FORMAT, time.gmtime(seconds))


def _local(seconds: int) -> str:
    """As `memsync conflicts` and `memsync log` show a time: local, with the zone."""
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(seconds))


def _ok(peer: Peer, *args: str) -> str:
    return peer.main_ok(*args).stdout


def test_two_versions_are_listed_with_host_and_time_and_resolved_by_an_edit(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    head = "---\nname: deploys\ndescription: how we deploy\ntype: project\n---\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Tuesdays.\n")
    (alice.role_dir / "MEMORY.md").write_text("- [Deploys](deploys.md) — on Tuesdays\n")
    _ok(alice, "sync")
    _ok(bob, "sync")
    entry = bob.role_dir / "deploys.md"
    assert entry.read_text() == head + "Deploy on Tuesdays.\n"
    (alice.role_dir / "deploys.md").write_text(head + "Deploy on Wednesdays, after the standup.\n")
    entry.write_text(head + "Deploy on Thursdays, never on Fridays.\n")
    (alice.role_dir / "MEMORY.md").write_text("- [Deploys](deploys.md) — on Wednesdays\n")
    index = bob.role_dir / "MEMORY.md"
    index.write_text("- [Deploys](deploys.md) — on Thursdays\n")
    _ok(alice, "sync")
    alice_time = int(alice.store_git("log", "-1", "--format=%at"))
    bob.main("sync")  # bob's commit is replayed onto alice's: a rebase, where git swaps the sides
    bob_time = int(bob.store_git("log", "-1", "--format=%at", "--grep=Memsync-Host: bob"))
    # Each version is labelled with the host and time (UTC) of the commit that wrote it, in the file.
    assert entry.read_text() == head + (
        f"{BOTH_KEPT_NOTE}\n\n[memsync] version 1 of 2, from bob at {_utc(bob_time)}\n"
        "Deploy on Thursdays, never on Fridays.\n"
        f"[memsync] version 2 of 2, from alice at {_utc(alice_time)}\n"
        "Deploy on Wednesdays, after the standup.\n"
    )

    # The index driver keeps both versions of the item, each a line of its own.
    assert (
        index.read_text()
        == "- [Deploys](deploys.md) — on Thursdays\n- [Deploys](deploys.md) — on Wednesdays\n"
    )

    listed = _ok(bob, "conflicts").splitlines()
    assert listed == [
        f"{entry} [main]",
        f"    1: bob, {_local(bob_time)}",
        f"    2: alice, {_local(alice_time)}",
        f"{index} [main]: 2 index lines for deploys.md; edit it to keep one",
        f"    1: bob, {_local(bob_time)}: - [Deploys](deploys.md) — on Thursdays",
        f"    2: alice, {_local(alice_time)}: - [Deploys](deploys.md) — on Wednesdays",
    ], listed
    assert (
        "conflicts in main: 1 file with two versions kept: `memsync conflicts`" in bob.main("doctor").stdout
    )

    keep = "2"  # the version alice wrote
    said = _ok(bob, "resolve", str(entry), "--keep", keep)
    assert said == f"resolved {entry}: kept version {keep}; it syncs as an edit\n"
    assert entry.read_text() == head + "Deploy on Wednesdays, after the standup.\n"
    assert _ok(bob, "conflicts").startswith(f"{index} [main]: 2 index lines for deploys.md")
    index.write_text("- [Deploys](deploys.md) — on Wednesdays\n")  # the index settled by an edit
    assert _ok(bob, "conflicts") == "no file holds two kept versions\n"
    _ok(bob, "sync")
    _ok(alice, "sync")
    assert (alice.role_dir / "deploys.md").read_text() == head + "Deploy on Wednesdays, after the standup.\n"
    assert (alice.role_dir / "MEMORY.md").read_text() == "- [Deploys](deploys.md) — on Wednesdays\n"
    assert "no file holds two kept versions" in bob.main("doctor").stdout

    refused = bob.main("resolve", str(entry), "--keep", "1")
    assert refused.returncode == 1 and "holds no two kept versions" in refused.stderr

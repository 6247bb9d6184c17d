"""Membership told to the device it concerns: a device a member removes is told by a notice sealed for it
alone and signed by the remover (``memsync.crypt.notice``, ``memsync.store.sealed``), and stops pushing;
a forged notice is refused. Devices are CLI subprocesses, each with its own HOME and key, on a real bare
remote."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pyrage
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync.crypt import envelope, keys, notice
from tests.crypt.test_crypt import cli_ok, synced_members
from tests.support.helpers import wait_for
from tests.support.peers import MEMORY_STORE, Peer

_KEYS = re.compile(r"key: (age1\w+) (ed25519:\S+)\nverification code: (\S+)")


def _keys(peer: Peer) -> tuple[str, str, str]:
    """``peer``'s age key, signing key and device id, as `memsync join` prints them."""
    found = _KEYS.search(cli_ok(peer, "join", str(peer.home)).stdout)
    assert found is not None
    age, signing, device = found.groups()
    return age, signing, device


def _head(remote: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(remote), "rev-parse", "refs/heads/main"], capture_output=True, text=True, check=True
    ).stdout.strip()


def _push_notice(tmp_path: Path, remote: Path, sealed_for: str, by: pyrage.x25519.Identity) -> str:
    """A removal notice for ``sealed_for`` signed by ``by`` on top of the remote's tip, pushed with plain
    git as any writer of the remote could; returns its commit."""
    clone = tmp_path / "notice-writer"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    sealed = envelope.seal(
        notice.notice(sealed_for), [sealed_for], identity=by, members=b"", parent=_head(remote)
    )
    (clone / "data.age").write_bytes(sealed)
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "sealed"], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"], check=True)
    return _head(remote)


@given(st.binary(max_size=200))
def test_a_notice_read_from_any_bytes_names_a_recipient_or_none(data: bytes) -> None:
    named = notice.removed(data)
    assert named is None or isinstance(named, str)
    assert notice.removed(notice.notice("age1xyz")) == "age1xyz"


@pytest.mark.slow
def test_a_removed_device_is_told_by_whom_and_stops_pushing_while_the_rest_sync_on(tmp_path: Path) -> None:
    remote, (alice, bob, carol), _ = synced_members(
        tmp_path, "before carol's removal", "alice", "bob", "carol"
    )
    _, _, alice_id = _keys(alice)
    carol_age, carol_signing, carol_id = _keys(carol)
    # A notice signed by a device that is no member is refused in one line and changes nothing.
    stranger = pyrage.x25519.Identity.generate()
    forged = _push_notice(tmp_path, remote, carol_age, stranger)
    told = cli_ok(carol, "sync")
    refused = [line for line in told.stderr.splitlines() if "removal notice" in line]
    assert len(refused) == 1 and forged[:10] in refused[0] and "not a member" in refused[0], told.stderr
    stranger_id = keys.verification_code(keys.public_key(stranger), keys.signing_public(stranger))
    assert stranger_id in refused[0] and "removed from" not in told.stderr
    still = carol.append_entry("carol still writes")
    cli_ok(carol, "sync")
    assert _head(remote) != forged  # she still pushes
    cli_ok(alice, "sync")
    assert still in alice.memory_file.read_bytes()
    assert forged[:10] in cli_ok(bob, "sync").stderr  # not sealed for bob: named there once, as before
    # Alice removes carol: carol is told once who did, her memory stays, and she pushes nothing more.
    cli_ok(alice, "key", "remove", carol_age)
    told_at = _head(remote)
    after = alice.append_entry("said after carol left")
    cli_ok(alice, "sync")
    kept = carol.append_entry("carol's own line, kept here")
    done = carol.cli("sync")
    # Said in full once, by the sync that read the notice: by whom, what stays readable, how to rejoin.
    full = [line for line in done.stderr.splitlines() if "stays readable here" in line]
    assert len(full) == 1 and f"by device {alice_id}" in full[0] and "memsync key add" in full[0], done.stderr
    assert "cannot be read" not in done.stderr and "encrypted bundle" not in done.stderr
    assert done.returncode == 77  # committed here, and nothing goes to that remote any more
    assert not re.search(r"store (\S+): store \1:", done.stderr), done.stderr  # the store named once
    head = _head(remote)
    # Each later sync says it in one short line pointing to `memsync status`, with the same exit code.
    again = carol.cli("sync")
    said = [line for line in again.stderr.splitlines() if "removed" in line]
    assert len(said) == 1 and "memsync status" in said[0] and "stays readable" not in again.stderr, (
        again.stderr
    )
    assert again.returncode == 77
    assert "cannot be read" not in again.stderr and _head(remote) == head  # nothing pushed by carol
    assert carol.status()["stores"]["main"]["remotes"]["origin"]["status"] == "removed"
    assert kept in carol.memory_file.read_bytes() and kept in carol.read_store(MEMORY_STORE)
    assert after not in carol.memory_file.read_bytes()
    status = cli_ok(carol, "status").stdout
    assert f"removed from the encrypted remote origin by device {alice_id}" in status
    doctor = carol.cli("doctor").stdout
    assert f"by device {alice_id}" in doctor
    listed = carol.cli("key", "list").stdout
    assert f"this device was removed from the encrypted remote origin by device {alice_id}" in listed
    assert "origin: 2 devices, and this device, removed\n" in listed  # alice and bob; carol's row beside
    assert f"  {carol_id}  {carol_age}  signs  added by {alice_id}  (this device, removed)\n" in listed
    # Bob and alice sync on, told nothing about a notice they cannot read.
    reply = bob.append_entry("bob answers alice")
    heard = cli_ok(bob, "sync")
    assert told_at[:10] not in heard.stderr and "encrypted bundle" not in heard.stderr, heard.stderr
    assert after in bob.memory_file.read_bytes()
    cli_ok(alice, "sync")
    assert reply in alice.memory_file.read_bytes() and kept not in alice.memory_file.read_bytes()
    assert carol_id not in cli_ok(alice, "key", "list").stdout
    # Carol is added again: she reads and pushes as before; the old notice replayed now is refused.
    cli_ok(alice, "key", "add", carol_age, carol_signing)
    back = cli_ok(carol, "sync")
    assert "this device was removed" not in cli_ok(carol, "status").stdout, back.stderr
    assert after in carol.memory_file.read_bytes()
    cli_ok(alice, "sync")
    assert kept in alice.memory_file.read_bytes()
    # The old notice, replayed on top of the branch by its host, does not verify there: refused.
    old = subprocess.run(
        ["git", "-C", str(remote), "show", f"{told_at}:data.age"], capture_output=True, check=True
    ).stdout
    clone = tmp_path / "replayer"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    (clone / "data.age").write_bytes(old)
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "sealed"], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"], check=True)
    replayed = cli_ok(carol, "sync")
    assert "removal notice that is refused: its signature does not verify" in replayed.stderr
    assert "this device was removed" not in cli_ok(carol, "status").stdout
    last = carol.append_entry("carol after the replay")
    cli_ok(carol, "sync")
    cli_ok(alice, "sync")
    assert last in alice.memory_file.read_bytes()


@pytest.mark.slow
def test_a_daemon_on_a_removed_device_says_it_once_and_neither_pushes_nor_spins(tmp_path: Path) -> None:
    remote, (alice, bob), _ = synced_members(tmp_path, "before bob's removal", "alice", "bob")
    bob_age, _, _ = _keys(bob)
    _, _, alice_id = _keys(alice)
    trace = tmp_path / "bob-trace"
    offset = bob.start(env={"GIT_TRACE2_EVENT": str(trace)})
    try:
        cli_ok(alice, "key", "remove", bob_age)
        told_at = _head(remote)
        bob.append_entry("bob writes after his removal")
        wait_for(lambda: "stays readable here" in bob.log(offset), timeout=60, what="bob told")
        started, traced = time.monotonic(), trace.stat().st_size
        for i in range(3):  # cycles go on: each entry is committed in bob's store
            line = bob.append_entry(f"bob keeps writing {i}")
            wait_for(lambda line=line: line in bob.read_store(MEMORY_STORE), timeout=30, what="committed")
        # The remote, backed off, is tried again now and then (a member may add this device again).
        wait_for(lambda: bob.log(offset).count("a remote is tried again") >= 2, timeout=60, what="retries")
        elapsed = time.monotonic() - started
        events = [json.loads(e) for e in trace.read_bytes()[traced:].decode().splitlines() if e.strip()]
        assert not bob.proc_dead()
    finally:
        assert bob.stop() == 0
    said = bob.log(offset)
    # The full line once, with who removed it; any other line about it is the short state.
    assert said.count("stays readable here") == 1 and f"by device {alice_id}" in said, said
    short = [
        line for line in said.splitlines() if "device was removed" in line and "stays readable" not in line
    ]
    assert short and all("memsync status" in line for line in short), said
    assert _head(remote) == told_at  # nothing pushed after the notice
    # It fetches the remote no more often than its pull timer (2 s) would: backed off, not spinning.
    fetches = [
        e for e in events if e.get("event") == "start" and e["argv"][1:2] == ["fetch"] and "/" not in e["sid"]
    ]
    assert len(fetches) <= 3 + elapsed / 2, (len(fetches), elapsed)


@pytest.mark.slow
def test_a_new_device_takes_the_history_only_from_the_member_it_was_told(tmp_path: Path) -> None:
    remote, (alice, bob), early = synced_members(tmp_path, "alice's early lesson", "alice", "bob")
    _, _, alice_id = _keys(alice)
    _, _, bob_id = _keys(bob)
    # Carol read bob's code where she should have read alice's: alice seals her history, so carol takes
    # nothing, in one line naming both.
    carol = Peer.create(tmp_path, "carol", remote, init_store=False)
    wrong = cli_ok(carol, "join", str(remote), "--member", bob_id).stdout
    assert f"only if device {bob_id} sealed it" in wrong
    age, signing, _ = _keys(carol)
    added = cli_ok(alice, "key", "add", age, signing).stdout
    assert f"this device's code: {alice_id}" in added
    refused = carol.cli("store", "add", "team", "--remote", str(remote), "--encrypt")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    said = [line for line in refused.stderr.splitlines() if "--member" in line]
    assert len(said) == 1 and f"signed by device {alice_id}, not by {bob_id}" in said[0], refused.stderr
    stores = carol.home / ".local" / "share" / "memsync" / "stores"
    assert "team" not in carol.config.read_text() and not (stores / "team").exists()
    # With alice's code it takes it all, and says nothing about unchecked members.
    cli_ok(carol, "join", str(remote), "--member", alice_id)
    taken = cli_ok(carol, "store", "add", "team", "--remote", str(remote), "--encrypt")
    assert "unchecked" not in taken.stderr
    held = subprocess.run(
        ["git", "-C", str(stores / "team"), "show", f"HEAD:{MEMORY_STORE}"], capture_output=True, check=True
    ).stdout
    assert early in held
    # Without --member it joins as before, and says once that the members were not checked.
    dave = Peer.create(tmp_path, "dave", remote, init_store=False)
    age, signing, _ = _keys(dave)
    cli_ok(alice, "key", "add", age, signing)
    joined = cli_ok(dave, "store", "add", "team", "--remote", str(remote), "--encrypt")
    unchecked = [line for line in joined.stderr.splitlines() if "unchecked" in line]
    assert len(unchecked) == 1 and f"device {alice_id}" in unchecked[0] and "key list" in unchecked[0]
    assert "unchecked" not in dave.cli("sync").stderr

"""Snapshots and whole-history bundles on an encrypted remote, end to end (CLI subprocesses, each device
with its own HOME and key, a real bare remote): a device told which member seals its history starts
from that member's bundle even when another member sealed a whole history after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.crypt.test_crypt import cli_ok, encrypted_peer, synced_members
from tests.crypt.test_members import _keys
from tests.support.helpers import bare_remote
from tests.support.peers import MEMORY_STORE, Peer
from tests.support.stores import commit_count


@pytest.mark.slow
def test_a_device_told_its_member_starts_from_that_members_bundle_under_a_later_snapshot(
    tmp_path: Path,
) -> None:
    remote, (alice, bob), early = synced_members(tmp_path, "alice's early lesson", "alice", "bob")
    _, _, alice_id = _keys(alice)
    carol = Peer.create(tmp_path, "carol", remote, init_store=False)
    cli_ok(carol, "join", str(remote), "--member", alice_id)
    age, signing, _ = _keys(carol)
    cli_ok(alice, "key", "add", age, signing)
    # Bob then seals the whole history again (adding dave), on top of alice's bundle for carol.
    dave = Peer.create(tmp_path, "dave", remote, init_store=False)
    cli_ok(bob, "key", "add", *_keys(dave)[:2])
    taken = cli_ok(carol, "store", "add", "team", "--remote", str(remote), "--encrypt")
    assert "unchecked" not in taken.stderr and "encrypted bundle" not in taken.stderr, taken.stderr
    stores = carol.home / ".local" / "share" / "memsync" / "stores"
    assert early in (stores / "team" / MEMORY_STORE).read_bytes()


@pytest.mark.slow
def test_compact_on_an_encrypted_store_makes_the_next_push_a_snapshot(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = encrypted_peer(tmp_path, "alice", remote)
    alice.append_entry("alice's first lesson")
    cli_ok(alice, "sync")
    before = commit_count(remote, "main")
    cli_ok(alice, "compact", str(alice.memory_file))
    alice.append_entry("after compacting")
    cli_ok(alice, "sync")
    # Its bundle, then the snapshot on top; the push after is one commit again.
    assert commit_count(remote, "main") == before + 2
    alice.append_entry("and after that")
    cli_ok(alice, "sync")
    assert commit_count(remote, "main") == before + 3

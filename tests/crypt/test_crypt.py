"""Encrypted remotes, end to end: devices (CLI and daemon subprocesses, each with its own HOME and key)
sync through a real bare remote that receives only sealed git bundles (``memsync.crypt``,
``memsync.store.sealed``). The remote is searched byte by byte for what the memory holds; devices append
at once and converge; a device added later reads all history; bad ciphertext is named and skipped."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pyrage
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.crypt import envelope, keys
from memsync.crypt.members import Member, Members
from memsync.crypt.vault import Vault
from memsync.errors import MemsyncError
from tests.support.helpers import bare_remote, wait_for
from tests.support.peers import MEMORY_STORE, Peer, encrypted
from tests.support.servers.transport import Remote


def encrypted_peer(root: Path, name: str, remote: Path, member: Peer | None = None, **kwargs: object) -> Peer:
    """A peer on the path ``remote`` whose store is set to encrypt (``peers.encrypted``)."""
    peer = Peer.create(root, name, remote, init_store=False, **kwargs)  # type: ignore[arg-type]
    return encrypted(peer, member)


def synced_members(root: Path, entry: str, first: str, *others: str) -> tuple[Path, list[Peer], bytes]:
    """A bare remote under ``root`` and a member of it per name (``first`` makes the store and adds the
    ``others``), after ``first`` wrote an entry holding ``entry`` and each synced: the remote, the
    members in that order and that entry's line."""
    remote = bare_remote(root / "remote.git")
    peers = [encrypted_peer(root, first, remote)]
    peers += [encrypted_peer(root, name, remote, member=peers[0]) for name in others]
    line = peers[0].append_entry(entry)
    for peer in peers:
        cli_ok(peer, "sync")
    return remote, peers, line


def cli_ok(peer: Peer, *args: str) -> subprocess.CompletedProcess[str]:
    """``memsync ARGS`` through the CLI's entry point in this process (a sync, a join, a key command: the
    same path as a process without an interpreter's start-up each), required to exit 0."""
    return peer.main_ok(*args)


def remote_bytes(remote: Path) -> bytes:
    """Everything the remote holds: every object's content (``git cat-file --batch-all-objects``), its
    refs, and every file of the repository as stored (config, HEAD, packs, logs)."""
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=remote, capture_output=True, check=True
    ).stdout
    refs = subprocess.run(["git", "for-each-ref"], cwd=remote, capture_output=True, check=True).stdout
    files = b"".join(path.read_bytes() for path in sorted(remote.rglob("*")) if path.is_file())
    return objects + refs + files


# --- the envelope --------------------------------------------------------------------------------------


def seal_as(me: pyrage.x25519.Identity, payload: bytes, parent: str | None = None) -> bytes:
    """``payload`` sealed and signed by ``me`` for ``me`` alone, ``me`` the only member."""
    members = Members((Member(keys.public_key(me), keys.signing_public(me)),))
    return envelope.seal(payload, members.recipients, identity=me, members=members.dump(), parent=parent)


def test_seal_round_trip_pads_to_a_bucket() -> None:
    me = pyrage.x25519.Identity.generate()
    for size in (0, 1, 900, 5000):
        payload = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        assert envelope.unseal(seal_as(me, payload), [me]).payload == payload
    small = [len(seal_as(me, b"a" * n)) for n in (10, 200, 400)] * 5
    # All in the smallest bucket: they differ only by the random stanzas age adds to its header.
    assert max(small) - min(small) < 300
    # That bucket is 768 bytes, age's header (a few hundred bytes) on top.
    assert max(small) < 768 + 400
    assert min(len(seal_as(me, b"a" * 1100)) for _ in range(5)) > max(small) + 700


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000))
def test_unseal_of_any_bytes_raises_only_memsync_error(data: bytes) -> None:
    me = pyrage.x25519.Identity.generate()
    with pytest.raises(MemsyncError):
        envelope.unseal(data, [me])


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2000), st.integers(min_value=0, max_value=255))
def test_unseal_of_a_changed_or_cut_ciphertext_raises(at: int, flip: int) -> None:
    me = pyrage.x25519.Identity.generate()
    sealed = seal_as(me, b"the harbor site blocks requests")
    at %= len(sealed)
    changed = sealed[:at] + bytes([sealed[at] ^ (flip or 1)]) + sealed[at + 1 :]
    for bad in (changed, sealed[:at]):
        with pytest.raises(MemsyncError):
            envelope.unseal(bad, [me])


def test_a_signature_binds_its_signer_and_its_place_on_the_branch() -> None:
    me, other = pyrage.x25519.Identity.generate(), pyrage.x25519.Identity.generate()
    opened = envelope.unseal(seal_as(me, b"bundle", parent="a" * 40), [me])
    assert opened.payload == b"bundle" and opened.signer == Member(
        keys.public_key(me), keys.signing_public(me)
    )
    assert Members.parse(opened.members).recipients == [keys.public_key(me)]
    assert opened.verify("a" * 40)
    # Replayed elsewhere on the branch, claimed by another device, or a byte of the record changed.
    assert not opened.verify("b" * 40) and not opened.verify(None)
    assert not replace(opened, signer=Member(keys.public_key(me), keys.signing_public(other))).verify(
        "a" * 40
    )
    assert not replace(opened, record=opened.record[:-1] + b"X").verify("a" * 40)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=1, max_value=3))
def test_any_signed_body_or_member_list_raises_only_memsync_error(body: bytes, version: int) -> None:
    me = pyrage.x25519.Identity.generate()
    plain = envelope.MAGIC + bytes([version]) + len(body).to_bytes(8, "big") + body
    sealed = pyrage.encrypt(plain + bytes(envelope.bucket(len(plain)) - len(plain)), [me.to_public()])
    try:
        opened = envelope.unseal(sealed, [me])
    except MemsyncError:
        return
    assert opened.verify(None) in (True, False)
    for data in (opened.members, body):
        with contextlib.suppress(MemsyncError):
            Members.parse(data)


# --- devices -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_remote_holds_nothing_readable_after_three_devices_sync(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    tokens = [f"tok{i:03d}zq" for i in range(200)]
    # Tokens in host and author names, role names, project names, file names and entry text.
    hosts = [f"host{tokens[i]}" for i in range(3)]
    devices: list[Peer] = []
    roles: list[Path] = []
    for n, host in enumerate(hosts):
        live = tmp_path / f"live-{n}" / ".agents" / "memory" / f"role{tokens[3 + n]}"
        live.mkdir(parents=True)
        roles.append(live)
        extra = {str(live): f"projects/proj{tokens[6 + n]}/role{tokens[3 + n]}"}
        member = devices[0] if devices else None
        devices.append(encrypted_peer(tmp_path, host, remote, member, extra_tracks=extra))
    for n, peer in enumerate(devices):
        (roles[n] / f"note{tokens[9 + n]}.md").write_text(f"curated {tokens[12 + n]}\n")
        for token in tokens[15 + n :: 3]:
            peer.append_entry(f"the deploy host for {token} is behind the bastion")
    for _ in range(2):
        for peer in devices:
            cli_ok(peer, "sync")
    texts = [peer.read_store(MEMORY_STORE) for peer in devices]
    assert texts[0] == texts[1] == texts[2]
    assert all(token.encode() in texts[0] for token in tokens[15:])  # the memory did sync
    held = remote_bytes(remote)
    found = [token for token in tokens if token.encode() in held]
    assert found == []
    windows = {texts[0][i : i + 16] for i in range(len(texts[0]) - 15)}
    assert [w for w in windows if w in held] == []
    authors = subprocess.run(
        ["git", "log", "--all", "--format=%an %ae %cn %ce %s %b"], cwd=remote, capture_output=True, text=True
    ).stdout
    assert set(authors.split()) == {"memsync", "memsync@invalid", "sealed"}


@pytest.mark.slow
def test_two_devices_appending_at_once_converge_losing_nothing(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = encrypted_peer(tmp_path, "alice", remote)
    bob = encrypted_peer(tmp_path, "bob", remote, member=alice)
    with alice.running(), bob.running():
        lines = []
        for i in range(6):
            lines.append(alice.append_entry(f"alice lesson {i}"))
            lines.append(bob.append_entry(f"bob lesson {i}"))
        for peer in (alice, bob):
            wait_for(
                lambda peer=peer: all(line in peer.memory_file.read_bytes() for line in lines),
                timeout=60,
                what=f"{peer.name} has every line",
            )
    for peer in (alice, bob):
        live = peer.memory_file.read_bytes()
        assert b"<<<<<<<" not in live and b">>>>>>>" not in live
        assert sorted(line for line in live.splitlines(keepends=True) if b"lesson" in line) == sorted(lines)
    assert alice.read_store(MEMORY_STORE) == bob.read_store(MEMORY_STORE)


@pytest.mark.slow
def test_a_device_added_later_reads_all_history(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = encrypted_peer(tmp_path, "alice", remote)
    early = []
    for i in range(3):
        early.append(alice.append_entry(f"early lesson {i}"))
        cli_ok(alice, "sync")
    carol = Peer.create(tmp_path, "carol", remote, init_store=False)
    # Before a member adds its key: an error that says so, and no store (never an empty one).
    refused = carol.cli("store", "add", "team", "--remote", str(remote), "--encrypt")
    assert refused.returncode == 1
    assert "none of its encrypted bundles is sealed for this device's key" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "team" not in carol.config.read_text()
    assert not (carol.home / ".local" / "share" / "memsync" / "stores" / "team").exists()
    carol = encrypted_peer(tmp_path / "again", "carol", remote, member=alice)
    listed = cli_ok(alice, "key", "list").stdout
    assert listed.count("age1") == 2 and "(this device)" in listed
    cli_ok(carol, "sync")
    assert all(line in carol.memory_file.read_bytes() for line in early)
    late = carol.append_entry("carol's first lesson")
    cli_ok(carol, "sync")
    cli_ok(alice, "sync")
    assert late in alice.memory_file.read_bytes()
    # Carol loses her key: an error saying so, her memory kept, no new key made behind her back.
    (carol.config.parent / "device.key").unlink()
    alice.append_entry("said while carol has no key")
    cli_ok(alice, "sync")
    lost = carol.cli("sync")
    assert "no device key" in lost.stderr and "cannot read an encrypted remote" in lost.stderr
    assert not (carol.config.parent / "device.key").exists()
    assert late in carol.memory_file.read_bytes() and all(
        line in carol.read_store(MEMORY_STORE) for line in early
    )


def _push_sealed(tmp_path: Path, remote: Path, data: bytes, name: str) -> str:
    """Append a ciphertext commit holding ``data`` to the remote's branch, as any writer of the remote
    could; returns its sha."""
    vault = Vault(tmp_path / f"{name}.git", str(remote), "main", 30.0, None)
    assert vault.fetch() is None
    commit = vault.append(data)
    assert vault.push(commit, b"").ok
    return commit


@pytest.mark.slow
def test_bad_ciphertext_is_named_in_one_line_each_and_nothing_taken_from_it(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = encrypted_peer(tmp_path, "alice", remote)
    bob = encrypted_peer(tmp_path, "bob", remote, member=alice)
    kept = alice.append_entry("alice keeps this")
    cli_ok(alice, "sync")
    cli_ok(bob, "sync")
    # A bundle that would add a poison line on top of the remote's history, sealed four bad ways.
    clone = tmp_path / "forger"
    subprocess.run(["git", "clone", "-q", str(alice.store), str(clone)], check=True)
    with (clone / MEMORY_STORE).open("ab") as out:
        out.write(b'{"id":"poison","kind":"lesson","text":"POISON"}\n')
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "forged"], check=True)
    bundle = tmp_path / "forged.bundle"
    subprocess.run(
        ["git", "-C", str(clone), "bundle", "create", "-q", str(bundle), "main", "^origin/main"], check=True
    )
    key = pyrage.x25519.Identity.from_str((alice.config.parent / "device.key").read_text().strip())
    sealed = seal_as(key, bundle.read_bytes())
    plain = envelope.MAGIC + bytes([envelope.FORMAT + 1]) + len(b"x").to_bytes(8, "big") + b"x"
    bad = {
        "tampered": sealed[:400] + bytes([sealed[400] ^ 1]) + sealed[401:],
        "truncated": sealed[: len(sealed) // 2],
        "wrong key": seal_as(pyrage.x25519.Identity.generate(), bundle.read_bytes()),
        "newer format": pyrage.encrypt(plain + bytes(1024 - len(plain)), [key.to_public()]),
    }
    commits = {
        case: _push_sealed(tmp_path, remote, data, case.replace(" ", "-")) for case, data in bad.items()
    }
    later = bob.append_entry("bob writes after the bad ones")
    cli_ok(bob, "sync")
    done = cli_ok(alice, "sync")
    warnings = [line for line in done.stderr.splitlines() if "cannot be read" in line]
    assert len(warnings) == 4, done.stderr
    for (case, commit), line in zip(commits.items(), warnings, strict=True):
        assert commit[:10] in line, (case, line)
    assert "newer than this memsync" in warnings[3] and "not encrypted for this device" in warnings[2]
    assert "damaged" in warnings[0] and "damaged" in warnings[1]
    live = alice.memory_file.read_bytes()
    assert b"POISON" not in live and b"POISON" not in alice.read_store(MEMORY_STORE)
    assert kept in live and later in live  # the rest synced
    again = cli_ok(alice, "sync")
    assert "cannot be read" not in again.stderr  # named once, not on every cycle


@pytest.mark.slow
def test_a_removed_device_that_still_pushes_is_refused_by_name_and_the_rest_syncs_on(tmp_path: Path) -> None:
    remote, (alice, bob, carol), _ = synced_members(
        tmp_path, "before carol's removal", "alice", "bob", "carol"
    )
    known = {
        peer.name: re.search(
            r"key: (age1\w+) (ed25519:\S+)\nverification code: (\S+)",
            cli_ok(peer, "join", str(peer.home)).stdout,
        )
        for peer in (alice, bob, carol)
    }
    assert all(found is not None for found in known.values())
    age, _, device = known["carol"].groups()  # type: ignore[union-attr]
    unknown = alice.cli("key", "remove", "0000-0000")
    assert unknown.returncode == 1 and unknown.stderr == (
        "memsync: cannot remove 0000-0000: no member has that code in store main. "
        "Give the public key `memsync key list` shows\n"
    )
    removed = cli_ok(alice, "key", "remove", device).stdout  # the device id `key list` shows first
    assert removed.startswith(f"store main: removed {age}: ")
    cli_ok(bob, "sync")
    # Carol keeps her keys and the members' public keys. Her memsync, told of her removal, pushes nothing
    # more; she seals a well-formed bundle of another commit, signed by her, for every device she knew,
    # on top of the remote's tip, and pushes it with plain git.
    forged = carol.append_entry("FORGED by a removed device")
    assert "this device was removed" in carol.cli("sync").stderr
    with (carol.store / MEMORY_STORE).open("ab") as out:
        out.write(b'{"id":"forged-2","kind":"lesson","text":"FORGED with plain git"}\n')
    subprocess.run(["git", "-C", str(carol.store), "commit", "-qam", "forged"], check=True)
    bundle = subprocess.run(
        ["git", "-C", str(carol.store), "bundle", "create", "-", "main", "^refs/remotes/origin/main"],
        capture_output=True,
        check=True,
    ).stdout
    members = Members(tuple(Member(*found.groups()[:2]) for found in known.values()))  # type: ignore[union-attr]
    clone = tmp_path / "carol-forges"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    tip = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    me = pyrage.x25519.Identity.from_str((carol.config.parent / "device.key").read_text().strip())
    sealed = envelope.seal(
        bundle, members.recipients, identity=me, members=members.dump(), parent=tip.strip()
    )
    (clone / "data.age").write_bytes(sealed)
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "sealed"], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"], check=True)
    said = bob.append_entry("bob writes after carol left")
    for peer in (bob, alice):
        done = cli_ok(peer, "sync")
        refused = [line for line in done.stderr.splitlines() if "not a member" in line]
        assert len(refused) == 1 and f"device {device}" in refused[0], done.stderr
        for text in (forged, b"FORGED with plain git"):
            assert text not in peer.memory_file.read_bytes() and text not in peer.read_store(MEMORY_STORE)
    assert said in alice.memory_file.read_bytes()  # the rest syncs on
    reply = alice.append_entry("alice answers bob")
    cli_ok(alice, "sync")
    again = cli_ok(bob, "sync")
    assert reply in bob.memory_file.read_bytes() and "not a member" not in again.stderr  # named once
    assert forged in carol.memory_file.read_bytes()  # nothing lost on her side either (nor written)
    listed = cli_ok(alice, "key", "list").stdout
    assert device not in listed and listed.count("signs") == 2 and "(this device)" in listed


def _push_ciphertext(clone: Path, *sealed: bytes) -> None:
    """Commit each of ``sealed`` in turn as the ``data.age`` of the ciphertext clone ``clone``, then push
    them with plain git, as any writer of the remote could."""
    for data in sealed:
        (clone / "data.age").write_bytes(data)
        subprocess.run(["git", "-C", str(clone), "commit", "-qam", "sealed"], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD:main"], check=True)


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.slow
def test_bundles_built_on_a_missed_one_are_named_once_and_the_next_snapshot_mends_it(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = encrypted_peer(tmp_path, "alice", remote)
    bob = encrypted_peer(tmp_path, "bob", remote, member=alice)
    alice.append_entry("alice's first line")
    for peer in (alice, bob, alice):
        cli_ok(peer, "sync")
    # Alice's bundle of commit X is sealed for her alone (as for a key bob no longer holds); her next two
    # build on X, sealed and signed for both as usual.
    work = tmp_path / "alice-work"
    subprocess.run(["git", "clone", "-q", str(alice.store), str(work)], check=True)
    bundles = []
    for n, text in enumerate(("MISSED by bob", "BUILT on it", "BUILT again")):
        with (work / MEMORY_STORE).open("ab") as out:
            out.write(b'{"id":"x%d","kind":"lesson","text":"%s"}\n' % (n, text.encode()))
        subprocess.run(["git", "-C", str(work), "commit", "-qam", text], check=True)
        base = "origin/main" if n == 0 else "main~1"
        bundles.append(
            subprocess.run(
                ["git", "-C", str(work), "bundle", "create", "-", "main", f"^{base}"],
                capture_output=True,
                check=True,
            ).stdout
        )
    me = pyrage.x25519.Identity.from_str((alice.config.parent / "device.key").read_text().strip())
    bob_keys = re.search(r"key: (age1\w+) (ed25519:\S+)", cli_ok(bob, "join", str(bob.home)).stdout)
    assert bob_keys is not None
    members = Members((Member(keys.public_key(me), keys.signing_public(me)), Member(*bob_keys.groups())))
    clone = tmp_path / "ciphertext"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    for n, bundle in enumerate(bundles):
        recipients = members.recipients[:1] if n == 0 else members.recipients
        sealed = envelope.seal(bundle, recipients, identity=me, members=members.dump(), parent=_head(clone))
        _push_ciphertext(clone, sealed)
    # Bob reads before any member did: the two bundles on X wait, and he does not push.
    done = cli_ok(bob, "sync")
    named = [line for line in done.stderr.splitlines() if "encrypted bundle" in line]
    assert len(named) == 2, done.stderr
    assert "cannot be read: not encrypted for this device's key" in named[0]
    assert "2 later encrypted bundle(s) build on commits of bundle" in named[1] and "key add" in named[1]
    assert b"MISSED" not in bob.read_store(MEMORY_STORE)
    mine = bob.append_entry("bob's line waits")
    assert "missed a bundle the newest build on" in bob.cli("sync").stderr
    assert mine in bob.read_store(MEMORY_STORE)
    # Alice reads X, sealed for fewer devices than the members: her next push makes a snapshot on top,
    # the whole history sealed for both, and bob's next sync takes it all, with no `key add`.
    said = alice.append_entry("alice's own line, on top")
    cli_ok(alice, "sync")
    mended = cli_ok(bob, "sync")
    assert "encrypted bundle" not in mended.stderr, mended.stderr
    cli_ok(alice, "sync")
    assert mine in alice.memory_file.read_bytes()
    for forged in (b"MISSED by bob", b"BUILT on it", b"BUILT again"):
        assert forged in bob.read_store(MEMORY_STORE) and forged in alice.read_store(MEMORY_STORE)
    assert said in bob.memory_file.read_bytes()


@pytest.mark.slow
def test_a_rotated_key_reads_all_history_and_the_old_one_nothing_new(tmp_path: Path) -> None:
    remote, (alice, bob), early = synced_members(tmp_path, "before the rotation", "alice", "bob")
    old = (bob.config.parent / "device.key").read_text()
    rotated = cli_ok(bob, "key", "rotate")
    assert "opens nothing pushed from now on" in rotated.stdout
    assert (bob.config.parent / "device.key").read_text() != old
    assert len((bob.config.parent / "device.key").read_text().split()) == 1
    late = alice.append_entry("after the rotation")
    cli_ok(alice, "sync")
    cli_ok(bob, "sync")
    assert early in bob.memory_file.read_bytes() and late in bob.memory_file.read_bytes()
    listed = cli_ok(alice, "key", "list").stdout
    assert listed.count("age1") == 2
    sealed = Vault(tmp_path / "look.git", str(remote), "main", 30.0, None)
    assert sealed.fetch() is None
    tip = sealed.unread()[-1].data
    with pytest.raises(MemsyncError):
        envelope.unseal(tip, [pyrage.x25519.Identity.from_str(old.strip())])


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["ssh_remote", "https_remote"])
def test_devices_sync_sealed_over_real_transports(
    tmp_path: Path, transport: str, request: pytest.FixtureRequest
) -> None:
    remote: Remote = request.getfixturevalue(transport)
    alice = encrypted(remote.peer(tmp_path, "alice", init_store=False))
    bob = encrypted(remote.peer(tmp_path, "bob", init_store=False), member=alice)
    line = alice.append_entry("the staging host is behind the bastion")
    cli_ok(alice, "sync")
    cli_ok(bob, "sync")
    assert line in bob.memory_file.read_bytes()
    assert b"bastion" not in remote_bytes(remote.path)


@pytest.mark.slow
def test_encrypt_switches_a_plain_store_and_a_plain_device_refuses_the_ciphertext(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    old = alice.append_entry("said before the switch")
    cli_ok(alice, "sync")
    cli_ok(bob, "sync")
    switched = cli_ok(alice, "encrypt", "main")
    assert "stays there in plaintext" in switched.stdout
    new = alice.append_entry("said after the switch")
    cli_ok(alice, "sync")
    held = remote_bytes(remote)
    assert b"said before the switch" in held and b"said after the switch" not in held
    refused = bob.cli("sync")
    assert "it holds encrypted memory and this store is not set to encrypt" in refused.stderr
    assert b"data.age" not in bob.read_store(MEMORY_STORE) and not (bob.store / "data.age").exists()
    assert old in bob.memory_file.read_bytes() and new not in bob.memory_file.read_bytes()


def test_key_export_and_import_restore_the_device_key(tmp_path: Path) -> None:
    peer = Peer.create(tmp_path, "alice", tmp_path / "unused.git", init_store=False)
    joined = cli_ok(peer, "join", str(peer.home)).stdout
    key = peer.config.parent / "device.key"
    assert key.stat().st_mode & 0o777 == 0o600
    backup = tmp_path / "key.backup"
    exported = subprocess.run(
        [sys.executable, "-m", "memsync", "key", "export", str(backup)],
        input="correct horse battery\ncorrect horse battery\n",
        env={**os.environ, **peer.env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    assert key.read_bytes() not in backup.read_bytes() and backup.stat().st_mode & 0o777 == 0o600
    secret = key.read_text()
    key.unlink()
    imported = subprocess.run(
        [sys.executable, "-m", "memsync", "key", "import", str(backup)],
        input="correct horse battery\n",
        env={**os.environ, **peer.env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr
    assert key.read_text() == secret
    assert cli_ok(peer, "join", str(peer.home)).stdout == joined

"""Secrets never leave the machine (DESIGN I6, issue 7 "Secrets"), end to end through `memsync sync`.

Peer A's memory file, daily log and curated entries get secrets of eleven kinds among normal lines. After
A and B sync: no blob reachable on the remote (or in A's store) holds any of them, every other line
reached B, and `memsync status` on A lists each held-back item with its file and line. After the user
rewrites the flagged lines, sync resumes and nothing else is lost. False positives on the real corpus are
counted by ``tests/secrets/test_secrets.py::test_whole_corpus_has_no_findings`` (engineer A), not here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.base.fsio import append_once, atomic_write
from memsync.secrets import scan_text
from tests.support.helpers import bare_remote, remote_blobs
from tests.support.peers import DAY, MEMORY_FILE, Peer, entry_line

pytestmark = pytest.mark.slow

# Made-up credentials in real shapes (none is live): kind -> the text a careless agent writes.
PEM_BODY = (
    "MIIEowIBAAKCAQEAx4Jd8mQpZ2vR7nL0sT5uW9yB3cF6hK1oN4qS8tV2xA5zC7eG\n"
    "pL3mR9vT1wY6bN8cF2hJ5kQ0sU4xA7zD9eG1iK3mO5qS7uW9yB2dF4hJ6lN8pR0t\n"
)
SECRETS = {
    "aws": "the deploy user key id is AKIAQ3EGRTYXPL7NMB2D",
    "github": "CI pushes with ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "github_pat": "release bot token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
    "gitlab": "mirror uses glpat-xYz12AbC34dEf56GhI78jK",
    "slack": "alerts post via xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "openai": "eval runs with sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5vWx",
    "jwt": "session cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password": 'the staging db password = "Tr0ub4dor&3x"',
    "url": "replica at postgres://admin:s3cr3tpw9@db.internal.example.com:5432/app",
    "entropy": "api_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----",
}
# What must never appear in any blob: each secret's value (and each line of the key block).
NEEDLES = [
    "AKIAQ3EGRTYXPL7NMB2D",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "github_pat_11ABCDEFG",
    "glpat-xYz12AbC34dEf56GhI78jK",
    "xoxb-123456789012",
    "sk-proj-Ab3dEf5hIj7lMn9",
    "eyJhbGciOiJIUzI1",
    "Tr0ub4dor&3x",
    "s3cr3tpw9",
    "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "BEGIN RSA PRIVATE KEY",
    *PEM_BODY.split(),
]
IN_MEMORY = ("aws", "github", "slack", "jwt", "entropy", "pem")
IN_DAILY = ("github_pat", "openai", "url", "pem")
IN_CURATED = ("gitlab", "password", "pem")


def leaked(repo: Path) -> list[str]:
    """The needles found in any blob of ``repo``."""
    blobs = remote_blobs(repo)
    return [needle for needle in NEEDLES if any(needle.encode() in blob for blob in blobs)]


def sync(peer: Peer) -> None:
    result = peer.cli("sync")
    assert result.returncode == 0, result.stderr


def test_secrets_of_eleven_kinds_are_held_back_and_everything_else_syncs(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    daily = alice.role_dir / "daily" / f"{DAY}.md"
    daily.parent.mkdir(parents=True)

    normal_memory: list[bytes] = []
    held_memory: dict[int, str] = {}  # line number -> kind
    for i, kind in enumerate(IN_MEMORY):
        normal_memory.append(alice.append_entry(f"normal lesson {i}: retry the flaky probe once"))
        alice.append_entry(SECRETS[kind])
        held_memory[2 + 2 * i + 1] = kind  # line 1 is the header
    normal_memory.append(alice.append_entry("normal lesson last: keep PRs small"))

    normal_daily: list[bytes] = [f"# {DAY}\n".encode()]
    held_daily: dict[int, str] = {}
    text = normal_daily[0]
    for i, kind in enumerate(IN_DAILY):
        line = f"- [09:{i:02d}] ran the suite, all green\n".encode()
        normal_daily.append(line)
        text += line
        held_daily[text.count(b"\n") + 1] = kind
        text += f"- [09:{i:02d}] note: {SECRETS[kind]}\n".encode()
    normal_daily.append(b"- [10:00] done for today\n")
    text += normal_daily[-1]
    append_once(daily, text, create=True)

    for kind in IN_CURATED:
        alice.write_curated(f"creds_{kind}", f"How to reach the box.\n\n{SECRETS[kind]}\n")
    clean = alice.write_curated("clean_entry", "Nothing secret here: use the staging host.\n")

    sync(alice)
    sync(bob)
    assert leaked(remote) == [] and leaked(alice.store) == []
    bob_memory, bob_daily = bob.read_live(MEMORY_FILE), bob.read_live(f"daily/{DAY}.md")
    assert all(line in bob_memory for line in normal_memory)
    assert all(line in bob_daily for line in normal_daily)
    assert bob.read_live("clean_entry.md") == clean
    assert not any((bob.role_dir / f"creds_{kind}.md").exists() for kind in IN_CURATED)

    status = alice.status()["stores"]["main"]["held_back_secrets"]
    listed = {(item["file"], item["line"]) for item in status}
    expected = {(str(alice.memory_file), n) for n in held_memory}
    # The key block in the daily log is held back whole: its BEGIN line is listed (the body lines too).
    expected |= {(str(daily), n) for n in held_daily}
    expected |= {(str(alice.role_dir / f"creds_{kind}.md"), 9) for kind in IN_CURATED}
    assert expected <= listed
    assert {file for file, _ in listed} == {file for file, _ in expected}
    human = alice.cli("status").stdout
    assert f"held back (secret): {alice.memory_file}:{min(held_memory)}" in human
    assert len(status) >= len(IN_MEMORY) + len(IN_DAILY) + len(IN_CURATED)

    # The user rewrites every flagged line (an editor saves the whole file), and agents go on writing.
    memory = alice.memory_file.read_bytes().splitlines(keepends=True)
    for n in held_memory:
        memory[n - 1] = entry_line(f"credential for {held_memory[n]} lives in the vault, not here")
    atomic_write(alice.memory_file, b"".join(memory))
    redacted = b"".join(
        line
        for line in text.splitlines(keepends=True)
        if not any(needle.encode() in line for needle in NEEDLES)
    )
    vault_note = b"- [09:59] secrets moved to the vault\n"
    atomic_write(daily, redacted.replace(b"- [10:00] done", vault_note + b"- [10:00] done"))
    for kind in IN_CURATED:
        alice.write_curated(f"creds_{kind}", "How to reach the box.\n\nThe key is in the vault.\n")
    after = [alice.append_entry("after the fix: memory flows again")]
    sync(alice)
    sync(bob)
    assert alice.status()["stores"]["main"]["held_back_secrets"] == []
    assert leaked(remote) == []
    bob_memory, bob_daily = bob.read_live(MEMORY_FILE), bob.read_live(f"daily/{DAY}.md")
    assert all(line in bob_memory for line in [*normal_memory, *after, *memory[1:]])
    assert all(line in bob_daily for line in normal_daily)
    assert b"secrets moved to the vault" in bob_daily
    for kind in IN_CURATED:
        assert bob.read_live(f"creds_{kind}.md").endswith(b"The key is in the vault.\n")


def test_every_line_of_a_private_key_block_is_flagged_not_only_its_begin_line() -> None:
    text = f"- [09:00] before\n{SECRETS['pem']}\n- [09:01] after\n\n"
    flagged = {finding.line for finding in scan_text(text)}
    assert flagged == {2, 3, 4, 5}
    unterminated = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n\n"
    assert {finding.line for finding in scan_text(unterminated)} == {1, 2}


def test_a_key_block_written_across_two_cycles_is_held_back_whole(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alice = Peer.create(tmp_path, "alice", remote)
    alice.append_daily("- [09:00] pasting the deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n")
    sync(alice)
    alice.append_daily(PEM_BODY + "-----END RSA PRIVATE KEY-----\n- [09:01] done\n")
    sync(alice)
    assert leaked(remote) == []

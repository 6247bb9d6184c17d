"""The store facts a cycle writes to status.json (both kept, set aside, untracked, size) are brought up to
date from the store paths the cycle changed, and always equal what a full walk (`memsync status`) finds:
real `memsync sync` runs, a real bare remote, and another peer's pushes from a plain git clone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.support.helpers import git
from tests.support.peers import ROLE_STORE, Peer, sync

FACTS = ("both_kept", "set_aside", "untracked")


def status_file(peer: Peer) -> dict[str, Any]:
    data = json.loads((peer.store / ".git" / "memsync" / "status.json").read_text())
    assert isinstance(data, dict)
    return data


def push_from_clone(work: Path, files: dict[str, bytes | None]) -> None:
    """Write (or, for None, delete) store paths in the plain clone ``work`` and push them."""
    git(work, "pull", "-q", "--no-rebase")
    for rel, data in files.items():
        if data is None:
            (work / rel).unlink()
        else:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(data)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "another peer")
    git(work, "push", "-q", "origin", "main")


def assert_facts_match_a_walk(peer: Peer) -> dict[str, Any]:
    written = status_file(peer)
    walked = peer.status()["stores"]["main"]
    for key in FACTS:
        assert written[key] == walked[key], key
    return written


def test_cycle_facts_follow_the_changes_and_equal_a_full_walk(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    alice.write_curated("plain", "nothing special\n")
    sync(alice)
    first = assert_facts_match_a_walk(alice)
    assert first["untracked"] == [] and first["both_kept"] == []
    work = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    note = f"{BOTH_KEPT_NOTE_PREFIX} (bench)\n\nversion one\n".encode()
    push_from_clone(
        work,
        {
            "roles/other-role/notes.md": b"another role's note\n",
            f"{ROLE_STORE}/kept.md": note,
            f"{ROLE_STORE}/old.conflict-file.md": b"set aside\n",
        },
    )
    sync(alice)
    second = assert_facts_match_a_walk(alice)
    assert second["untracked"] == ["roles/other-role/"]
    assert second["both_kept"] == [str(alice.role_dir / "kept.md")]
    assert second["set_aside"] == [str(alice.role_dir / "old.conflict-file.md")]
    assert second["facts_head"] == alice.store_git("rev-parse", "HEAD").strip()
    assert second["size_bytes"] > first["size_bytes"]
    push_from_clone(
        work,
        {"roles/other-role/notes.md": None, f"{ROLE_STORE}/kept.md": b"settled by hand\n"},
    )
    sync(alice)
    third = assert_facts_match_a_walk(alice)
    assert third["untracked"] == [] and third["both_kept"] == []
    assert third["set_aside"] == [str(alice.role_dir / "old.conflict-file.md")]

"""kill -9 of `memsync sync` at random instants while it merges thousands of files, some of them clashing
(DESIGN I7): a merge git wrote into worktree and index but never committed must be undone on restart,
never committed as a local change without the merge's parent (which made the next merge nest the
both-kept note once more per kill: found by a tester, 5 levels after 8 kills)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from tests.support.peers import Peer


@pytest.mark.slow
def test_kills_during_a_big_first_merge_leave_one_note_per_clashing_file(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    notes = 3000
    for peer in (alice, bob):
        (peer.role_dir / "notes").mkdir()
    for i in range(notes):
        (alice.role_dir / "notes" / f"n{i:05d}.md").write_text(f"alice note {i}\n")
    clashing = range(0, notes, 50)
    for i in clashing:
        (bob.role_dir / "notes" / f"n{i:05d}.md").write_text(f"bob's version of {i}\n")
    assert alice.cli("sync", timeout=300).returncode == 0
    rng = random.Random(1)
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-m", "memsync", "sync"],
            env={**os.environ, **bob.env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.4, 3.0))
        proc.kill()
        proc.wait()
    for peer in (bob, alice, bob):
        result = peer.cli("sync", timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    for peer in (alice, bob):
        for i in clashing:
            text = (peer.role_dir / "notes" / f"n{i:05d}.md").read_text()
            assert text.count(BOTH_KEPT_NOTE_PREFIX) == 1 and text.count(f"alice note {i}\n") == 1, text
            assert text.count(f"bob's version of {i}\n") == 1, text
        assert (peer.role_dir / "notes" / "n00001.md").read_text() == "alice note 1\n"

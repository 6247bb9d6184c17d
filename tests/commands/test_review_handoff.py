"""The review gate covers handoff: what a handoff brings into a memory file of a store set to review is
proposed, not written, and a second handoff of the same memory proposes nothing new."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import bare_remote, run_cli
from tests.support.peers import HEADER


def _ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


@pytest.mark.slow  # a store, a track, two handoffs and an approval: about 30 s on a busy machine
def test_a_handoff_into_a_reviewed_store_is_proposed_not_written(home: Path, tmp_path: Path) -> None:
    _ok("init", "--host", "ada")
    _ok("store", "add", "team", "--remote", str(bare_remote(tmp_path / "team.git")), "--review")
    live = home / "team" / "shared.jsonl"
    live.parent.mkdir()
    live.write_bytes(HEADER)
    _ok("track", str(live), "--store", "team", "--yes")
    role = home / "work" / ".agents" / "memory" / "dev"
    role.mkdir(parents=True)
    text = "The release checklist lives in docs/release.md."
    (role / "release.md").write_text(f"---\nname: release\ndescription: {text}\ntype: project\n---\n")

    said = _ok("handoff", str(role), str(live), "--yes")
    assert "1 proposed for review" in said, said
    assert live.read_bytes() == HEADER  # no live line: no session-start context, no recall
    waiting = _ok("review")
    assert text in waiting and "team:" in waiting
    again = _ok("handoff", str(role), str(live), "--yes")
    assert "0 handed, 1 already present" in again and "proposed" not in again
    assert _ok("review").count(text) == 1

    pid = waiting.split()[0]
    _ok("review", "approve", pid)
    assert text in live.read_text()

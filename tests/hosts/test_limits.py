"""`status` and `doctor` warn when a synced MEMORY.md grows past what Claude Code loads (200 lines or
25 KB): here a merge of two machines' indexes, each within the limit, pushes it over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.claude_fixtures import checkout, claude_folder
from tests.support.peers import Peer


def index(prefix: str, count: int) -> str:
    return "".join(
        f"- [{prefix} {i}]({prefix}-{i}.md) — what {prefix} learned, number {i}\n" for i in range(count)
    )


@pytest.mark.slow
def test_a_merged_index_past_what_claude_code_loads_is_reported(tmp_path: Path, remote: Path) -> None:
    peers = []
    for name, count in (("alice", 150), ("bob", 120)):
        peer = Peer.create(tmp_path, name, remote)
        project = checkout(peer.home / name / "shop", "git@example.com:org/shop.git")
        claude_folder(peer.home, project, index=index(name, count))
        peer.add_track(peer.home / ".claude" / "projects")
        peers.append(peer)
    a, b = peers
    assert a.cli("sync").returncode == 0
    assert "Claude Code loads only" not in a.cli("status").stdout  # 150 lines: all of it loads

    for peer in (b, a, b):
        assert peer.cli("sync").returncode == 0
    for peer in (a, b):
        status = peer.cli("status")
        assert "has 270 lines" in status.stdout and "loads only the first 200 lines or 25 KB" in status.stdout
        (store,) = json.loads(peer.cli("status", "--json").stdout)["stores"].values()
        (entry,) = store["partly_loaded"]
        assert entry["lines"] == 270 and entry["file"].endswith("/memory/MEMORY.md")
        doctor = peer.cli("doctor")
        assert "WARN Claude Code index:" in doctor.stdout and "has 270 lines" in doctor.stdout

"""`memsync log` and the MCP `history` tool with several stores, `--since/--host/-n`, local times."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memsync.mcp.tools import history
from tests.support.helpers import bare_remote, cli_main, run_cli


def _ok(*args: str) -> str:
    result = cli_main(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def two_stores(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A personal and a team store, each with one synced memory file: (personal file, team file)."""
    _ok("init", "--host", "ada")
    personal = home / ".agent-memory" / "notes.jsonl"
    _ok("remember", "Personal: use uv.", "--file", str(personal))
    _ok("store", "add", "team", "--remote", str(bare_remote(tmp_path / "team.git")))
    team = home / "team" / "shared.jsonl"
    team.parent.mkdir()
    _ok("remember", "Team: deploys on Tuesdays.", "--file", str(team))
    _ok("track", str(team), "--store", "team")
    _ok("sync")
    return personal, team


def test_log_of_a_live_path_asks_only_the_store_that_tracks_it(two_stores: tuple[Path, Path]) -> None:
    personal, team = two_stores
    for live, store, other in [(personal, "personal", "team"), (team, "team", "personal")]:
        result = cli_main("log", str(live))
        assert result.returncode == 0, result.stderr
        assert f"[{store}] " in result.stdout and f"[{other}]" not in result.stdout
        assert f"    memory/{live.name}" in result.stdout.splitlines()
        assert history(str(live), 10).count(f"[{store}] ") == 1  # the MCP tool too


def test_log_filters_by_time_host_and_count_and_shows_local_times(two_stores: tuple[Path, Path]) -> None:
    personal, _ = two_stores
    _ok("config", "set", "host", "bob")
    _ok("remember", "Bob was here.", "--file", str(personal))
    _ok("sync")
    # A process of its own: the zone is read once, at the interpreter's start.
    zoned = run_cli("log", env={"TZ": "Asia/Kolkata"})
    assert zoned.returncode == 0, zoned.stderr
    everything = zoned.stdout
    heads = [line for line in everything.splitlines() if not line.startswith(" ")]
    assert len(heads) >= 3 and all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST  ", h) for h in heads), heads
    assert heads[0].split()[3] == "bob"  # newest first, over both stores

    bob = [line for line in _ok("log", "--host", "bob").splitlines() if not line.startswith(" ")]
    assert len(bob) == 1 and "bob" in bob[0] and "ada" not in bob[0]
    newest = [line for line in _ok("log", "-n", "2").splitlines() if not line.startswith(" ")]
    assert len(newest) == 2 and newest[0].split()[4] == heads[0].split()[4]  # the same sha
    assert _ok("log", "--since", "2999-01-01") == ""
    assert len(
        [ln for ln in _ok("log", "--since", "2000-01-01").splitlines() if not ln.startswith(" ")]
    ) == len(heads)
    bad = cli_main("log", "--since", "last week")
    assert bad.returncode == 1 and "--since 'last week' is not a date" in bad.stderr

"""Memory moved from one store into another that syncs with another remote (a personal role handed to a
role tracked into the team store, a personal path tracked into it, an MCP write into a team file) needs
the user's say: `--yes` on the CLI, the `store` argument for the MCP tools; without it one line names
the receiving store and remote, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.support.handoff_fixtures import tree, write_memory, write_role
from tests.support.helpers import bare_remote, cli_main
from tests.support.mcp_client import call, mcp_session, ok, text_of


def _two_stores(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A personal store (remote personal.git) tracking ~/.agents/memory with role qa in it, and a team
    store (remote team.git) tracking ~/.agents/memory/reviewer, tracked before it existed."""
    write_role(home / ".agents" / "memory" / "qa")
    personal, team = bare_remote(tmp_path / "personal.git"), bare_remote(tmp_path / "team.git")
    assert cli_main("init", "--remote", str(personal)).returncode == 0
    assert cli_main("store", "add", "team", "--remote", str(team)).returncode == 0
    tracked = cli_main("track", str(home / ".agents" / "memory" / "reviewer"), "--store", "team")
    assert tracked.returncode == 0, tracked.stderr
    (home / ".agents" / "memory" / "reviewer").mkdir()
    (home / ".agents" / "memory" / "reviewer" / "MEMORY.md").write_text("# Memory index — reviewer\n")
    return personal, team


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def test_handoff_into_a_team_role_needs_yes(home: Path, tmp_path: Path) -> None:
    _, team = _two_stores(home, tmp_path)
    reviewer = home / ".agents" / "memory" / "reviewer"
    before = tree(reviewer)

    refused = cli_main("handoff", "qa", "reviewer")

    assert refused.returncode == 1 and refused.stdout == ""
    line = refused.stderr.strip()
    assert "\n" not in line and "store team" in line and str(team) in line and "--yes" in line
    assert tree(reviewer) == before
    # Within one store nothing crosses: no --yes needed.
    same = cli_main("handoff", "qa", str(home / ".agents" / "memory" / "dev"))
    assert same.returncode == 0, same.stderr
    assert "syncs with" not in same.stdout
    handed = cli_main("handoff", "qa", "reviewer", "--yes")
    assert handed.returncode == 0, handed.stderr
    assert f"reviewer syncs with store team (remote origin {team}), which receives it" in handed.stdout
    assert tree(reviewer) != before and (reviewer / "MEMORY.md").read_text().count("\n- ") >= 1


def test_tracking_a_synced_personal_role_into_the_team_store_needs_yes(home: Path, tmp_path: Path) -> None:
    _, team = _two_stores(home, tmp_path)
    config = _config(home).read_bytes()
    qa = home / ".agents" / "memory" / "qa"

    refused = cli_main("track", str(qa), "--store", "team")

    assert refused.returncode == 1
    assert "store team" in refused.stderr and str(team) in refused.stderr and "--yes" in refused.stderr
    assert _config(home).read_bytes() == config
    moved = cli_main("track", str(qa), "--store", "team", "--yes")
    assert moved.returncode == 0, moved.stderr
    assert f"goes to store team (remote origin {team})" in moved.stdout


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_mcp_remember_and_handoff_into_team_memory_need_the_store(home: Path, tmp_path: Path) -> None:
    _, team = _two_stores(home, tmp_path)
    notes = write_memory(home / "team-notes" / "shared.jsonl", [])
    assert cli_main("track", str(notes), "--store", "team").returncode == 0
    before = notes.read_bytes()
    reviewer = home / ".agents" / "memory" / "reviewer"
    reviewer_before = tree(reviewer)

    async def scenario() -> None:
        with (tmp_path / "mcp.log").open("w") as errlog:
            async with mcp_session({}, errlog) as session:
                refused = await call(session, "remember", {"text": "Ship on Fridays.", "file": "shared"})
                assert refused.is_error and "store team" in text_of(refused) and str(team) in text_of(refused)
                assert notes.read_bytes() == before
                wrong = await call(
                    session, "remember", {"text": "Ship on Fridays.", "file": "shared", "store": "personal"}
                )
                assert wrong.is_error and notes.read_bytes() == before
                done = await ok(
                    session, "remember", {"text": "Ship on Fridays.", "file": "shared", "store": "team"}
                )
                assert done["file"] == str(notes)
                handoff = await call(session, "handoff", {"from_agent": "qa", "to_agent": "reviewer"})
                assert handoff.is_error and "store team" in text_of(handoff)
                assert tree(reviewer) == reviewer_before
                handed = await ok(
                    session, "handoff", {"from_agent": "qa", "to_agent": "reviewer", "store": "team"}
                )
                assert handed["receivers"] == f"store team (remote origin {team})"

    anyio.run(scenario)
    assert "Ship on Fridays." in [json.loads(line).get("text") for line in notes.read_text().splitlines()]
    assert tree(reviewer) != reviewer_before


def test_mcp_remember_into_the_only_store_needs_no_store_whatever_its_name(
    home: Path, tmp_path: Path
) -> None:
    """An agent's own memory belongs to the config's personal store even when that store is not named
    ``personal`` (a config written by hand, a renamed store): remember into it crosses nothing."""
    assert cli_main("init", "--remote", str(bare_remote(tmp_path / "mine.git"))).returncode == 0
    config = _config(home)
    config.write_text(config.read_text().replace("[stores.personal", "[stores.main"))
    assert "[stores.main" in config.read_text()

    written: list[Path] = []

    async def scenario() -> None:
        with (tmp_path / "mcp.log").open("w") as errlog:
            async with mcp_session({}, errlog) as session:
                done = await ok(session, "remember", {"text": "Ship on Fridays."})
                written.append(Path(done["file"]))

    anyio.run(scenario)
    (memory,) = written
    assert "Ship on Fridays." in [json.loads(line).get("text") for line in memory.read_text().splitlines()]

"""The MCP `handoff` tool reads and writes tracked memory only, as the resources do: through the SDK's own
stdio client, a handoff into any other directory, or from one into a synced role, is refused and writes
nothing; tracked memory by store path or live path, and a new role inside a tracked folder, still work."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.helpers import run_cli
from tests.support.mcp_client import call, mcp_session, ok, server_log, text_of

INDEX = "# Memory index — qa\n\n- [User timezone](user_timezone.md) — works in Europe/Berlin time\n"
CURATED = "---\nname: User timezone\ndescription: works in Europe/Berlin time\ntype: user\n---\n\nCET.\n"
FOREIGN = "---\nname: Planted\ndescription: text from a directory nobody tracks\ntype: user\n---\n\nX.\n"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def tracked_home(home: Path) -> Path:
    """A HOME with memsync initialised: a role directory ``qa`` and a memory file ``ada.jsonl`` in the
    default tracked folders."""
    assert run_cli("init").returncode == 0
    role = home / ".agents" / "memory" / "qa"
    role.mkdir(parents=True)
    (role / "MEMORY.md").write_text(INDEX)
    (role / "user_timezone.md").write_text(CURATED)
    MemoryFile(home / ".agent-memory" / "ada.jsonl").remember(
        NewEntry("Deploys happen on Fridays only, after the freeze.", "fact")
    )
    return home


def test_handoff_refuses_untracked_directories_and_keeps_tracked_ones(
    tracked_home: Path, tmp_path: Path
) -> None:
    home = tracked_home
    role = home / ".agents" / "memory" / "qa"
    outside = tmp_path / "anywhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "MEMORY.md").write_text("- [Planted](planted.md) — from nowhere\n")
    (planted / "planted.md").write_text(FOREIGN)
    before_outside, before_role = _files(outside), _files(role)
    errlog = tmp_path / "server.log"

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                for arguments in (
                    {"from_agent": "ada.jsonl", "to_agent": str(outside)},
                    {"from_agent": "memory/ada.jsonl", "to_agent": str(outside / "new-role")},
                    {"from_agent": str(planted), "to_agent": "qa"},
                    {"from_agent": str(planted), "to_agent": "roles/qa"},
                    {"from_agent": "ada", "to_agent": "roles/../../escape"},
                    {"from_agent": "ada", "to_agent": str(home / ".agents" / "memory" / "qa" / "daily")},
                ):
                    result = await call(session, "handoff", arguments)
                    assert result.is_error, arguments
                    assert "tracked memory only" in text_of(result), text_of(result)

                # Tracked memory by store path and by live path; a new role inside the tracked folder.
                handed = await ok(
                    session, "handoff", {"from_agent": "memory/ada.jsonl", "to_agent": str(role)}
                )
                assert handed["summary"].startswith("ada -> qa: 1 handed")
                new = await ok(session, "handoff", {"from_agent": "roles/qa", "to_agent": "roles/reviewer"})
                assert new["summary"].startswith("qa -> reviewer: 2 handed")

    anyio.run(scenario)
    assert _files(outside) == before_outside and not (home / "escape").exists()
    after_role = _files(role)
    assert not any("Planted" in text.decode() for text in after_role.values())
    assert {name: after_role[name] for name in before_role} != before_role  # ada's entry reached qa
    assert any("Deploys happen on Fridays" in text.decode() for text in after_role.values())
    reviewer = home / ".agents" / "memory" / "reviewer"
    assert any("Europe/Berlin" in text.decode() for text in _files(reviewer).values())
    assert "Traceback" not in server_log(errlog)

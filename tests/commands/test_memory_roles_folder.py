"""A folder of roles (``~/.agents/memory``) stays one whatever lands in it: a stray ``MEMORY.md`` file or
directory, a ``daily/`` or ``snapshot.md`` directory (an agent's handoff, a peer's push) is no role and
hides no role; a handoff never names a new role like that, nor puts one in the folder of memory files."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main, git, run_cli
from tests.support.mcp_client import call, mcp_session, ok, server_log, text_of

CURATED = "---\nname: Fruit\ndescription: the kiwifruitfact of the qa role\ntype: user\n---\n\nKiwi.\n"
INDEX = "# Memory index — qa\n\n- [Fruit](fruit.md) — the kiwifruitfact of the qa role\n"


@pytest.fixture
def roles(home: Path) -> Path:
    """An initialised HOME: role ``qa`` in ``~/.agents/memory``, memory file ``ada.jsonl``."""
    assert cli_main("init").returncode == 0
    qa = home / ".agents" / "memory" / "qa"
    qa.mkdir(parents=True)
    (qa / "MEMORY.md").write_text(INDEX)
    (qa / "fruit.md").write_text(CURATED)
    MemoryFile(home / ".agent-memory" / "ada.jsonl").remember(
        NewEntry("Deploys happen on Fridays only.", "fact")
    )
    return home / ".agents" / "memory"


def test_handoff_refuses_new_roles_with_the_skills_names_or_in_the_memory_folder(
    roles: Path, home: Path, tmp_path: Path
) -> None:
    errlog = tmp_path / "server.log"
    bad = ["roles/MEMORY.md", "roles/daily", "roles/snapshot.md", "roles/x.md", "memory/evildir"]

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                for target in bad:
                    result = await call(
                        session, "handoff", {"from_agent": "memory/ada.jsonl", "to_agent": target}
                    )
                    assert result.is_error and "cannot be a new role" in text_of(result), text_of(result)
                new = await ok(session, "handoff", {"from_agent": "roles/qa", "to_agent": "roles/reviewer"})
                assert new["summary"].startswith("qa -> reviewer: 1 handed")

    anyio.run(scenario)
    assert sorted(p.name for p in roles.iterdir()) == ["qa", "reviewer"]
    assert sorted(p.name for p in (home / ".agent-memory").iterdir()) == ["ada.jsonl"]
    assert "Traceback" not in server_log(errlog)
    refused = cli_main("handoff", "ada", str(roles / "MEMORY.md"))
    assert refused.returncode != 0 and "cannot be a new role" in refused.stderr
    assert not (roles / "MEMORY.md").exists()


def test_stray_index_and_daily_in_the_folder_of_roles_hide_no_role(roles: Path, tmp_path: Path) -> None:
    # What a peer's push or an older handoff leaves behind: each once turned the folder into one role.
    (roles / "MEMORY.md").write_text("- [Stray](stray.md) — pushed by a peer\n")
    (roles / "daily").mkdir()
    (roles / "daily" / "2026-01-01.md").write_text("# Daily log\n")
    (roles / "snapshot.md").mkdir()
    (roles / "snapshot.md" / "x.md").write_text(CURATED)
    found = cli_main("recall", "kiwifruitfact")
    assert found.returncode == 0, found.stderr
    assert "kiwifruitfact" in found.stdout and "roles/qa" in found.stdout, found.stdout
    for stray in ("MEMORY.md", "daily", "snapshot.md"):  # each said once, as no role
        assert found.stderr.count(f"{roles / stray} is not a role") == 1, found.stderr
    errlog = tmp_path / "server.log"

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                assert "Memory index — qa" in await ok(session, "prompt", {"target": "roles/qa"})
                result = await call(session, "prompt", {"target": "roles"})
                assert result.is_error, text_of(result)

    anyio.run(scenario)
    log = server_log(errlog)
    assert "Traceback" not in log


@pytest.mark.slow  # two machines and a third clone, each syncing: about 20 s
def test_a_peers_stray_index_and_daily_hide_no_role_on_any_machine(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a, b = isolated_env(tmp_path / "A"), isolated_env(tmp_path / "B")
    assert run_cli("init", "--host", "alpha", "--remote", str(remote), env=a).returncode == 0
    qa = tmp_path / "A" / ".agents" / "memory" / "qa"
    qa.mkdir(parents=True)
    (qa / "MEMORY.md").write_text(INDEX)
    (qa / "fruit.md").write_text(CURATED)
    assert run_cli("sync", env=a).returncode == 0
    third = tmp_path / "third"
    git(tmp_path, "clone", "-q", str(remote), str(third), env=a)
    (third / "roles" / "MEMORY.md").write_text("- [Stray](stray.md) — pushed by a peer\n")
    (third / "roles" / "daily").mkdir()
    (third / "roles" / "daily" / "2026-01-01.md").write_text("# Daily log\n")
    git(third, "add", "-A", env=a)
    git(third, "commit", "-qm", "stray files", env=a)
    git(third, "push", "-q", "origin", "HEAD:main", env=a)
    assert run_cli("sync", env=a).returncode == 0
    assert run_cli("init", "--host", "beta", "--remote", str(remote), env=b).returncode == 0
    assert run_cli("sync", env=b).returncode == 0
    for env, home in ((a, tmp_path / "A"), (b, tmp_path / "B")):
        assert (home / ".agents" / "memory" / "MEMORY.md").is_file()  # the stray file arrived
        found = run_cli("recall", "kiwifruitfact", env=env)
        assert found.returncode == 0 and "roles/qa" in found.stdout, (home, found.stdout, found.stderr)

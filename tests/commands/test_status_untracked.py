"""An agent host installed after `memsync init` (its folder appearing) is named by `memsync status` and
`memsync doctor` with the command that tracks it, until `init` runs again (the CLI, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import run_cli


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_status_and_doctor_name_hosts_installed_after_init(home: Path) -> None:
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    assert run_cli("init").returncode == 0
    quiet = run_cli("status")
    assert quiet.returncode == 0, quiet.stderr
    assert "not synced" not in quiet.stdout
    # Claude Code installed, no project memory yet: nothing named that does not exist.
    (home / ".claude").mkdir()
    for command in ("status", "doctor"):
        said = run_cli(command).stdout
        assert "not synced" not in said and str(home / ".claude" / "projects") not in said, said

    # Claude Code and Codex are installed afterwards and write memory.
    memory = home / ".claude" / "projects" / "-home-ada-shop" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Build](build.md) — how to build\n")
    (home / ".codex" / "memories").mkdir(parents=True)

    status = run_cli("status")
    projects, codex = home / ".claude" / "projects", home / ".codex" / "memories"
    assert (
        f"not synced: Claude Code projects folder {projects} (an agent host installed after "
        "`memsync init`): run `memsync init` again to track it"
    ) in status.stdout.splitlines()
    assert f"not synced: Codex memories folder {codex}" in status.stdout
    listed = json.loads(run_cli("status", "--json").stdout)["untracked_hosts"]
    # Claude Code's subagent memory (~/.claude/agent-memory) is named once it exists.
    assert [host["path"] for host in listed] == [str(projects), str(codex)]
    doctor = run_cli("doctor")
    assert f"agent hosts: not synced: Claude Code projects folder {projects}; Codex memories folder" in (
        doctor.stdout
    )
    assert "Run `memsync init` again to track it" in doctor.stdout

    assert run_cli("init").returncode == 0
    after = run_cli("status")
    assert "not synced" not in after.stdout
    assert f"tracking {memory} as claude/projects/" in after.stdout
    assert "the memory of every agent host found here is tracked" in run_cli("doctor").stdout

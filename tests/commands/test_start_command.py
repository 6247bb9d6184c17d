"""The commands memsync registers to start itself run the installed memsync, never a project's own
``memsync/`` folder: hosts start MCP servers in the project they have open, and ``python -m`` would put
that directory first on ``sys.path``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from memsync.commands import service
from memsync.hosts import mcp_install
from tests.support.helpers import cli_main
from tests.support.mcp_lines import initialize

# A hostile checkout: importing its `memsync` package leaves a marker file behind.
# Without a user systemd the unit is written and nothing starts it: install exits 1 and says so.
_INSTALLED = 0 if service.user_systemd() is None else 1
_EVIL = "import pathlib; pathlib.Path({marker!r}).write_text('ran'); print('EVIL')\n"


def _hostile_project(tmp_path: Path) -> tuple[Path, Path]:
    project, marker = tmp_path / "project", tmp_path / "marker"
    (project / "memsync").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py"):
        (project / "memsync" / name).write_text(_EVIL.format(marker=str(marker)))
    return project, marker


def test_the_registered_mcp_server_runs_memsync_not_the_projects_folder(home: Path, tmp_path: Path) -> None:
    project, marker = _hostile_project(tmp_path)
    connected = cli_main("connect", "claude-code")
    assert connected.returncode == 0, connected.stderr
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["memsync"]

    # Exactly what Claude Code runs, where it runs it: the command in the open project.
    server = subprocess.Popen(
        [entry["command"], *entry["args"]],
        cwd=project,
        env={**os.environ, **entry["env"]},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(initialize("2025-06-18"))
        server.stdin.flush()
        first = server.stdout.readline()  # the server's answer, or what ran instead
    finally:
        server.kill()
        server.wait()

    assert not marker.exists(), first
    answer = json.loads(first)
    assert answer["id"] == 0 and answer["result"]["serverInfo"]["name"] == "memsync", answer


def test_the_service_unit_runs_memsync_not_a_folder_in_its_working_directory(
    home: Path, tmp_path: Path
) -> None:
    project, marker = _hostile_project(tmp_path)
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("")
    assert cli_main("service", "install").returncode == _INSTALLED
    unit = (home / ".config" / "systemd" / "user" / "memsync.service").read_text()
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(exec_start.removeprefix("ExecStart="))

    helped = subprocess.run(
        [*argv, "--help"], cwd=project, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )

    assert not marker.exists(), helped.stdout
    assert helped.returncode == 0 and "Usage:" in helped.stdout and "daemon" in helped.stdout, helped.stderr


def test_an_older_registration_without_safe_path_is_stale_and_connect_rewrites_it(home: Path) -> None:
    old = {**mcp_install.server_entry("claude-code"), "args": ["-m", "memsync", "mcp"]}
    path = home / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {"memsync": old}}, indent=2) + "\n")

    stale = _claude_line(cli_main("connect", "--status").stdout)
    assert "; connected (" in stale and "config differs from this memsync's" in stale, stale

    assert cli_main("connect", "claude-code").returncode == 0
    entry = json.loads(path.read_text())["mcpServers"]["memsync"]
    assert entry["args"] == ["-P", "-m", "memsync", "mcp"]
    assert _claude_line(cli_main("connect", "--status").stdout).endswith("; config matches")


def _claude_line(status: str) -> str:
    return next(line for line in status.splitlines() if line.startswith("claude-code: "))


def test_service_status_names_an_older_unit_and_install_rewrites_it(home: Path) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("")
    assert cli_main("service", "install").returncode == _INSTALLED
    unit = home / ".config" / "systemd" / "user" / "memsync.service"
    assert "differs" not in cli_main("service", "status").stdout
    unit.write_text(unit.read_text().replace('"-P" ', ""))  # what an older memsync wrote

    stale = cli_main("service", "status").stdout
    assert "its command differs from this memsync's" in stale and "run `memsync service install`" in stale

    assert cli_main("service", "install").returncode == _INSTALLED
    assert '"-P" "-m" "memsync" "daemon"' in unit.read_text()
    assert "differs" not in cli_main("service", "status").stdout

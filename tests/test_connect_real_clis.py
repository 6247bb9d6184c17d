"""The hosts' own CLIs (slow tier): after `memsync connect HOST`, the host's command that lists MCP
servers shows memsync connected (Claude Code: its health check passes; Codex: enabled), and after
`memsync disconnect HOST` it does not. The CLIs come from npm, installed into a cache directory
(``npm install --prefix /work/npmcache @anthropic-ai/claude-code @openai/codex``); a test whose CLI is
missing is skipped with the command that installs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import run_cli

_BIN = Path(os.environ.get("MEMSYNC_NPM_CACHE", "/work/npmcache")) / "node_modules" / ".bin"
_CLIS = [
    ("claude-code", "claude", "@anthropic-ai/claude-code", "Connected"),
    ("codex", "codex", "@openai/codex", "enabled"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("host", "cli", "package", "healthy"), _CLIS)
def test_the_hosts_own_list_shows_memsync_after_connect_and_not_after_disconnect(
    home: Path, host: str, cli: str, package: str, healthy: str
) -> None:
    if not (_BIN / cli).exists():
        pytest.skip(f"no {cli} CLI: npm install --prefix {_BIN.parent.parent} {package}")
    env = {"PATH": f"{_BIN}{os.pathsep}{os.environ['PATH']}"}

    def listed() -> str:
        done = subprocess.run(
            [str(_BIN / cli), "mcp", "list"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return done.stdout

    assert "memsync" not in listed()
    connected = run_cli("connect", host, env=env)
    assert connected.returncode == 0, connected.stderr
    line = next((line for line in listed().splitlines() if line.startswith("memsync")), "")
    assert "-m memsync mcp" in line and healthy in line, line
    gone = run_cli("disconnect", host, env=env)
    assert gone.returncode == 0, gone.stderr
    assert "memsync" not in listed()

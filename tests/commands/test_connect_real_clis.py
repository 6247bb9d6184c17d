"""The hosts' own CLIs (slow tier): after `memsync connect HOST`, the host's command that lists MCP
servers shows memsync connected (healthy where the CLI checks: Claude Code, Gemini CLI, Qwen Code,
OpenCode; enabled where it only reads its config: Codex, Copilot CLI's `mcp get`), and after `memsync
disconnect HOST` it does not (and the CLI still reads its config). The CLIs come from the npm registry,
installed once into a cache directory by ``tests.support.npm``; a test whose CLI cannot be installed (no
npm, registry unreachable) is skipped with the reason and the command."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from memsync.base.paths import state_dir
from memsync.commands.session_context import SESSIONS_FILE
from tests.support.helpers import run_cli, wait_for
from tests.support.npm import BIN, installed

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Gemini CLI and Qwen Code give a server 5 s to answer in `mcp list`; memsync's (the MCP SDK's imports)
# can take longer on a busy machine, so a listing is asked again a few times.
HEALTH_TRIES = 4


@dataclass(frozen=True)
class Cli:
    """A host's CLI: the memsync ``host`` name, the ``cli`` command, its npm ``package``, the word its
    listing shows for a healthy server, and the arguments (after the name) that show memsync's details
    when the listing does not (None: the listing does), with the word those show."""

    host: str
    cli: str
    package: str
    healthy: str
    detail: tuple[str, ...] | None = None


CLIS = (
    Cli("claude-code", "claude", "@anthropic-ai/claude-code", "Connected"),
    Cli("codex", "codex", "@openai/codex", "enabled"),
    Cli("gemini-cli", "gemini", "@google/gemini-cli", "Connected"),
    Cli("qwen-code", "qwen", "@qwen-code/qwen-code", "Connected"),
    Cli("opencode", "opencode", "opencode-ai", "connected"),
    Cli("copilot-cli", "copilot", "@github/copilot", "Enabled", ("mcp", "get", "memsync")),
)


@pytest.mark.slow
@pytest.mark.parametrize("cli", CLIS, ids=[cli.host for cli in CLIS])
def test_the_hosts_own_list_shows_memsync_after_connect_and_not_after_disconnect(
    home: Path, tmp_path: Path, cli: Cli
) -> None:
    program = installed(cli.cli, cli.package)
    # Gemini CLI loads no MCP server in a folder it does not trust.
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    project = tmp_path / "project"
    project.mkdir()

    def shown(*args: str) -> tuple[int, str]:
        done = subprocess.run(
            [str(program), *args],
            env={**os.environ, **env},
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return done.returncode, _ANSI.sub("", done.stdout + done.stderr)

    def listed() -> str:
        code, out = shown("mcp", "list")
        assert code == 0, out
        return out

    assert "memsync" not in listed()
    connected = run_cli("connect", cli.host, env=env)
    assert connected.returncode == 0, connected.stderr
    healthy = re.compile(rf"\b{cli.healthy}\b")
    for _ in range(HEALTH_TRIES):
        listing = listed()
        line = next((ln for ln in listing.splitlines() if re.match(r"^\W*memsync\b", ln)), "")
        assert line, listing
        code, detail = shown(*cli.detail) if cli.detail else (0, listing)
        assert code == 0 and "-m memsync mcp" in detail, detail
        if healthy.search(detail if cli.detail else line):
            break
    else:
        pytest.fail(f"{cli.cli} never showed memsync {cli.healthy}:\n{detail}")
    gone = run_cli("disconnect", cli.host, env=env)
    assert gone.returncode == 0, gone.stderr
    assert "memsync" not in listed()


@pytest.mark.slow
def test_gemini_runs_memsyncs_hooks_after_connect_and_not_after_disconnect(
    home: Path, tmp_path: Path
) -> None:
    """Gemini CLI shows no hooks list, but runs its SessionStart hooks before its model API (here a
    closed port on 127.0.0.1) fails to answer: memsync's session-start hook records the session, keyed
    by the agent."""
    gemini = installed("gemini", "@google/gemini-cli")
    assert run_cli("init").returncode == 0
    sessions = state_dir() / SESSIONS_FILE
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_API_KEY": "not-used",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",  # the discard port: nothing listens
    }
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}, indent=2))

    def session() -> dict[str, object]:
        """Start a session, wait for its first model call to fail (session start is over, its hooks
        ran), stop it; the sessions memsync recorded."""
        sessions.unlink(missing_ok=True)
        out = tmp_path / "gemini.out"
        with out.open("wb") as sink:
            proc = subprocess.Popen(
                [str(gemini), "-p", "hello"],
                env=env,
                cwd=project,
                stdout=sink,
                stderr=sink,
                stdin=subprocess.DEVNULL,
            )
        try:
            wait_for(lambda: b"Attempt 1 failed" in out.read_bytes() or proc.poll() is not None, timeout=180)
        finally:
            proc.kill()
            proc.wait()
        return json.loads(sessions.read_text()) if sessions.exists() else {}

    assert run_cli("connect", "gemini-cli").returncode == 0
    assert f"gemini-cli\0{project}" in session()
    assert run_cli("disconnect", "gemini-cli").returncode == 0
    assert session() == {}

"""The Claude Code plugin in the repository (``.claude-plugin/marketplace.json``, ``plugins/memsync``):
its hooks and MCP server in Claude Code's plugin formats, failing open without memsync; and, with the
real `claude` CLI (slow tier), `claude plugin marketplace add PATH` then `claude plugin install
memsync@memsync` connects it: enabled, its MCP server connected, gone again after uninstall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import REPO_ROOT
from tests.support.npm import installed

PLUGIN = REPO_ROOT / "plugins" / "memsync"


def test_the_marketplace_lists_the_plugin_and_its_hooks_fail_open(tmp_path: Path) -> None:
    market = json.loads((REPO_ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == "memsync" and (REPO_ROOT / entry["source"]).resolve() == PLUGIN
    assert json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())["name"] == "memsync"
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["memsync"]
    assert [server["command"], *server["args"]] == ["memsync", "mcp"]
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact"}
    # No memsync on the PATH (uninstalled): each command exits 0 and prints nothing.
    for groups in hooks.values():
        for group in groups:
            for handler in group["hooks"]:
                done = subprocess.run(
                    ["sh", "-c", handler["command"]],
                    input="{}",
                    env={**os.environ, "PATH": "/usr/bin:/bin"},
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), handler["command"]


@pytest.mark.slow
def test_claude_installs_the_plugin_from_the_repository(home: Path, tmp_path: Path) -> None:
    claude = installed("claude", "@anthropic-ai/claude-code")
    # The plugin runs `memsync` from the PATH: this interpreter's console script.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(claude), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert "memsync" in run("plugin", "marketplace", "add", str(REPO_ROOT))
    assert "memsync@memsync" in run("plugin", "install", "memsync@memsync")
    listed = run("plugin", "list")
    assert "memsync@memsync" in listed and "enabled" in listed, listed
    line = next((ln for ln in run("mcp", "list").splitlines() if ln.startswith("plugin:memsync:memsync")), "")
    assert "memsync mcp" in line and "Connected" in line, line
    run("plugin", "uninstall", "memsync@memsync")
    assert "plugin:memsync" not in run("mcp", "list")

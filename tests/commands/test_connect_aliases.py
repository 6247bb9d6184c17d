"""`memsync mcp install|uninstall HOST` for every host of the registry (the MCP half of `connect`), and
a host that requires its servers key (Copilot CLI) keeping it when memsync's entry goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.hosts import mcp_install, registry
from tests.support.helpers import cli_main

OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  // remote servers too
  "mcp": {
    "context7": { "type": "remote", "url": "https://mcp.context7.com/mcp", "enabled": true }
  }
}
"""


def test_mcp_install_takes_every_host_and_uninstall_gives_back_every_byte(home: Path) -> None:
    path = home / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text(OPENCODE)
    done = cli_main("mcp", "install", "opencode")
    assert done.returncode == 0, done.stderr
    assert f"registered memsync's MCP server with opencode in {path}" in done.stdout
    assert mcp_install.registered("opencode") == mcp_install.server_entry("opencode")
    assert "// remote servers too" in path.read_text()
    gone = cli_main("mcp", "uninstall", "opencode")
    said = f"removed memsync's entries from {path}: it is back byte for byte as memsync found it"
    assert gone.returncode == 0 and said in gone.stdout, gone.stderr
    assert path.read_text() == OPENCODE
    unknown = cli_main("mcp", "install", "emacs")
    assert unknown.returncode == 1 and "unknown agent host 'emacs'" in unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_copilot_keeps_its_required_servers_object_after_disconnect(home: Path) -> None:
    path = home / ".copilot" / "mcp-config.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {}}\n')
    assert cli_main("connect", "copilot-cli").returncode == 0
    assert set(json.loads(path.read_text())["mcpServers"]) == {"memsync"}
    path.write_text(
        path.read_text().replace('"mcpServers"', '"theme": "dark", "mcpServers"')
    )  # the user's edit
    gone = cli_main("disconnect", "copilot-cli")
    assert gone.returncode == 0, gone.stderr
    # Copilot CLI refuses a file without it
    assert json.loads(path.read_text()) == {"theme": "dark", "mcpServers": {}}


@pytest.mark.parametrize("host", ["cursor", "claude-code", "qwen-code", "vscode"])
@pytest.mark.parametrize("theirs", [{"mcpServers": {}}, {}])
def test_an_empty_servers_object_goes_after_a_host_edit_only_when_memsync_added_it(
    host: str, theirs: dict[str, object], home: Path
) -> None:
    path = registry.user_file(host)
    key = registry.spec(host).key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: {}} if theirs else {}) + "\n")
    assert cli_main("connect", host).returncode == 0
    edited = json.loads(path.read_text())
    path.write_text(json.dumps({**edited, "hostKey": 1}) + "\n")  # the host's own edit meanwhile
    gone = cli_main("disconnect", host)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(path.read_text()) == ({key: {}, "hostKey": 1} if theirs else {"hostKey": 1})


def test_mcp_uninstall_alone_keeps_the_users_empty_servers_object_after_a_host_edit(home: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "mcpServers": {}\n}\n')
    assert cli_main("mcp", "install", "cursor").returncode == 0
    path.write_text(path.read_text().replace("{\n", '{\n  "hostKey": 1,\n', 1))
    assert cli_main("mcp", "uninstall", "cursor").returncode == 0
    assert json.loads(path.read_text()) == {"hostKey": 1, "mcpServers": {}}


@pytest.mark.parametrize("host", ["gemini-cli", "qwen-code"])
@pytest.mark.parametrize("theirs", [{"hooks": {}, "mcpServers": {}}, {"hooks": {}}, {}])
def test_a_users_empty_hooks_object_stays_after_a_host_edit_where_both_halves_share_the_file(
    host: str, theirs: dict[str, object], home: Path
) -> None:
    """Gemini CLI and Qwen Code keep hooks and MCP servers in one settings file: the MCP half's removal
    comes first, and the hooks half still knows what the file held before memsync's first edit."""
    path = registry.user_file(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(theirs) + "\n")
    assert cli_main("connect", host).returncode == 0
    edited = json.loads(path.read_text())
    assert edited["hooks"] and edited["mcpServers"]
    path.write_text(json.dumps({**edited, "hostKey": 1}) + "\n")  # the host's own edit meanwhile
    gone = cli_main("disconnect", host)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(path.read_text()) == {**theirs, "hostKey": 1}

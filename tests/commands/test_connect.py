"""`memsync connect|disconnect HOST`, `connect --dry-run`, `connect --status`: every agent host of the
registry, on a realistic config file of its own format with other content in it (comments, other
servers, other settings). Connecting twice changes nothing; disconnecting gives back the file byte
for byte; a dry run prints a diff and writes nothing."""

from __future__ import annotations

import contextlib
import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.hosts import jsonc_text, mcp_install, registry, yaml_text
from memsync.hosts.settings_file import BACKUP_SUFFIX
from tests.support.helpers import cli_main

CLAUDE = json.dumps(
    {
        "numStartups": 12,
        "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"], "env": {}}},
        "projects": {"/home/ada/shop": {"allowedTools": [], "mcpServers": {}}},
    },
    indent=2,
)
CLAUDE_SETTINGS = json.dumps(
    {
        "model": "opus",
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]},
    },
    indent=2,
)
CODEX = """# Codex settings
model = "o3"  # the default model

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[profiles.fast]
model = "o4-mini"
"""
CODEX_HOOKS = json.dumps(
    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]}},
    indent=2,
)
PLAIN = json.dumps(
    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {}}}}, indent=4
)
GEMINI = json.dumps(
    {
        "theme": "GitHub",
        "selectedAuthType": "oauth-personal",
        "mcpServers": {"github": {"httpUrl": "https://api.githubcopilot.com/mcp/", "timeout": 5000}},
    },
    indent=2,
)
COPILOT = json.dumps(
    {
        "mcpServers": {
            "playwright": {
                "type": "local",
                "command": "npx",
                "args": ["@playwright/mcp@latest"],
                "tools": ["*"],
            }
        }
    },
    indent=2,
)
VSCODE = """{
\t// Servers for Copilot's agent mode
\t"servers": {
\t\t"github": {
\t\t\t"type": "http",
\t\t\t"url": "https://api.githubcopilot.com/mcp/",
\t\t},
\t},
\t"inputs": []
}
"""
OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  "theme": "opencode",
  // remote servers too
  "mcp": {
    "context7": { "type": "remote", "url": "https://mcp.context7.com/mcp", "enabled": true }
  }
}
"""
GOOSE = """# goose config
GOOSE_PROVIDER: openai
GOOSE_MODEL: gpt-4o  # fast
extensions:
  developer:
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  memory: &mem
    enabled: false
    name: memory
    type: builtin
OTHER: *mem
"""
AMP = """{
  "amp.notifications.enabled": true,
  "amp.mcpServers": {
    "playwright": {"command": "npx", "args": ["-y", "@playwright/mcp@latest"]}
  }
}"""
CONTINUE = """name: My Config
version: 0.0.1
schema: v1
models:
  - name: Claude
    provider: anthropic   # the provider
    model: claude-sonnet-4
mcpServers:
  - name: SQLite
    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
context:
  - provider: code
"""
ZED = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "buffer_font_size": 15.0,
  "theme": {
    "mode": "system",
    "light": "One Light",
    "dark": "One Dark", // trailing comma next
  },
}
"""
CLINE = json.dumps(
    {
        "mcpServers": {
            "github": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<token>"},
                "disabled": False,
                "autoApprove": [],
            }
        }
    },
    indent=2,
)

# host: its files (relative to HOME) with their realistic content
FILES: dict[str, dict[str, str]] = {
    "claude-code": {".claude.json": CLAUDE, ".claude/settings.json": CLAUDE_SETTINGS},
    "codex": {".codex/config.toml": CODEX, ".codex/hooks.json": CODEX_HOOKS},
    "cursor": {".cursor/mcp.json": PLAIN + "\n"},
    "gemini-cli": {".gemini/settings.json": GEMINI + "\n"},
    "copilot-cli": {".copilot/mcp-config.json": COPILOT + "\n"},
    "vscode": {".config/Code/User/mcp.json": VSCODE},
    "opencode": {".config/opencode/opencode.json": OPENCODE},
    "goose": {".config/goose/config.yaml": GOOSE},
    "amp": {".config/amp/settings.json": AMP},
    "continue": {".continue/config.yaml": CONTINUE},
    "zed": {".config/zed/settings.json": ZED},
    "cline": {
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json": CLINE
    },
    "qwen-code": {".qwen/settings.json": GEMINI},
    "kiro": {".kiro/settings/mcp.json": PLAIN},
    "devin": {".config/devin/config.json": PLAIN + "\n"},
}
ENTRY = {"command": sys.executable, "args": ["-m", "memsync", "mcp"]}


def _write(home: Path, host: str) -> dict[Path, bytes]:
    written: dict[Path, bytes] = {}
    for name, text in FILES[host].items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written[path] = text.encode("utf-8")
    return written


def _line(status: str, host: str) -> str:
    return next(line for line in status.splitlines() if line.startswith(f"{host}: "))


def test_every_host_has_a_realistic_file() -> None:
    assert set(FILES) == set(registry.NAMES)


# One host of each file format in the quick tier, every host in the long one.
QUICK_HOSTS = ("claude-code", "codex", "zed", "goose")


@pytest.mark.parametrize(
    "host",
    [name if name in QUICK_HOSTS else pytest.param(name, marks=pytest.mark.slow) for name in registry.NAMES],
)
def test_connect_twice_then_disconnect_gives_back_every_byte(home: Path, host: str) -> None:
    originals = _write(home, host)
    path = mcp_install.config_file(host)
    assert path in originals
    assert _line(cli_main("connect", "--status").stdout, host) == f"{host}: found; not connected ({path})"

    dry = cli_main("connect", "--dry-run", host)
    assert dry.returncode == 0, dry.stderr
    assert f"+++ {path}" in dry.stdout and sys.executable in dry.stdout
    assert all(p.read_bytes() == data for p, data in originals.items())  # nothing written

    first = cli_main("connect", host)
    assert first.returncode == 0 and "registered memsync's MCP server" in first.stdout, first.stderr
    entry = mcp_install.registered(host)
    assert entry == mcp_install.server_entry(host)
    assert sys.executable in json.dumps(entry)
    assert path.with_name(path.name + BACKUP_SUFFIX).read_bytes() == originals[path]
    connected = {p: p.read_bytes() for p in originals}
    assert all(connected[p] != data for p, data in originals.items())  # hooks too, where memsync has some

    again = cli_main("connect", host)
    assert again.returncode == 0 and "already registered" in again.stdout, again.stderr
    assert {p: p.read_bytes() for p in originals} == connected
    status = _line(cli_main("connect", "--status").stdout, host)
    assert status == f"{host}: found; connected ({path}); config matches"

    gone = cli_main("disconnect", host)
    assert gone.returncode == 0 and "removed memsync's" in gone.stdout, gone.stderr
    assert {p: p.read_bytes() for p in originals} == originals
    assert mcp_install.registered(host) is None
    assert "not connected" in _line(cli_main("connect", "--status").stdout, host)


def test_status_flags_an_entry_of_another_memsync_and_a_host_not_installed(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"memsync": {"command": "/gone/python", "args": []}}}))
    status = cli_main("connect", "--status").stdout
    assert _line(status, "gemini-cli") == (
        f"gemini-cli: found; connected ({path}); config differs from this memsync's: "
        "run `memsync connect gemini-cli`"
    )
    assert _line(status, "zed").startswith("zed: not found; not connected")


def test_a_project_gets_its_own_file_and_a_host_without_one_is_refused(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    done = cli_main("connect", "zed", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert mcp_install.registered("zed", project) == mcp_install.server_entry("zed")
    assert (project / ".zed" / "settings.json").exists() and mcp_install.registered("zed") is None
    refused = cli_main("connect", "goose", "--project", str(project))
    assert refused.returncode == 1 and "goose has no project config file" in refused.stderr
    assert "Traceback" not in refused.stderr
    unknown = cli_main("connect", "emacs")
    assert unknown.returncode == 1 and "unknown agent host 'emacs'" in unknown.stderr


def test_an_edit_that_would_change_more_is_refused_with_what_to_add_by_hand(home: Path) -> None:
    path = home / ".config" / "goose" / "config.yaml"
    path.parent.mkdir(parents=True)
    text = "extensions: {}\n"  # a flow mapping memsync does not edit as text
    path.write_text(text)
    refused = cli_main("connect", "goose")
    assert refused.returncode == 1 and "by hand" in refused.stderr and "extensions:" in refused.stderr
    assert path.read_text() == text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=4), st.sampled_from(["  ", "    ", "\t", None]))
def test_jsonc_connect_then_disconnect_is_the_identity(data: dict[str, object], indent: str | None) -> None:
    path = Path("settings.json")
    text = json.dumps(data, indent=indent)
    added = jsonc_text.with_entry(text, "mcpServers", "memsync", ENTRY, path)
    after = jsonc_text.parse(added.encode(), path)
    if isinstance(data.get("mcpServers", {}), dict):
        assert after == jsonc_text.expected(data, "mcpServers", "memsync", ENTRY)
        assert jsonc_text.with_entry(added, "mcpServers", "memsync", None, path) == text or (
            data.get("mcpServers") == {}
        )


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), _JSON, max_size=4),
    _JSON,
    st.sampled_from(["  ", "    ", "\t"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_jsonc_rewrite_changes_only_what_changed_and_back_is_the_identity(
    data: dict[str, object], value: object, indent: str, newline: str
) -> None:
    path = Path("settings.json")
    # The user's comment on every line but the first: it must stay where it is, whatever changes.
    text = "\ufeff" + json.dumps(data, indent=indent).replace("\n", " // mine" + newline)
    before = jsonc_text.parse(text.encode(), path)

    def put(settings: dict[str, Any]) -> None:
        for item in settings.values():
            if isinstance(item, list):
                item.append(copy.deepcopy(value))
        settings["hooks"] = copy.deepcopy(value)

    changed = jsonc_text.rewrite(path, put)(text.encode(), before)
    wanted = copy.deepcopy(before)
    put(wanted)
    if changed is None:
        assert wanted == before
        return
    assert jsonc_text.parse(changed, path) == wanted
    assert changed.decode().count(" // mine") == text.count(" // mine") or "hooks" in before
    assert changed.startswith(b"\xef\xbb\xbf") and (newline == "\r\n" or b"\r" not in changed)

    def back(settings: dict[str, Any]) -> None:
        settings.clear()
        settings.update(copy.deepcopy(before))

    undone = jsonc_text.rewrite(path, back)(changed, wanted)
    assert undone is not None and jsonc_text.parse(undone, path) == before
    assert undone == text.encode() or "hooks" in before


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=60))
def test_readers_of_host_files_raise_only_memsync_errors(data: bytes) -> None:
    for parse in (jsonc_text.parse, yaml_text.parse):
        with contextlib.suppress(MemsyncError):
            parse(data, Path("f"))


def test_uninstall_disconnects_every_connected_host(home: Path) -> None:
    hosts = ("zed", "goose", "continue", "opencode")
    originals = {path: data for host in hosts for path, data in _write(home, host).items()}
    for host in hosts:
        assert cli_main("connect", host).returncode == 0
    dry = cli_main("uninstall", "--dry-run")
    for host in hosts:
        assert f"would remove memsync's MCP server from {mcp_install.config_file(host)}" in dry.stdout
    done = cli_main("uninstall")
    assert done.returncode == 0, done.stderr
    assert {path: path.read_bytes() for path in originals} == originals

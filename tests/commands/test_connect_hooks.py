"""`memsync connect` installs memsync's hooks for Gemini CLI, Qwen Code, Cursor and Copilot CLI in each
host's own file, format and event names (beside the host's other hooks, which stay), `disconnect`
removes exactly them, `hooks install` does the hooks half alone; the installed commands fail open and
print the session-start context in the shape each host reads."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memsync.hosts import hooks, jsonc_text
from tests.support.helpers import cli_main
from tests.support.peers import Peer, sync

GEMINI = json.dumps(
    {
        "theme": "GitHub",
        "hooks": {
            "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}]
        },
        "mcpServers": {"github": {"httpUrl": "https://api.githubcopilot.com/mcp/"}},
    },
    indent=2,
)
CURSOR = json.dumps(
    {
        "version": 1,
        "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}], "stop": [{"command": "say"}]},
    },
    indent=2,
)
# host: (its hook file under HOME, what is there before, the events memsync adds, timeout key, unit)
CASES: dict[str, tuple[str, str | None, tuple[str, ...], str, int]] = {
    "gemini-cli": (
        ".gemini/settings.json",
        GEMINI + "\n",
        ("SessionStart", "AfterAgent", "SessionEnd"),  # PreCompress fires before every model call
        "timeout",
        1000,
    ),
    "qwen-code": (  # no SessionStart: the first prompt's hook gives its context (hooks.START_ON_FIRST_PROMPT)
        ".qwen/settings.json",
        GEMINI,
        ("UserPromptSubmit", "Stop", "SessionEnd", "PreCompact"),
        "timeout",
        1000,
    ),
    "cursor": (
        ".cursor/hooks.json",
        CURSOR,
        ("sessionStart", "stop", "sessionEnd", "preCompact"),
        "timeout",
        1,
    ),
    "copilot-cli": (
        ".copilot/hooks/memsync.json",
        None,
        ("sessionStart", "agentStop", "sessionEnd", "preCompact"),
        "timeoutSec",
        1,
    ),
}


def _ours(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """memsync's handlers per event, whatever the shape (matcher groups or a list per event)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for event, items in data.get("hooks", {}).items():
        for item in items:
            for handler in item.get("hooks", [item]):
                if "memsync.hook" in handler.get("command", handler.get("bash", "")):
                    found.setdefault(event, []).append({**handler, "matcher": item.get("matcher")})
    return found


# One host of each shape in the quick tier (matcher groups in a shared file; a list per event in a file
# of memsync's own), every host in the long one.
QUICK = ("gemini-cli", "copilot-cli")


@pytest.mark.parametrize(
    "host", [host if host in QUICK else pytest.param(host, marks=pytest.mark.slow) for host in CASES]
)
def test_connect_adds_the_hosts_own_hooks_and_disconnect_gives_back_every_byte(home: Path, host: str) -> None:
    name, before, events, timeout_key, unit = CASES[host]
    path = home / name
    if before is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(before)
    (home / ".copilot").mkdir(exist_ok=True)  # Copilot CLI's MCP file lives beside

    done = cli_main("connect", host)
    assert done.returncode == 0, done.stderr
    assert f"{host}: installed memsync's hooks in {path} ({', '.join(events)})" in done.stdout
    data = json.loads(path.read_text())
    ours = _ours(data)
    assert tuple(ours) == events if before is None else set(ours) == set(events)
    start = ours[events[0]][0]
    on_prompt = host in hooks.START_ON_FIRST_PROMPT
    action = "prompt-context" if on_prompt else "session-start"
    assert f"{action} --agent {host}" in start.get("command", start.get("bash", ""))
    assert (
        start[timeout_key] == (hooks.FIRST_PROMPT_TIMEOUT_S if on_prompt else hooks.SESSION_TIMEOUT_S) * unit
    )
    assert all(h[timeout_key] == hooks.SYNC_TIMEOUT_S * unit for e in events[1:] for h in ours[e])
    # Gemini CLI matches a SessionStart matcher to the source exactly: none.
    assert start["matcher"] is None
    if host == "copilot-cli":
        assert data["version"] == 1 and start["type"] == "command" and "command" not in start
    if host == "cursor":
        assert data["hooks"]["afterFileEdit"] == [{"command": "./hooks/format.sh"}]
        assert data["hooks"]["stop"][0] == {"command": "say"}
    status = cli_main("hooks", "status").stdout
    assert f"{host}: installed in {path}" in status and "runs this memsync" in status

    again = cli_main("connect", host)
    assert f"{host}: memsync's hooks are already installed in {path}" in again.stdout, again.stderr
    gone = cli_main("disconnect", host)
    assert gone.returncode == 0, gone.stderr
    if before is None:  # Copilot CLI: memsync's own file, gone with its hooks
        assert not path.exists() and f"deleted {path}" in gone.stdout
    else:
        assert path.read_text() == before


def test_hooks_install_alone_takes_the_new_hosts_and_keeps_the_mcp_entry_out(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    done = cli_main("hooks", "install", "cursor", "--project", str(project))
    assert done.returncode == 0, done.stderr
    path = project / ".cursor" / "hooks.json"
    assert set(_ours(json.loads(path.read_text()))) == {"sessionStart", "stop", "sessionEnd", "preCompact"}
    assert not (project / ".cursor" / "mcp.json").exists()
    done = cli_main("hooks", "install", "copilot-cli", "--project", str(project))
    assert done.returncode == 0 and (project / ".github" / "hooks" / "memsync.json").is_file(), done.stderr


def test_an_older_gemini_install_on_pre_compress_is_updated_by_connect_and_removed_by_disconnect(
    home: Path,
) -> None:
    # Earlier connects also ran sync-now on PreCompress, which Gemini CLI fires before every model call.
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    data = json.loads(GEMINI)
    start = {
        "type": "command",
        "command": hooks.hook_command("session-start", "gemini-cli"),
        "timeout": 10000,
    }
    sync = {"type": "command", "command": hooks.hook_command("sync-now", "gemini-cli"), "timeout": 30000}
    ends = {event: [{"hooks": [sync]}] for event in ("AfterAgent", "SessionEnd", "PreCompress")}
    older = json.dumps(
        {**data, "hooks": {**data["hooks"], "SessionStart": [{"hooks": [start]}], **ends}}, indent=2
    )

    path.write_text(older)
    assert cli_main("connect", "gemini-cli").returncode == 0
    now = json.loads(path.read_text())
    assert (
        set(_ours(now)) == {"SessionStart", "AfterAgent", "SessionEnd"} and "PreCompress" not in now["hooks"]
    )
    assert now["hooks"]["BeforeTool"] == data["hooks"]["BeforeTool"]

    path.write_text(older)
    gone = cli_main("disconnect", "gemini-cli")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(path.read_text()) == data


def _run(
    command: str, payload: dict[str, Any], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run an installed hook command as the hosts do: through a shell, the hook input on stdin."""
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_installed_commands_fail_open_when_memsync_is_gone(home: Path, tmp_path: Path) -> None:
    for host in CASES:
        assert cli_main("hooks", "install", host).returncode == 0
    commands = [
        h["command"] if "command" in h else h["bash"]
        for host, (name, *_rest) in CASES.items()
        for handlers in _ours(json.loads((home / name).read_text())).values()
        for h in handlers
    ]
    assert len(commands) == 15
    # The interpreter the hooks name, gone (`pipx uninstall`): every command exits 0 with no output.
    for command in commands:
        gone = command.replace(hooks.hook_command("sync-now", "cursor").split()[2], str(tmp_path / "none"))
        done = _run(gone, {"hook_event_name": "stop"}, dict(os.environ), tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), command


@pytest.mark.slow
def test_session_start_speaks_each_hosts_output_shape(tmp_path: Path, remote: Path) -> None:
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    sync(a, b)
    a.append_entry("The harbor API needs a user agent header.", kind="fact")
    sync(a, b)
    shapes: dict[hooks.Host, Callable[[dict[str, Any]], str]] = {
        "cursor": lambda out: out["additional_context"],
        "copilot-cli": lambda out: out["additionalContext"],
        "gemini-cli": lambda out: out["hookSpecificOutput"]["additionalContext"],
    }
    for host, context in shapes.items():
        payload: dict[str, Any] = {"hook_event_name": "sessionStart", "source": "startup"}
        # Cursor names the project in workspace_roots, the others in cwd.
        payload |= {"workspace_roots": [str(b.home)]} if host == "cursor" else {"cwd": str(b.home)}
        done = _run(hooks.hook_command("session-start", host), payload, {**os.environ, **b.env}, tmp_path)
        assert done.returncode == 0 and not done.stderr, done.stderr
        assert "The harbor API needs a user agent header." in context(json.loads(done.stdout)), done.stdout


# Gemini CLI and Qwen Code read settings.json through strip-json-comments: comments, trailing commas.
COMMENTED = """{
  // the user's theme
  "theme": "GitHub", /* kept */
  "hooks": {
    "BeforeTool": [
      // lint before a write
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]},
    ],
  },
}
"""


@pytest.mark.parametrize("host", ["gemini-cli", "qwen-code"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_settings_file_with_comments_is_edited_keeping_them_and_comes_back_byte_for_byte(
    host: str, bom: str, newline: str, home: Path
) -> None:
    path = home / CASES[host][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (bom + COMMENTED).replace("\n", newline)
    path.write_bytes(text.encode())
    done = cli_main("connect", host)
    assert done.returncode == 0, done.stderr
    edited = path.read_bytes().decode()
    assert edited.startswith(bom + "{") and "// the user's theme" in edited and "/* kept */" in edited
    assert "// lint before a write" in edited
    assert newline == "\r\n" or "\r" not in edited
    assert newline == "\n" or "\n" not in edited.replace("\r\n", "")
    settings = jsonc_text.parse(path.read_bytes(), path)
    assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "lint"
    assert {h.event for h in hooks.installed(settings, path)} == set(CASES[host][2])
    assert "memsync" in settings["mcpServers"]
    status = cli_main("connect", "--status")
    assert f"{host}: found; connected ({path}); config matches" in status.stdout, status.stdout
    # The host's own edit meanwhile: memsync's entries come out one by one, every comment stays.
    path.write_bytes(path.read_bytes().replace(b'"GitHub"', b'"Dark"'))
    gone = cli_main("disconnect", host)
    assert gone.returncode == 0, gone.stderr
    assert path.read_bytes() == text.replace('"GitHub"', '"Dark"').encode()


@pytest.mark.parametrize(
    ("host", "theirs"),
    [
        ("claude-code", {"theme": "dark", "hooks": {}}),
        ("claude-code", {"theme": "dark", "hooks": {"SessionStart": []}}),
        ("cursor", {"version": 1, "hooks": {"stop": []}}),
        ("gemini-cli", {"theme": "dark", "hooks": {}}),
    ],
)
def test_hooks_uninstall_after_a_host_edit_keeps_the_users_empty_hooks_and_event_lists(
    host: str, theirs: dict[str, Any], home: Path
) -> None:
    path = hooks.settings_path(next(h for h in hooks.HOSTS if h == host))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(theirs) + "\n")
    assert cli_main("hooks", "install", host).returncode == 0
    path.write_text(json.dumps({**json.loads(path.read_text()), "hostKey": 1}) + "\n")  # the host's edit
    done = cli_main("hooks", "uninstall", host)
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text()) == {**theirs, "hostKey": 1}

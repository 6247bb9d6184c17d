"""`memsync hooks install|uninstall|status`: real settings files with other hooks survive byte for byte
apart from memsync's entries (real CLI subprocesses, isolated HOME)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from memsync.hosts.settings_file import BACKUP_SUFFIX
from tests.support.helpers import cli_main

# A user's Claude Code settings as Claude Code writes them (two-space JSON), with hooks of their own.
CLAUDE_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run *)"], "deny": ["Read(.env*)"]},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "cat ~/notes/today.md"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say 'done'"}]}],
    },
    "env": {"NODE_ENV": "development"},
    "statusLine": {"type": "command", "command": "~/bin/status — ünïcode"},
}


def write_settings(path: Path, data: dict[str, Any], indent: int | str = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path.read_bytes()


def ours(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """memsync's groups per event."""
    return {
        event: [g for g in groups if any("memsync.hook" in h.get("command", "") for h in g["hooks"])]
        for event, groups in settings.get("hooks", {}).items()
        if any(any("memsync.hook" in h.get("command", "") for h in g["hooks"]) for g in groups)
    }


def test_claude_code_user_settings_survive_install_and_uninstall(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    original = write_settings(path, CLAUDE_SETTINGS)

    done = cli_main("hooks", "install", "claude-code")
    assert done.returncode == 0, done.stderr
    assert f"installed memsync's hooks in {path}" in done.stdout
    after = json.loads(path.read_text())
    # Everything the user had is there, in its place; memsync's groups come after theirs.
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in CLAUDE_SETTINGS.items() if k != "hooks"
    }
    assert list(after) == list(CLAUDE_SETTINGS)
    for event, groups in CLAUDE_SETTINGS["hooks"].items():
        assert after["hooks"][event][: len(groups)] == groups
    mine = ours(after)
    assert list(mine) == ["SessionStart", "Stop", "UserPromptSubmit", "SessionEnd", "PreCompact"]
    start = mine["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear|compact"
    command = start["hooks"][0]["command"]
    assert command.startswith(f"[ -x {sys.executable} ] || exit 0; exec {sys.executable} -P -c ")
    assert command.endswith(" session-start --agent claude-code")
    assert mine["Stop"][0]["hooks"][0]["command"].endswith(" sync-now --agent claude-code")
    assert "matcher" not in mine["PreCompact"][0]
    assert "matcher" not in mine["UserPromptSubmit"][0]
    assert mine["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(" prompt-context --agent claude-code")
    assert (path.parent / ("settings.json" + BACKUP_SUFFIX)).read_bytes() == original

    installed = path.read_bytes()
    again = cli_main("hooks", "install", "claude-code")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert path.read_bytes() == installed

    status = cli_main("hooks", "status")
    assert (
        "claude-code: installed in" in status.stdout and "runs this memsync; 3 other hooks" in status.stdout
    )
    assert "codex: not installed" in status.stdout

    removed = cli_main("hooks", "uninstall", "claude-code")
    assert removed.returncode == 0 and "back byte for byte as memsync found it" in removed.stdout
    assert path.read_bytes() == original
    assert "no memsync hooks" in cli_main("hooks", "uninstall", "claude-code").stdout


def test_a_file_without_hooks_and_tabs_comes_back_the_same(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    original = write_settings(path, {"theme": "dark", "cleanupPeriodDays": 30}, indent="\t")
    assert cli_main("hooks", "install", "claude-code").returncode == 0
    assert b'\n\t"hooks": {' in path.read_bytes()
    assert cli_main("hooks", "uninstall", "claude-code").returncode == 0
    assert path.read_bytes() == original


def test_an_install_from_another_interpreter_is_replaced_not_doubled(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert cli_main("hooks", "install", "claude-code").returncode == 0
    stale = path.read_text().replace(sys.executable, "/old/venv/bin/python")
    path.write_text(stale)
    assert "runs another memsync (/old/venv/bin/python)" in cli_main("hooks", "status").stdout
    assert cli_main("hooks", "install", "claude-code").returncode == 0
    text = path.read_text()
    assert "/old/venv" not in text and text.count("memsync.hook") == 5


def test_a_project_gets_its_own_settings_file(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    done = cli_main("hooks", "install", "claude-code", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert list(ours(json.loads((project / ".claude" / "settings.json").read_text()))) == [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
        "PreCompact",
    ]
    assert not (home / ".claude" / "settings.json").exists()
    missing = cli_main("hooks", "install", "claude-code", "--project", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "no such directory" in missing.stderr


def test_codex_hooks_file(home: Path) -> None:
    path = home / ".codex" / "hooks.json"
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 ~/.codex/notify.py"}]}]}}
    original = write_settings(path, theirs)
    (home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n")
    done = cli_main("hooks", "install", "codex")
    assert done.returncode == 0, done.stderr
    assert "trust the new hooks" in done.stdout
    mine = ours(json.loads(path.read_text()))
    assert sorted(mine) == ["PreCompact", "SessionStart", "Stop", "UserPromptSubmit"]  # no SessionEnd
    assert mine["UserPromptSubmit"][0]["hooks"][0]["command"].endswith("prompt-context --agent codex")
    assert mine["SessionStart"][0]["hooks"][0]["command"].endswith("session-start --agent codex")
    assert "hooks are switched off in config.toml" in cli_main("hooks", "status").stdout
    assert cli_main("hooks", "uninstall", "codex").returncode == 0
    assert path.read_bytes() == original


def test_a_settings_file_memsync_cannot_read_is_left_alone(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    for content in (
        b'{"hooks": ',
        b'{"hooks": ["not", "an", "object"]}',
        b'{"hooks": {"Stop": {"hooks": []}}}',
    ):
        path.write_bytes(content)
        done = cli_main("hooks", "install", "claude-code")
        assert done.returncode == 1
        assert len(done.stderr.strip().splitlines()) == 1 and str(path) in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
        assert path.read_bytes() == content

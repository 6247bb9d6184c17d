"""A host's settings file reached through links: a symlink loop gets one line and no crash log; a file
hard-linked from a dotfiles folder is edited in its own inode, so the dotfiles copy gets memsync's
entries too (and loses them again on uninstall)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memsync.hosts.settings_file import BACKUP_SUFFIX
from tests.support.helpers import run_cli

SETTINGS = json.dumps({"theme": "dark", "permissions": {"allow": ["Bash(ls)"]}}, indent=2) + "\n"


def test_a_symlink_loop_gets_one_line_and_no_crash_log(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to("settings.json")
    result = run_cli("hooks", "install", "claude-code")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "unexpected error" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert str(path) in line
    assert not list(home.rglob("crash.log"))
    assert path.is_symlink()


@pytest.mark.parametrize(
    "rel, install, uninstall",
    [
        (".claude/settings.json", ("hooks", "install", "claude-code"), ("hooks", "uninstall", "claude-code")),
        (".cursor/mcp.json", ("mcp", "install", "cursor"), ("mcp", "uninstall", "cursor")),
    ],
)
def test_a_hard_linked_file_is_edited_in_its_own_inode(
    home: Path, rel: str, install: tuple[str, ...], uninstall: tuple[str, ...]
) -> None:
    dotfiles = home / "dot" / Path(rel).name
    dotfiles.parent.mkdir()
    dotfiles.write_text(SETTINGS)
    path = home / rel
    path.parent.mkdir()
    os.link(dotfiles, path)
    inode = dotfiles.stat().st_ino
    assert run_cli(*install).returncode == 0
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    installed = dotfiles.read_text()
    assert "memsync" in installed and json.loads(installed)["theme"] == "dark"
    assert path.with_name(path.name + BACKUP_SUFFIX).read_text() == SETTINGS
    assert run_cli(*uninstall).returncode == 0
    assert path.stat().st_ino == inode
    assert "memsync" not in dotfiles.read_text() and json.loads(dotfiles.read_text())["theme"] == "dark"

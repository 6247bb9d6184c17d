"""Claude Code as a host (``hosts.claude_code``): folder names, the memory directory setting, what loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.hosts import claude_code
from memsync.hosts.claude_code import auto_memory_directory, over_loaded_limit, sanitize


def test_sanitize_replaces_everything_but_letters_and_digits() -> None:
    assert sanitize("/home/ada/src/my.shop_2") == "-home-ada-src-my-shop-2"


def test_auto_memory_directory_comes_from_user_or_local_settings(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    assert auto_memory_directory() is None
    settings.write_text(json.dumps({"autoMemoryDirectory": "relative/dir"}))
    assert auto_memory_directory() is None  # Claude Code ignores a relative value
    settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/claude"}))
    assert auto_memory_directory() == home / "notes" / "claude"
    (home / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/mem"}))
    assert auto_memory_directory() == Path("/srv/mem")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "elsewhere"))
    assert auto_memory_directory() is None
    assert claude_code.projects_root() == home / "elsewhere" / "projects"


def test_what_claude_code_loads_of_an_index(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("- line\n" * 200)
    assert over_loaded_limit(index) is None
    index.write_text("- line\n" * 201)
    assert over_loaded_limit(index) == (201, 201 * 7)
    index.write_text("x" * (25 * 1024 + 1))
    assert over_loaded_limit(index) == (1, 25 * 1024 + 1)
    assert over_loaded_limit(tmp_path / "missing.md") is None

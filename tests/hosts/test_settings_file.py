"""Editing a host's JSON settings file keeps everything memsync did not add, and writes only on change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memsync.errors import MemsyncError
from memsync.hosts.settings_file import BACKUP_SUFFIX, edit_json_object, read_json_object, render_json_object


def _add(settings: dict[str, Any]) -> None:
    settings.setdefault("mcpServers", {})["memsync"] = {"command": "memsync", "args": ["mcp"]}


def test_other_keys_survive_and_a_repeat_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = '{\n  "theme": "dark",\n  "mcpServers": {"other": {"command": "x"}},\n  "z": [1, 2]\n}\n'
    path.write_text(original)
    assert edit_json_object(path, _add) is True
    after = json.loads(path.read_text())
    assert list(after) == ["theme", "mcpServers", "z"]
    assert after["mcpServers"]["other"] == {"command": "x"} and after["z"] == [1, 2]
    assert after["mcpServers"]["memsync"]["args"] == ["mcp"]
    assert (tmp_path / ("settings.json" + BACKUP_SUFFIX)).read_text() == original
    written = path.read_bytes()
    assert edit_json_object(path, _add) is False
    assert path.read_bytes() == written


@pytest.mark.parametrize("indent", ["  ", "    ", "\t"])
@pytest.mark.parametrize("ending", ["\n", ""])
def test_removing_what_was_added_gives_back_the_same_bytes(tmp_path: Path, indent: str, ending: str) -> None:
    path = tmp_path / "settings.json"
    original = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}, "név": "ü"}
    path.write_text(json.dumps(original, indent=indent, ensure_ascii=False) + ending, encoding="utf-8")
    before = path.read_bytes()
    assert edit_json_object(path, _add)
    assert edit_json_object(path, lambda settings: settings.pop("mcpServers"))
    assert path.read_bytes() == before


def test_a_missing_file_is_created_with_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "mcp.json"
    assert edit_json_object(path, _add) is True
    assert read_json_object(path) == {"mcpServers": {"memsync": {"command": "memsync", "args": ["mcp"]}}}
    assert not (tmp_path / "new" / ("mcp.json" + BACKUP_SUFFIX)).exists()


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe{}"])
def test_an_unreadable_file_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with pytest.raises(MemsyncError, match=r"settings\.json"):
        edit_json_object(path, _add)
    assert path.read_bytes() == content


def test_a_one_line_file_stays_one_line_in_its_own_separators() -> None:
    compact = b'{"model":"opus","n":1}'
    spaced = b'{"model": "opus", "n": 1}\n'
    assert render_json_object({"model": "opus", "n": 1}, compact) == compact
    assert render_json_object({"model": "opus", "n": 1}, spaced) == spaced
    assert render_json_object({"model": "opus"}, b'{\n  "model": "x"\n}\n') == b'{\n  "model": "opus"\n}\n'

"""A person's config.toml keeps its comments, key order and layout through every edit memsync makes."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.support.helpers import bare_remote, run_cli

CONFIG = """\
# my memsync settings: keep these notes
debounce_s = 2.5  # slower, please
host = "work-laptop"

[author]  # who commits
email = "ada@example.org"
name = "Ada"

[stores.personal]
branch = "main"

# the scout's notes
[[stores.personal.track]]
path = "~/.agents/memory/scout"  # from the old laptop
"""


def _config(home: Path) -> Path:
    path = home / ".config" / "memsync" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG)
    return path


def test_config_set_host_changes_one_value_and_keeps_every_other_byte(home: Path) -> None:
    path = _config(home)

    result = run_cli("config", "set", "host", "laptop")

    assert result.returncode == 0, result.stderr
    assert path.read_text() == CONFIG.replace('host = "work-laptop"', 'host = "laptop"')
    assert not path.with_name("config.toml.bak").exists()


def test_track_appends_its_entry_after_the_user_s_lines(home: Path) -> None:
    path = _config(home)

    result = run_cli("track", str(home / ".agent-memory" / "lessons.jsonl"))

    assert result.returncode == 0, result.stderr
    text = path.read_text()
    assert text.startswith(CONFIG) and "note:" not in result.stdout
    tracks = tomllib.loads(text)["stores"]["personal"]["track"]
    assert tracks == [{"path": "~/.agents/memory/scout"}, {"path": "~/.agent-memory/lessons.jsonl"}]


def test_store_add_keeps_comments_and_key_order(home: Path, tmp_path: Path) -> None:
    path = _config(home)
    remote = bare_remote(tmp_path / "team.git")

    result = run_cli("store", "add", "team", "--remote", str(remote))

    assert result.returncode == 0, result.stderr
    text = path.read_text()
    assert text.startswith(CONFIG)
    assert tomllib.loads(text)["stores"]["team"]["remotes"] == {"origin": str(remote)}

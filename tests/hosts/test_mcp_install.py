"""`memsync mcp install|uninstall|status HOST`: real host config files with other content in them come
back byte for byte apart from memsync's entry; installing twice changes nothing."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.hosts import codex, mcp_install
from memsync.hosts.settings_file import edit_file
from tests.support.helpers import cli_main

CLAUDE = {
    "numStartups": 12,
    "theme": "dark",
    "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"], "env": {}}},
    "projects": {"/home/ada/shop": {"allowedTools": [], "mcpServers": {}}},
    "note": "naïve café",
}
CURSOR = {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}
CODEX = """# Codex settings
model = "o3"  # the default model
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
MY_VAR = "value" # kept

[profiles.fast]
model = "o4-mini"
"""


def _files(home: Path) -> dict[str, tuple[Path, bytes]]:
    claude = home / ".claude.json"
    cursor = home / ".cursor" / "mcp.json"
    codex = home / ".codex" / "config.toml"
    cursor.parent.mkdir(parents=True)
    codex.parent.mkdir(parents=True)
    claude.write_text(json.dumps(CLAUDE, indent=2, ensure_ascii=False))  # Claude writes no final newline
    cursor.write_text(json.dumps(CURSOR, indent=4) + "\n")
    codex.write_text(CODEX)
    return {
        "claude-code": (claude, claude.read_bytes()),
        "cursor": (cursor, cursor.read_bytes()),
        "codex": (codex, codex.read_bytes()),
    }


@pytest.mark.parametrize("host", ["claude-code", "codex", "cursor"])
def test_install_twice_then_uninstall_gives_back_the_same_bytes(home: Path, host: mcp_install.Host) -> None:
    path, original = _files(home)[host]
    first = cli_main("mcp", "install", host)
    assert first.returncode == 0 and "registered memsync's MCP server" in first.stdout, first.stderr
    installed = path.read_bytes()
    entry = mcp_install.registered(host)
    assert entry is not None and entry["command"] == sys.executable
    assert entry["args"] == ["-P", "-m", "memsync", "mcp"] and entry["env"]["MEMSYNC_CONFIG"].endswith(
        "config.toml"
    )
    if host == "codex":
        data = tomllib.loads(installed.decode())
        assert data["mcp_servers"]["context7"]["env"] == {"MY_VAR": "value"}
        assert installed.startswith(original)  # appended: every byte before it kept, comments too
    else:
        data = json.loads(installed)
        servers = data["mcpServers"]
        assert list(servers) == [*json.loads(original)["mcpServers"], "memsync"]
        assert data["projects"] == CLAUDE["projects"] if host == "claude-code" else True
        assert (servers["memsync"].get("type") == "stdio") is (host == "claude-code")
    again = cli_main("mcp", "install", host)
    assert again.returncode == 0 and "already registered" in again.stdout
    assert path.read_bytes() == installed
    status = cli_main("mcp", "status")
    assert f"{host}: registered in {path}: {sys.executable} -P -m memsync mcp" in status.stdout
    removed = cli_main("mcp", "uninstall", host)
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert path.read_bytes() == original
    assert cli_main("mcp", "uninstall", host).stdout.startswith("memsync's MCP server was not registered")
    assert path.read_bytes() == original


@pytest.mark.parametrize("host", ["claude-code", "codex", "cursor"])
def test_a_project_gets_its_own_file_and_a_missing_one_is_created(
    home: Path, tmp_path: Path, host: mcp_install.Host
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    result = cli_main("mcp", "install", host, "--project", str(project))
    assert result.returncode == 0, result.stderr
    path = mcp_install.config_file(host, project)
    assert path.is_relative_to(project) and path.exists()
    assert mcp_install.registered(host, project) == mcp_install.server_entry(host)
    assert mcp_install.registered(host) is None  # the user's file is untouched
    missing = cli_main("mcp", "install", host, "--project", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "--project" in missing.stderr and "not a directory" in missing.stderr


def test_codex_home_is_honoured(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    mcp_install.install("codex")
    assert "mcp_servers" in tomllib.loads((tmp_path / "codex-home" / "config.toml").read_text())


def _edit_codex(path: Path, values: dict[str, codex.Value] | None) -> bool:
    table = ("mcp_servers", "memsync")
    return edit_file(
        path, lambda data: codex.parse_config(path, data), codex.table_update(path, table, values)
    )


@pytest.mark.parametrize(
    "text",
    [
        '[mcp_servers]\nmemsync = { command = "old" }\n',
        'mcp_servers.memsync.command = "old"\n',
    ],
)
def test_a_codex_entry_written_inline_or_dotted_is_rewritten_with_the_rest_kept(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# mine\nmodel = 'o3'\n" + text)
    assert _edit_codex(path, {"command": "python"})
    assert path.read_text().startswith("# mine\nmodel = 'o3'\n")
    assert tomllib.loads(path.read_text()) == {
        "model": "o3",
        "mcp_servers": {"memsync": {"command": "python"}},
    }


@pytest.mark.parametrize("text", ["not = [valid\n", "mcp_servers = 3\n"])
def test_a_codex_file_memsync_cannot_edit_is_refused_and_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(MemsyncError, match=r"config\.toml"):
        _edit_codex(path, {"command": "python"})
    assert path.read_text() == text


def test_an_unreadable_json_file_is_refused_with_its_name(home: Path) -> None:
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text("{oops")
    result = cli_main("mcp", "install", "cursor")
    assert result.returncode == 1 and "mcp.json" in result.stderr and "Traceback" not in result.stderr
    assert (home / ".cursor" / "mcp.json").read_text() == "{oops"


_keys = st.text(alphabet="abcxyz_-0123456789", min_size=1, max_size=6)
_scalars = st.one_of(
    st.integers(-5, 5), st.booleans(), st.text(max_size=8), st.lists(st.integers(0, 3), max_size=3)
)
_documents = st.dictionaries(
    _keys, st.one_of(_scalars, st.dictionaries(_keys, _scalars, max_size=3)), max_size=5
).filter(lambda d: "mcp_servers" not in d)


@settings(max_examples=150, deadline=None)
@given(
    document=_documents, top=st.sampled_from(["", "# top\n"]), end=st.sampled_from(["", "# end\n", "\n\n"])
)
@example(document={}, top="", end="")
def test_codex_table_round_trip(document: dict[str, object], top: str, end: str) -> None:
    text = top + tomli_w.dumps(document) + end
    for cut in (text, text.rstrip("\n")):
        _round_trip(cut)


def _round_trip(text: str) -> None:
    values: dict[str, codex.Value] = {
        "command": "/usr/bin/python3",
        "args": ["-m", "memsync", "mcp"],
        "env": {"K": 'v "q" ü'},
    }
    table = ("mcp_servers", "memsync")
    path = Path("config.toml")
    add, remove = codex.table_update(path, table, values), codex.table_update(path, table, None)
    added = add(text.encode(), tomllib.loads(text))
    assert added is not None and added.decode().startswith(text)
    assert add(added, tomllib.loads(added.decode())) is None
    parsed = tomllib.loads(added.decode())
    assert parsed.pop("mcp_servers") == {"memsync": values}
    assert parsed == tomllib.loads(text)
    assert remove(added, tomllib.loads(added.decode())) == text.encode()


def test_connect_codex_rewrites_an_old_entry_in_place_keeping_every_comment(home: Path) -> None:
    """An entry an earlier memsync wrote (another interpreter) is updated where it stands: the user's
    comments before, inside and after memsync's table survive connect and disconnect byte for byte."""
    before = '# Codex settings\nmodel = "o3"  # the default model\n\n'
    ours = '[mcp_servers.memsync]\n# keep: added by hand\ncommand = "/old/python"  # the old venv\n'
    after = '\n[profiles.fast]  # quick answers\nmodel = "o4-mini"\n'
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(before + ours + after)

    connected = cli_main("connect", "codex")

    assert connected.returncode == 0, connected.stderr
    text = path.read_text()
    assert text.startswith(before + "[mcp_servers.memsync]\n# keep: added by hand\n") and text.endswith(after)
    assert f'command = "{sys.executable}"  # the old venv\n' in text
    assert mcp_install.registered("codex") == mcp_install.server_entry("codex")
    gone = cli_main("disconnect", "codex")
    assert gone.returncode == 0, gone.stderr
    assert path.read_text() == before + after.removeprefix("\n")


def test_an_inline_codex_servers_table_is_refused_with_the_entry_to_add_by_hand(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    text = 'mcp_servers = { other = { command = "x" } }\n'
    config.write_text(text)
    done = cli_main("mcp", "install", "codex")
    assert done.returncode != 0
    said = done.stderr
    assert "is defined there" not in said, said
    assert "mcp_servers is an inline table" in said, said
    # The entry to add inside the braces, one line, as TOML that reads as memsync's entry.
    line = said.split("Add inside its braces: ", 1)[1].rsplit(", then retry", 1)[0]
    added = tomllib.loads(text.replace(" }\n", ", " + line + " }\n"))
    assert added["mcp_servers"]["memsync"] == mcp_install.server_entry("codex")
    assert added["mcp_servers"]["other"] == {"command": "x"}
    assert config.read_text() == text


def test_codex_keeps_the_users_empty_servers_table_when_memsyncs_entry_goes_after_a_host_edit(
    home: Path,
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n\n[mcp_servers]\n')
    assert cli_main("mcp", "install", "codex").returncode == 0
    config.write_text(config.read_text() + "\n[tui]\nnotifications = true\n")  # Codex's own edit
    done = cli_main("mcp", "uninstall", "codex")
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(config.read_text()) == {
        "model": "o3",
        "mcp_servers": {},
        "tui": {"notifications": True},
    }


@pytest.mark.parametrize(
    ("host", "file"), [("goose", ".config/goose/config.yaml"), ("continue", ".continue/config.yaml")]
)
def test_a_yaml_servers_block_the_user_had_stays_when_memsyncs_entry_goes_after_a_host_edit(
    host: str, file: str, home: Path
) -> None:
    config = home / file
    config.parent.mkdir(parents=True)
    key = "extensions" if host == "goose" else "mcpServers"
    config.write_text(f"# mine\n{key}:\n")
    assert cli_main("mcp", "install", host).returncode == 0
    config.write_text(config.read_text() + "model: gpt\n")  # the host's own edit
    done = cli_main("mcp", "uninstall", host)
    assert done.returncode == 0, done.stderr
    assert config.read_text() == f"# mine\n{key}:\nmodel: gpt\n"

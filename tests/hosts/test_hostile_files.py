"""A host's settings file in a hostile world: an edit never loses what the host wrote. An empty or
unreadable file is refused, never taken for empty settings; a symlink is edited at its target; a
special file is refused; modes and number text are kept; odd content gets one line, never a traceback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.errors import MemsyncError
from memsync.hosts import mcp_install, settings_file
from memsync.hosts.settings_file import BACKUP_SUFFIX, edit_json_object
from tests.support.helpers import cli_main, run_cli
from tests.support.npm import BIN, installed

# In the layout Claude Code writes (JSON.stringify(settings, null, 2)), so it comes back byte for byte.
HOST_DATA = json.dumps({"numStartups": 12, "oauthAccount": {"key": "sk-secret"}}, indent=2)


def _claude_json(home: Path, text: str = HOST_DATA) -> Path:
    path = home / ".claude.json"
    path.write_text(text, encoding="utf-8")
    return path


def _one_line_refusal(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("content", [b"", b"  \n", b'{\n  "numStartups": 12,\n  "oauthAcc'])
def test_an_empty_or_half_written_file_is_refused_and_left_alone(
    home: Path, content: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short wait for a host to finish writing: the file stays the same, so the refusal is what is tested.
    monkeypatch.setattr(settings_file, "SETTLE_S", 0.1)
    path = home / ".claude.json"
    path.write_bytes(content)
    for args in (("mcp", "install", "claude-code"), ("mcp", "uninstall", "claude-code")):
        said = _one_line_refusal(cli_main(*args))
        assert ".claude.json" in said and ("empty" in said or "not valid JSON" in said)
        assert path.read_bytes() == content
        assert not path.with_name(path.name + BACKUP_SUFFIX).exists()


def test_hooks_install_refuses_an_empty_settings_file(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b"")
    assert "empty" in _one_line_refusal(cli_main("hooks", "install", "claude-code"))
    assert path.read_bytes() == b""


def test_a_symlinked_file_is_edited_at_its_target_and_stays_a_link(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    target.write_text(HOST_DATA)
    link = home / ".claude.json"
    link.symlink_to(os.path.relpath(target, home))
    assert cli_main("mcp", "install", "claude-code").returncode == 0
    assert link.is_symlink() and link.resolve() == target
    data = json.loads(target.read_text())
    assert data["oauthAccount"] == {"key": "sk-secret"} and "memsync" in data["mcpServers"]
    assert link.with_name(link.name + BACKUP_SUFFIX).read_text() == HOST_DATA
    assert cli_main("mcp", "uninstall", "claude-code").returncode == 0
    assert link.is_symlink() and target.read_text() == HOST_DATA


@pytest.mark.parametrize("special", ["/dev/null", "fifo", "directory"])
def test_a_link_to_a_special_file_is_refused(home: Path, tmp_path: Path, special: str) -> None:
    where = Path(special) if special.startswith("/") else tmp_path / special
    if special == "fifo":
        os.mkfifo(where)
    elif special == "directory":
        where.mkdir()
    link = home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(where)
    said = _one_line_refusal(cli_main("hooks", "install", "claude-code"))
    assert "not a regular file" in said
    assert link.is_symlink() and os.readlink(link) == str(where)
    assert not stat.S_ISREG(os.stat(where).st_mode)


def test_mode_and_backup_mode_follow_the_original(home: Path) -> None:
    path = _claude_json(home)
    path.chmod(0o600)  # ~/.claude.json holds an API key
    assert cli_main("mcp", "install", "claude-code").returncode == 0
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600 and backup.read_text() == HOST_DATA


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_the_owner_is_kept(home: Path) -> None:
    path = _claude_json(home)
    os.chown(path, 4321, 4321)
    assert cli_main("mcp", "install", "claude-code").returncode == 0
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4321)
    assert "memsync" in json.loads(path.read_text())["mcpServers"]


def test_a_deeply_nested_codex_config_gets_one_line_and_status_names_it(home: Path) -> None:
    path = mcp_install.config_file("codex")
    path.parent.mkdir(parents=True)
    path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    before = path.read_bytes()
    assert "nested too deeply" in _one_line_refusal(cli_main("mcp", "install", "codex"))
    assert path.read_bytes() == before
    status = cli_main("mcp", "status")
    assert status.returncode == 0, status.stderr
    assert "codex: cannot read" in status.stdout and "claude-code: not registered" in status.stdout


def test_number_text_is_kept_as_written(home: Path) -> None:
    text = (
        '{\n  "big": 1e400,\n  "tiny": -1E-400,\n  "price": 1.50,\n  "zero": -0,\n'
        '  "n": [\n    2.0,\n    10\n  ]\n}\n'
    )
    path = _claude_json(home, text)
    assert cli_main("mcp", "install", "claude-code").returncode == 0
    written = path.read_text()
    assert "Infinity" not in written and '"big": 1e400,' in written and '"tiny": -1E-400,' in written
    assert '"price": 1.50,' in written and '"zero": -0,' in written
    assert json.loads(written)["mcpServers"]["memsync"]["args"] == ["-P", "-m", "memsync", "mcp"]
    assert cli_main("mcp", "uninstall", "claude-code").returncode == 0
    assert path.read_text() == text


def test_a_lone_surrogate_is_kept_escaped(home: Path) -> None:
    text = '{\n  "note": "half \\ud800 pair",\n  "ok": "\\ud83d\\ude00"\n}'
    path = _claude_json(home, text)
    result = cli_main("mcp", "install", "claude-code")
    assert result.returncode == 0, result.stderr
    written = path.read_bytes().decode("utf-8")  # valid UTF-8: no raw surrogate
    assert '"note": "half \\ud800 pair"' in written and "\U0001f600" in written
    assert json.loads(written)["note"] == "half \ud800 pair"


def test_a_deeply_nested_file_gets_one_line(home: Path) -> None:
    path = _claude_json(home, '{"deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    before = path.read_bytes()
    assert "nested too deeply" in _one_line_refusal(cli_main("mcp", "install", "claude-code"))
    assert path.read_bytes() == before


@pytest.mark.parametrize("frozen", ["file", "directory"])
def test_an_immutable_file_or_directory_gets_one_line(home: Path, frozen: str) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(HOST_DATA)
    what = path if frozen == "file" else path.parent  # an immutable directory: not even root writes in it
    if subprocess.run(["chattr", "+i", str(what)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a file system that has it)")
    try:
        said = _one_line_refusal(cli_main("mcp", "install", "cursor"))
        assert "mcp.json" in said and "lsattr" in said
    finally:
        subprocess.run(["chattr", "-i", str(what)], check=True)
    assert path.read_text() == HOST_DATA


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_directory_gets_one_line(home: Path) -> None:
    path = _claude_json(home)
    home.chmod(0o555)
    try:
        said = _one_line_refusal(cli_main("mcp", "install", "claude-code"))
    finally:
        home.chmod(0o755)
    assert ".claude.json" in said and path.read_text() == HOST_DATA


def _add(settings: dict[str, Any]) -> None:
    settings.setdefault("mcpServers", {})["memsync"] = {"command": "memsync"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.binary(max_size=64) | st.text(max_size=64).map(lambda t: ("{" + t).encode("utf-8", "replace"))
)
def test_any_bytes_are_edited_or_refused_with_memsync_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.setattr(settings_file, "SETTLE_S", 0.0)
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    try:
        changed = edit_json_object(path, _add)
    except MemsyncError:
        assert path.read_bytes() == content
        return
    assert changed and json.loads(path.read_bytes())["mcpServers"]["memsync"] == {"command": "memsync"}


_number = st.from_regex(r"\A-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,4})?\Z")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(numbers=st.lists(_number, min_size=1, max_size=4), indent=st.sampled_from(["  ", "\t"]))
def test_numbers_come_back_byte_for_byte(tmp_path: Path, numbers: list[str], indent: str) -> None:
    path = tmp_path / "settings.json"
    text = "{\n" + ",\n".join(f'{indent}"n{i}": {number}' for i, number in enumerate(numbers)) + "\n}"
    path.write_text(text)
    assert edit_json_object(path, _add)
    assert json.loads(path.read_text())["n0"] == json.loads(text)["n0"]
    assert edit_json_object(path, lambda settings: settings.pop("mcpServers"))
    assert path.read_text() == text


# The host: rewrites its file 30 times a second, alternately in place (truncate, then write: readers may
# see it empty or half written) and by rename, each time adding a key of its own to what it read.
_HOST = r"""
import json, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
pad = "x" * 200_000
i = 0
while not os.path.exists(stop):
    data = json.loads(open(path, encoding="utf-8").read())
    data[f"k{i}"] = i
    data["pad"] = pad
    text = json.dumps(data, indent=2)
    if i % 2:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text[: len(text) // 2])
            out.flush()
            time.sleep(0.002)
            out.write(text[len(text) // 2 :])
    else:
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(path + ".tmp", path)
    i += 1
    time.sleep(1 / 30)
print(i)
"""


def _rewrites_seen(path: Path) -> int:
    """How many rewrites the host's keys in ``path`` show (0 while it is half written)."""
    try:
        return sum(key.startswith("k") for key in json.loads(path.read_text()))
    except (OSError, ValueError):
        return 0


@pytest.mark.slow
def test_installs_racing_a_host_rewriting_its_file_lose_nothing(home: Path, tmp_path: Path) -> None:
    path = _claude_json(home)
    stop = tmp_path / "stop"
    host = subprocess.Popen(
        [sys.executable, "-c", _HOST, str(path), str(stop)], stdout=subprocess.PIPE, text=True
    )
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    done, refused, bad_backups = 0, 0, 0
    rounds = 0
    try:
        # At least 30 rounds, and on until the host has rewritten its file 30 times: on a loaded machine
        # the host is slower than the installs, and the race needs both sides (bounded, not timed).
        while (rounds < 30 or _rewrites_seen(path) < 30) and rounds < 600:
            rounds += 1
            for edit in (mcp_install.install, mcp_install.uninstall):
                try:
                    done += edit("claude-code").changed
                except MemsyncError:
                    refused += 1
                if backup.exists():
                    bad_backups += not backup.read_bytes().strip()
                    json.loads(backup.read_bytes())  # every backup is a whole file the host wrote
    finally:
        stop.touch()
        out, _ = host.communicate(timeout=30)
    rewrites = int(out)
    final = json.loads(path.read_text())
    lost = [i for i in range(rewrites) if final.get(f"k{i}") != i]
    assert (lost, bad_backups) == ([], 0)
    assert final["oauthAccount"] == {"key": "sk-secret"}
    assert done >= 40 and rewrites >= 30, (done, refused, rewrites)


@pytest.mark.slow
def test_claude_registers_memsync_with_its_own_command(home: Path) -> None:
    installed("claude", "@anthropic-ai/claude-code")
    path = _claude_json(home)
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    first = run_cli("mcp", "install", "claude-code", env=env)
    assert first.returncode == 0 and "registered memsync's MCP server" in first.stdout, first.stderr
    data = json.loads(path.read_text())
    assert data["mcpServers"]["memsync"] == mcp_install.server_entry("claude-code")
    assert data["oauthAccount"] == {"key": "sk-secret"}
    assert not path.with_name(path.name + BACKUP_SUFFIX).exists()  # claude wrote it, not memsync
    again = run_cli("mcp", "install", "claude-code", env=env)
    assert "already registered" in again.stdout, again.stderr
    gone = run_cli("mcp", "uninstall", "claude-code", env=env)
    assert gone.returncode == 0 and "removed" in gone.stdout, gone.stderr
    assert "memsync" not in json.loads(path.read_text()).get("mcpServers", {})
    assert not path.with_name(path.name + BACKUP_SUFFIX).exists()


@pytest.mark.slow
def test_codex_registers_memsync_with_its_own_command(home: Path) -> None:
    installed("codex", "@openai/codex")
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    path = mcp_install.config_file("codex")
    path.parent.mkdir(parents=True)
    path.write_text('model = "o3"  # kept\n')
    first = run_cli("mcp", "install", "codex", env=env)
    assert first.returncode == 0 and "registered memsync's MCP server" in first.stdout, first.stderr
    assert mcp_install.registered("codex") == mcp_install.server_entry("codex")
    assert not path.with_name(path.name + BACKUP_SUFFIX).exists()  # codex wrote it, not memsync
    assert "already registered" in run_cli("mcp", "install", "codex", env=env).stdout
    gone = run_cli("mcp", "uninstall", "codex", env=env)
    assert gone.returncode == 0 and "removed" in gone.stdout, gone.stderr
    assert mcp_install.registered("codex") is None and 'model = "o3"' in path.read_text()

"""A new user's first commands on a fresh HOME, through the real CLI: tracking a path inside a default
folder, naming the machine, changing a setting, a config with a key it does not know."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main, run_cli


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def _tracks(home: Path) -> list[dict[str, object]]:
    tracks: list[dict[str, object]] = tomllib.loads(_config(home).read_text())["stores"]["personal"]["track"]
    return tracks


@pytest.mark.parametrize(
    ("inside", "store_path"),
    [(".agents/memory/scout", "roles/scout"), (".agent-memory/lessons.jsonl", "memory/lessons.jsonl")],
)
def test_init_track_inside_a_default_folder_succeeds_and_tracks_it_once(
    home: Path, inside: str, store_path: str
) -> None:
    """It failed naming a config file that did not exist (the folder track overlapped the given one)."""
    live = home / inside
    live.parent.mkdir(parents=True)
    first = cli_main("init", "--track", str(live))
    assert first.returncode == 0, first.stderr
    covered = f"{live} is synced as {store_path}, as part of the tracked folder {live.parent}"
    assert covered in first.stdout.splitlines()
    assert [t["path"] for t in _tracks(home)] == ["~/.agents/memory", "~/.agent-memory"]

    again = cli_main("init", "--track", str(live))
    assert again.returncode == 0, again.stderr
    assert covered in again.stdout.splitlines() and "(unchanged)" in again.stdout

    track = cli_main("track", str(live))
    assert track.returncode == 0, track.stderr
    assert track.stdout.splitlines() == [covered]
    assert [t["path"] for t in _tracks(home)] == ["~/.agents/memory", "~/.agent-memory"]


def test_an_error_about_the_config_names_no_file_that_does_not_exist(home: Path) -> None:
    result = cli_main("init", "--track", str(home / ".agents"))  # holds the default folder it would track
    assert result.returncode == 1
    assert "config.toml" not in result.stderr and not _config(home).exists()
    assert result.stderr.startswith("memsync: cannot track --track ") and result.stderr.count("\n") == 1


def test_init_host_names_the_machine_and_status_prints_it_first(home: Path) -> None:
    result = cli_main("init", "--host", "desk-vm")
    assert result.returncode == 0, result.stderr
    assert "host: desk-vm" in result.stdout
    assert tomllib.loads(_config(home).read_text())["host"] == "desk-vm"
    status = cli_main("status")
    assert status.stdout.splitlines()[0].startswith("host: desk-vm")
    assert json.loads(cli_main("status", "--json").stdout)["host"] == "desk-vm"
    sync = cli_main("sync")
    assert sync.returncode == 0, sync.stderr


@pytest.mark.slow
def test_config_get_and_set_validate_like_load_config(home: Path) -> None:
    _config(home).parent.mkdir(parents=True)
    _config(home).write_text("[stores.personal]\n")  # as `memsync init` leaves it; no store is needed
    assert run_cli("config", "set", "host", "laptop-2").returncode == 0
    assert run_cli("config", "get", "host").stdout == "laptop-2\n"
    assert run_cli("config", "set", "author.email", "ada@example.org").returncode == 0
    assert run_cli("config", "get", "author.email").stdout == "ada@example.org\n"
    assert run_cli("config", "set", "debounce_s", "2.5").returncode == 0
    assert run_cli("config", "get", "debounce_s").stdout == "2.5\n"
    assert run_cli("config", "get", "stores.personal.branch").stdout == "main\n"
    raw = tomllib.loads(_config(home).read_text())
    assert (raw["host"], raw["author"], raw["debounce_s"]) == ("laptop-2", {"email": "ada@example.org"}, 2.5)

    before = _config(home).read_bytes()
    for args, message in (
        (("set", "colour", "blue"), "`colour` is not a known key at the top level"),
        (("set", "stores.personal.colour", "x"), "`stores.personal.colour` is not a known key in table"),
        (("set", "debounce_s", "0"), "`debounce_s` must be a positive number of seconds"),
        (("set", "debounce_s", "-5"), "`debounce_s` must be a positive number of seconds (got -5.0)"),
        (("set", "debounce_s", "soon"), "'soon' is not a number of seconds"),
        (("get", "author.nick"), "`nick` is not a known key in table [author]"),
    ):
        result = run_cli("config", *args)
        assert result.returncode == 1, args
        assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert _config(home).read_bytes() == before


def test_a_host_line_appended_after_the_remotes_table_is_an_error_naming_key_and_table(
    home: Path, tmp_path: Path
) -> None:
    """It became a remote named `host`, shown by `status` with exit 0."""
    assert cli_main("init", "--remote", str(bare_remote(tmp_path / "remote.git"))).returncode == 0
    with _config(home).open("a") as config:
        config.write('host = "desk"\n')
    status = cli_main("status")
    assert status.returncode == 1
    assert "`stores.personal.remotes.host` = 'desk'" in status.stderr
    assert "top-level keys go before the first [table]" in status.stderr
    assert "remote host" not in status.stdout


def test_a_host_name_with_a_line_break_or_too_long_is_refused_naming_the_key(home: Path) -> None:
    """A line break in it forged a second `Memsync-Host` trailer: `log` credited another machine."""
    forged = "alpha\nMemsync-Host: gamma"
    _config(home).parent.mkdir(parents=True)
    _config(home).write_text("[stores.personal]\n")
    before = _config(home).read_bytes()
    for value, why in ((forged, "holds a control character"), ("x" * 65, "65 characters long (at most 64)")):
        result = cli_main("config", "set", "host", value)
        assert result.returncode == 1
        assert "`host`" in result.stderr and why in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert _config(home).read_bytes() == before
    assert cli_main("config", "set", "host", "alpha-2").returncode == 0

    _config(home).write_text('host = "alpha\\tbeta"\n[stores.personal]\n')  # edited by hand
    status = cli_main("status")
    assert status.returncode == 1 and f"invalid config {_config(home)}: `host`" in status.stderr

    _config(home).unlink()
    init = cli_main("init", "--host", forged)
    assert init.returncode == 1 and "`host`" in init.stderr and "control character" in init.stderr
    assert not _config(home).exists() or "gamma" not in _config(home).read_text()


def test_init_encrypt_says_the_remote_receives_ciphertext_only(home: Path, tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "memory.git")
    made = run_cli("init", "--remote", str(remote), "--encrypt")
    assert made.returncode == 0, made.stderr
    said = [line for line in made.stdout.splitlines() if "ciphertext" in line]
    assert len(said) == 1 and said[0].startswith(
        "personal's remote receives ciphertext only (encrypted for its members' keys); "
        "this device's key: age1"
    )
    tree = subprocess.run(
        ["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert tree.stdout.split() == [".memsync/format", "data.age"]
    plain = run_cli(
        "init", "--remote", str(bare_remote(tmp_path / "plain.git")), env=isolated_env(tmp_path / "p")
    )
    assert plain.returncode == 0 and "ciphertext" not in plain.stdout, plain.stderr

"""Before `memsync init`, through the real CLI: a command that needs a store says so in one line and
exits 1, whether there is no config at all or a config without a store. The first case runs one `python
-m memsync` process; the rest call the same entry point in-process (``cli_main``), which is faster."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.support.helpers import cli_main, run_cli, wait_for

NO_STORE = "memsync: no memsync store here yet: run `memsync init` (or `memsync up`)\n"


def needs_a_store(home: Path) -> list[tuple[str, ...]]:
    return [
        ("remote", "add", "origin", str(home / "remote.git")),
        ("remote", "remove", "origin"),
        ("track", str(home / "notes")),
        ("sync",),
        ("log",),
        ("resync", "origin"),
        ("purge", "a secret line", "--yes"),
    ]


def test_without_a_config_every_command_needing_a_store_says_run_init(home: Path) -> None:
    (home / "notes").mkdir(parents=True)
    result = run_cli("sync")
    assert (result.returncode, result.stderr) == (1, NO_STORE)
    for args in needs_a_store(home):
        result = cli_main(*args)
        assert (result.returncode, result.stderr) == (1, NO_STORE), args
    assert not (home / ".config" / "memsync" / "config.toml").exists()


def test_a_config_without_a_store_says_the_same(home: Path) -> None:
    (home / "notes").mkdir(parents=True)
    assert cli_main("config", "set", "host", "laptop").returncode == 0
    for args in needs_a_store(home):
        result = cli_main(*args)
        assert (result.returncode, result.stderr) == (1, NO_STORE), args


def test_status_doctor_and_the_daemon_say_a_config_without_a_store_syncs_nothing(
    home: Path, tmp_path: Path
) -> None:
    assert cli_main("config", "set", "host", "laptop").returncode == 0
    status = cli_main("status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[2:] == ["no stores: run `memsync init`"]
    doctor = cli_main("doctor")
    assert doctor.returncode == 1
    config = home / ".config" / "memsync" / "config.toml"
    assert f"{config} names no store: nothing is synced. Run `memsync init`" in doctor.stdout
    assert not [line for line in doctor.stdout.splitlines() if line.startswith("OK") and "config" in line]

    log = tmp_path / "daemon.log"
    with log.open("wb") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon"], stdout=out, stderr=out, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(
            lambda: "no stores in" in log.read_text(), timeout=60, what="the daemon's warning about no stores"
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
    warning = next(line for line in log.read_text().splitlines() if "no stores in" in line)
    assert "WARNING" in warning and "Run `memsync init`" in warning and str(config) in warning


def test_commands_that_work_without_a_store_say_it_is_missing(home: Path) -> None:
    nothing = cli_main("recall", "harbor")
    assert (nothing.returncode, nothing.stdout) == (1, "")
    assert nothing.stderr == f"memsync: nothing matches 'harbor' in the default memory file: {NO_STORE[9:]}"
    note = NO_STORE.replace("memsync: ", "note: ", 1).rstrip("\n")
    for args in [
        ("hooks", "install", "claude-code"),
        ("mcp", "install", "claude-code"),
        ("config", "set", "host", "lap"),
    ]:
        done = cli_main(*args)
        assert done.returncode == 0, done.stderr
        assert done.stderr.startswith(note + ": until then "), (args, done.stderr)
    assert cli_main("remember", "The harbor gate opens at six.").returncode == 0
    found = cli_main("recall", "harbor")
    assert found.returncode == 0 and "The harbor gate opens at six." in found.stdout
    assert found.stderr == f"{note}: only the default memory file was searched\n"

    assert cli_main("init").returncode == 0
    for args in [("hooks", "install", "claude-code"), ("config", "set", "host", "lap"), ("recall", "harbor")]:
        done = cli_main(*args)
        assert done.returncode == 0 and "note:" not in done.stderr, (args, done.stderr)

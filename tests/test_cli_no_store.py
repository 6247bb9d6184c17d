"""Before `memsync init`, through the real CLI: a command that needs a store says so in one line and
exits 1, whether there is no config at all or a config without a store."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli

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
    for args in needs_a_store(home):
        result = run_cli(*args)
        assert (result.returncode, result.stderr) == (1, NO_STORE), args
    assert not (home / ".config" / "memsync" / "config.toml").exists()


def test_a_config_without_a_store_says_the_same(home: Path) -> None:
    (home / "notes").mkdir(parents=True)
    assert run_cli("config", "set", "host", "laptop").returncode == 0
    for args in needs_a_store(home):
        result = run_cli(*args)
        assert (result.returncode, result.stderr) == (1, NO_STORE), args

"""What the CLI says, through the real CLI: one prefix, counts in the singular where they are 1, a result
printed once, nothing asked of other machines when nothing changed, forgetting twice is no error. The CLI's
entry point runs in-process (``cli_main``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main


def test_an_error_has_one_memsync_prefix(home: Path) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[stores.personal]\n")  # what these commands read; no store is needed
    for args in (
        ("untrack", str(home / "nowhere")),
        ("remote", "remove", "nope"),
        ("store", "add", "personal"),
    ):
        result = cli_main(*args)
        assert result.returncode == 1
        assert result.stderr.startswith("memsync: ") and "memsync: memsync" not in result.stderr, args


def test_forgetting_an_already_forgotten_entry_exits_0_and_says_so(home: Path) -> None:
    memory = home / "m.jsonl"
    entry_id = cli_main("remember", "Deploys on Mondays.", "--file", str(memory)).stdout.split()[1]
    assert cli_main("forget", entry_id, "--file", str(memory)).returncode == 0
    size = memory.stat().st_size
    again = cli_main("forget", entry_id, "--file", str(memory))
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"{entry_id} is already forgotten in {memory}; nothing changed\n"
    assert memory.stat().st_size == size  # no second tombstone


def test_compact_prints_its_result_once_and_never_minus_zero(home: Path) -> None:
    assert cli_main("init").returncode == 0
    memory = home / ".agent-memory" / "ada.jsonl"
    first = cli_main("remember", "Old.", "--file", str(memory)).stdout.split()[1]
    cli_main("remember", "Kept.", "--file", str(memory))
    cli_main("forget", first, "--file", str(memory))
    assert cli_main("sync").returncode == 0
    done = cli_main("compact", str(memory))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("compacted") == 1 and "compacted" not in done.stderr
    assert re.fullmatch(rf"compacted {memory}: 4 -> 3 lines; store personal: 1 line removed\n", done.stdout)
    again = cli_main("compact", str(memory))
    assert again.stdout == f"compacted {memory}: 3 -> 3 lines; store personal: unchanged\n"
    # The figures, not the whole output: a temp path such as pytest's `pytest-0` holds "-0" of its own.
    assert not re.search(r"(?<![\w/.])-0\b", again.stdout.replace(str(memory), "FILE"))
    assert "compacted" not in again.stderr


def test_a_purge_that_found_nothing_says_so_and_asks_nothing_of_other_machines(home: Path) -> None:
    assert cli_main("init").returncode == 0
    nothing = cli_main("purge", "no-such-text", "--yes")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == "store personal: the given text was not found; nothing changed\n"
    assert "purged" not in nothing.stderr

    memory = home / ".agent-memory" / "ada.jsonl"
    cli_main("remember", "The staging password rotates.", "--file", str(memory))
    assert cli_main("sync").returncode == 0
    found = cli_main("purge", "staging password", "--yes")
    assert found.returncode == 0, found.stderr
    assert "removed 1 line from 1 live file; rewrote " in found.stdout
    assert "(s)" not in found.stdout and "live lines" not in found.stderr
    assert "on every other machine" in found.stdout


def test_a_delivered_line_is_counted_in_the_singular(home: Path, tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    role = home / ".agents" / "memory" / "scout" / "daily"
    role.mkdir(parents=True)
    log = role / "2026-01-05.md"
    log.write_text("# Daily log — 2026-01-05\n\n")
    assert cli_main("init", "--remote", str(remote)).returncode == 0
    assert cli_main("sync").returncode == 0
    bob = isolated_env(tmp_path / "bob")
    assert cli_main("init", "--remote", str(remote), env=bob).returncode == 0
    assert cli_main("sync", env=bob).returncode == 0
    with log.open("a") as out:
        out.write("- [09:00] one line\n")
    assert cli_main("sync").returncode == 0
    delivered = cli_main("sync", "-v", env=bob)  # -v: each step, each file delivered among them
    assert delivered.returncode == 0, delivered.stderr
    assert "daily/2026-01-05.md appended (+1 line)" in delivered.stderr, delivered.stderr
    assert "; delivered 1 file" in delivered.stdout

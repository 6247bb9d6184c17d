"""`memsync log` of an unknown path or id says there is no history (exit 1); a real one is unchanged; one
filtered to nothing says so on stderr (exit 0). `memsync forget ""` is a usage error naming ID."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.cli import main
from memsync.commands import setup
from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.helpers import cli_main


def _no_history(target: str) -> str:
    return f"memsync log: no history for {target} (not a tracked path, store path or entry id)"


@pytest.fixture
def synced(home: Path) -> tuple[Path, str]:
    """A store holding one memory file with one entry: (the live file, the entry's id)."""
    setup.init()
    live = home / ".agent-memory" / "notes.jsonl"
    entry = MemoryFile(live).remember(NewEntry("use uv for python envs", "preference"))
    assert main(["sync"]) == 0
    return live, entry.id


def test_log_of_an_unknown_path_or_id_says_so_and_exits_1(synced: tuple[Path, str], tmp_path: Path) -> None:
    result = cli_main("log", "/nonexistent")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", _no_history("/nonexistent") + "\n")
    result = cli_main("log", "deadbeef")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", _no_history("deadbeef") + "\n")


def test_log_of_a_real_path_store_path_or_id_is_unchanged(
    synced: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    live, entry_id = synced
    for target in (str(live), "memory/notes.jsonl", entry_id):
        assert main(["log", target]) == 0
        out = capsys.readouterr().out
        assert "    memory/notes.jsonl" in out.splitlines(), target
    assert "added: use uv for python envs" in out
    for target in ("../outside", "memory/never-there.jsonl"):
        assert main(["log", target]) == 1
        assert capsys.readouterr().err == _no_history(target) + "\n"


def test_log_filtered_to_nothing_says_so_on_stderr_and_exits_0(synced: tuple[Path, str]) -> None:
    result = cli_main("log", "--host", "nohost")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "",
        "memsync log: no commit from host nohost\n",
    )
    result = cli_main("log", "--host", "nohost", "--since", "2030-01-01")
    assert result.stderr == "memsync log: no commit from host nohost since 2030-01-01\n"
    assert result.returncode == 0 and result.stdout == ""
    shown = cli_main("log")
    assert shown.stdout and shown.stderr == ""


def test_forget_of_an_empty_id_is_a_usage_error_naming_id_and_writes_nothing(
    synced: tuple[Path, str],
) -> None:
    live, _ = synced
    before = live.read_bytes()
    result = cli_main("forget", "", "--file", str(live))
    assert result.returncode == 2 and result.stdout == ""
    assert "Invalid value for 'ID': an entry id is needed, as `memsync show` lists it" in result.stderr
    assert live.read_bytes() == before

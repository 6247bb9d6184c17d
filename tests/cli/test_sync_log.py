"""`memsync log` of an unknown path or id says there is no history (exit 1); a real one is unchanged."""

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

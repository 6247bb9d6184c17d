"""`memsync prompt FILE --max-bytes N` too small for any entry prints the left-out note, not nothing."""

from __future__ import annotations

from pathlib import Path

from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.helpers import cli_main


def test_prompt_too_small_for_any_entry_prints_the_note(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    memory = MemoryFile(path)
    memory.remember(NewEntry("Use uv for Python environments.", "preference"))
    memory.remember(NewEntry("The CI runs on Ubuntu 24.04.", "fact"))
    result = cli_main("prompt", str(path), "--max-bytes", "10")
    assert (result.returncode, result.stdout) == (0, "(2 more entries left out to fit the size limit)\n")
    fits = cli_main("prompt", str(path), "--max-bytes", "80")
    assert fits.stdout.startswith("# Memory\n") and len(fits.stdout.encode()) <= 80
    assert fits.stdout.endswith(" left out to fit the size limit)\n")

"""`remember` refuses a text no reader could see (DESIGN "Hostile input": readers take lines of at most
``bounded_json.MAX_LINE_BYTES``): over ``TEXT_MAX_CHARS`` characters it is one line naming the limit and
nothing is written; at the limit, in the characters JSON escapes longest, the entry is in the view."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memsync.cli import main
from memsync.formats.jsonl.parse import read_memory
from memsync.memoryfile.file import TEXT_MAX_CHARS
from tests.support.helpers import cli_main, run_cli


def test_a_text_over_the_limit_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    memory = tmp_path / "ada.jsonl"
    assert cli_main("remember", "Use plain English.", "--file", str(memory)).returncode == 0
    before = memory.read_bytes()
    # Over the limit, yet under the 128 KiB one argument may hold: a real process takes it.
    refused = run_cli("remember", "x" * (TEXT_MAX_CHARS + 1), "--file", str(memory))
    assert refused.returncode == 1
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert f"the text is {TEXT_MAX_CHARS + 1:,} characters, over the limit of {TEXT_MAX_CHARS:,}" in line
    assert memory.read_bytes() == before


def test_a_text_at_the_limit_is_in_the_view_whatever_its_escapes(tmp_path: Path) -> None:
    memory = tmp_path / "ada.jsonl"
    text = "\x01" * TEXT_MAX_CHARS  # six bytes each in JSON (\u0001): the longest line a text can make
    assert main(["remember", text, "--file", str(memory)]) == 0
    [entry] = read_memory(memory).view(datetime.now(UTC))
    assert entry.text == text


def test_an_entry_whose_line_no_reader_takes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = tmp_path / "ada.jsonl"
    # Its text is short; its tags make the line longer than readers accept.
    assert main(["remember", "Short.", "--file", str(memory), *["--tag", "t" * 300_000] * 4]) == 1
    assert "over the 1,048,576 every reader accepts" in capsys.readouterr().err
    assert not memory.exists() or b"Short." not in memory.read_bytes()

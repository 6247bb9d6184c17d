"""memsync.writers: which open handles make appending to a live file unsafe (real processes, real files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memsync.writers import positional_writer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="open-file flags are reported on Linux only (elsewhere: None)")


@pytest.mark.parametrize(("mode", "expected"), [("rb", False), ("ab", False), ("a+b", False),
                                                ("r+b", True), ("wb", True)])
def test_only_a_writer_at_its_own_file_position_counts(tmp_path: Path, mode: str, expected: bool) -> None:
    path = tmp_path / "daily.md"
    path.write_bytes(b"- one\n")
    assert positional_writer(path) is False
    with path.open(mode):
        assert positional_writer(path) is expected
    assert positional_writer(path) is False


def test_another_process_holding_the_file_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "daily.md"
    path.write_bytes(b"")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'r+b'); print('open', flush=True); "
                               "sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert positional_writer(tmp_path / "." / "daily.md") is True
    finally:
        holder.communicate("")
    assert positional_writer(path) is False

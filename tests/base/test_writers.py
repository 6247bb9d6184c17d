"""memsync.base.writers: which open handles make appending to a live file unsafe (real processes, real
files)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.base.writers import positional_writers

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="open-file flags are reported on Linux only (elsewhere: None)",
)


@pytest.mark.parametrize(
    ("mode", "expected"), [("rb", False), ("ab", False), ("a+b", False), ("r+b", True), ("wb", True)]
)
def test_only_a_writer_at_its_own_file_position_counts(tmp_path: Path, mode: str, expected: bool) -> None:
    path = tmp_path / "daily.md"
    path.write_bytes(b"- one\n")
    assert str(path) not in held()
    with path.open(mode):
        assert (str(path) in held()) is expected
    assert str(path) not in held()


def test_another_process_holding_the_file_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "daily.md"
    path.write_bytes(b"")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; f = open(sys.argv[1], 'r+b'); print('open', flush=True); sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        assert os.path.realpath(tmp_path / "." / "daily.md") in held()
    finally:
        holder.communicate("")
    assert str(path) not in held()


def held() -> frozenset[str]:
    found = positional_writers()
    assert found is not None
    return found

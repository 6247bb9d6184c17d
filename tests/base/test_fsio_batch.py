"""fsio.WriteBatch: many writes made durable together keep each single-file function's guarantee."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memsync.base.fsio import TEMP_PREFIX, WriteBatch


def temps(root: Path) -> list[Path]:
    """Every memsync temp file under ``root``."""
    return [path for path in root.rglob("*") if path.name.startswith(TEMP_PREFIX)]


def test_each_kind_of_write_lands_and_nothing_is_left_behind(tmp_path: Path) -> None:
    kept_mode = tmp_path / "notes" / "private.md"
    kept_mode.parent.mkdir()
    kept_mode.write_bytes(b"old\n")
    kept_mode.chmod(0o600)
    appeared = tmp_path / "notes" / "appeared.md"
    appeared.write_bytes(b"an agent's own file\n")
    log = tmp_path / "daily" / "2026-11-30.md"
    gone = tmp_path / "notes" / "gone.md"
    gone.write_bytes(b"bye\n")
    batch = WriteBatch()
    batch.add("replace", kept_mode, b"new\n")
    batch.add("create", tmp_path / "deep" / "er" / "new.md", b"created\n")
    batch.add("create", appeared, b"memsync's version\n")
    batch.add("append", log, b"- [10:00] one\n")
    batch.add("remove", gone)
    batch.add("remove", tmp_path / "never" / "was.md")
    assert (len(batch), batch.size) == (6, 4 + 8 + 18 + 14)
    assert not (tmp_path / "deep").exists(), "nothing is written before apply"

    assert batch.apply() == [True, True, False, True, True, True]
    assert (len(batch), batch.size) == (0, 0)
    assert kept_mode.read_bytes() == b"new\n" and kept_mode.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "deep" / "er" / "new.md").read_bytes() == b"created\n"
    assert appeared.read_bytes() == b"an agent's own file\n", "a create never replaces a file"
    assert log.read_bytes() == b"- [10:00] one\n"
    assert not gone.exists()
    assert temps(tmp_path) == []

    batch.add("append", log, b"- [10:05] two\n")
    assert batch.apply() == [True]
    assert log.read_bytes() == b"- [10:00] one\n- [10:05] two\n"


def test_a_created_file_gets_the_umask_mode(tmp_path: Path) -> None:
    batch = WriteBatch()
    batch.add("create", tmp_path / "new.md", b"x\n")
    mask = os.umask(0o027)
    try:
        batch.apply()
    finally:
        os.umask(mask)
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == 0o640


def test_a_failing_write_raises_and_leaves_no_temp_file(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_bytes(b"not a directory\n")
    first, after = tmp_path / "first.md", tmp_path / "after.md"
    batch = WriteBatch()
    batch.add("replace", first, b"one\n")
    batch.add("replace", tmp_path / "a-file" / "x.md", b"cannot be\n")
    batch.add("create", after, b"three\n")
    with pytest.raises(OSError):
        batch.apply()
    assert not first.exists() and not after.exists(), "a failure before the sync writes nothing in place"
    assert temps(tmp_path) == []
    assert len(batch) == 0

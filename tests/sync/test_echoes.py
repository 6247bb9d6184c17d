"""memsync's own deliveries are told from other writes to the same live file (``memsync.sync.echoes``), on
real
files: only a file exactly as the delivery left it is an echo."""

from __future__ import annotations

import os
from pathlib import Path

from memsync.base.fsio import append_once, atomic_write
from memsync.sync import echoes


def test_a_file_as_the_delivery_left_it_is_an_echo(tmp_path: Path) -> None:
    live = tmp_path / "memory.jsonl"
    live.write_bytes(b"one\n")
    append_once(live, b"two\n")
    echoes.note(live, 8)
    assert echoes.is_echo(live)
    assert echoes.is_echo(tmp_path / "." / "memory.jsonl")


def test_an_append_after_the_delivery_is_no_echo(tmp_path: Path) -> None:
    live = tmp_path / "memory.jsonl"
    live.write_bytes(b"one\n")
    echoes.note(live, 4)
    with live.open("ab") as out:
        out.write(b"an agent's line\n")
    assert not echoes.is_echo(live)


def test_a_delivery_another_writer_joined_is_not_noted(tmp_path: Path) -> None:
    live = tmp_path / "memory.jsonl"
    live.write_bytes(b"one\nan agent's line, in the same instant\n")
    echoes.note(live, 4)
    assert not echoes.is_echo(live)


def test_a_rename_onto_the_file_or_its_removal_is_no_echo(tmp_path: Path) -> None:
    live = tmp_path / "MEMORY.md"
    live.write_bytes(b"# index\n")
    echoes.note(live, 8)
    atomic_write(live, b"# INDEX\n")  # same size, another inode: an editor's save
    assert not echoes.is_echo(live)
    echoes.note(live, 8)
    os.unlink(live)
    assert not echoes.is_echo(live)
    assert not echoes.is_echo(tmp_path / "never-written.md")


def test_a_symlinked_live_file_is_known_by_where_it_points(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_bytes(b"one\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    echoes.note(link, 4)
    assert echoes.is_echo(real)


def test_the_notes_stay_bounded(tmp_path: Path) -> None:
    first = tmp_path / "first.md"
    first.write_bytes(b"x")
    echoes.note(first, 1)
    for n in range(echoes.MAX_NOTES):
        other = tmp_path / f"{n}.md"
        other.write_bytes(b"y")
        echoes.note(other, 1)
    assert not echoes.is_echo(first)  # forgotten: its events cost a cycle, never a missed change
    assert echoes.is_echo(tmp_path / f"{echoes.MAX_NOTES - 1}.md")

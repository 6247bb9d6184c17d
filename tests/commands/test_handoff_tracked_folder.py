"""Handoff names resolve to agents inside a tracked folder: the default setup tracks ``~/.agents/memory``
(as ``roles``) and ``~/.agent-memory``, so a role is ``~/.agents/memory/<role>`` and a memory file
``~/.agent-memory/<name>.jsonl`` without being tracked on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.cli import main
from memsync.formats.markdown.roledir import RoleDir
from memsync.memoryfile.file import MemoryFile
from tests.support.handoff_fixtures import write_memory, write_role
from tests.support.helpers import cli_main

KINDS = ("--kind", "fact", "--kind", "avoid", "--kind", "preference")


def _default_config(home: Path, tracks: tuple[str, ...] = ("~/.agents/memory", "~/.agent-memory")) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    listed = "".join(f'    {{ path = "{track}" }},\n' for track in tracks)
    config.write_text(f"[stores.personal]\ntrack = [\n{listed}]\n")


def test_role_and_memory_file_names_inside_tracked_folders(home: Path) -> None:
    _default_config(home)
    role = write_role(home / ".agents" / "memory" / "python-dev")
    memory = write_memory(home / ".agent-memory" / "notes.jsonl")
    result = cli_main("handoff", "notes", "python-dev", *KINDS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("notes -> python-dev: 4 handed")
    handed = [e for e in RoleDir(role).entries() if "Source: handoff from notes" in e.body]
    assert len(handed) == 4
    back = cli_main("handoff", "python-dev", "notes.jsonl", *KINDS)
    assert back.returncode == 0, back.stderr
    assert back.stdout.splitlines()[-1].startswith("python-dev -> notes: ")
    assert "python-dev" in {t.removeprefix("handoff:") for e in MemoryFile(memory).view() for t in e.tags}


def test_a_name_two_folders_hold_is_ambiguous_and_lists_both(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _default_config(home)
    role = write_role(home / ".agents" / "memory" / "notes")
    memory = write_memory(home / ".agent-memory" / "notes.jsonl")
    assert main(["handoff", "notes", "x.jsonl"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"memsync: handoff: 'notes' names several tracked paths ({memory}, {role}). Give the path"
    )


def test_a_tracked_role_directory_is_no_folder_of_roles(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _default_config(home, ("~/.agents/memory/python-dev",))
    write_role(home / ".agents" / "memory" / "python-dev")
    assert main(["handoff", "python-dev", "x.jsonl", "--dry-run"]) == 0
    assert main(["handoff", "daily", "x.jsonl"]) == 1
    assert "no tracked agent or path 'daily'" in capsys.readouterr().err


def test_an_unknown_name_is_answered_with_the_tracked_agents_and_a_syncing_path(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error names what can be handed (newcomer trial: it pointed to `memsync status`, which lists no
    agents), and a new role is suggested where it syncs, not in the current directory."""
    _default_config(home)
    write_role(home / ".agents" / "memory" / "python-dev")
    write_memory(home / ".agent-memory" / "notes.jsonl")
    assert main(["handoff", "nonexist", "python-dev"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        "memsync: handoff: no tracked agent or path 'nonexist' (tracked agents here: notes, "
        "python-dev). Give one of those names or an existing path"
    )
    assert main(["handoff", "python-dev", "reviewer"]) == 1
    assert "give its path in a tracked folder, such as ~/.agents/memory/reviewer" in capsys.readouterr().err


def test_the_path_suggested_for_a_new_role_is_one_handoff_accepts(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`handoff ada nonexist.md` suggested ~/.agents/memory/nonexist.md, which was then refused (a role
    has no .md): the hint names a path that works."""
    _default_config(home)
    write_role(home / ".agents" / "memory" / "python-dev")
    assert main(["handoff", "python-dev", "nonexist.md"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("such as ~/.agents/memory/nonexist"), line
    assert main(["handoff", "python-dev", "~/.agents/memory/nonexist", "--dry-run"]) == 0
    assert "cannot be a new role" not in capsys.readouterr().err

"""The README tells the truth: its quick start is what CI runs, and every command it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memsync.cli import app, main
from tests.support.helpers import REPO_ROOT, run_cli

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> list[str]:
    return re.findall(r"^    \$ (.+)$", README, flags=re.MULTILINE)


def test_quick_start_is_the_two_commands_ci_runs() -> None:
    assert _quick_start()[:2] == [
        "pip install . && memsync up",
        "pip install '.[test]' && python -m pytest",
    ]
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "sed -n 2p" in ci and 'eval "$cmd"' in ci  # CI runs the README's second command verbatim


def test_every_command_the_readme_names_exists() -> None:
    import typer.main

    group = typer.main.get_command(app)
    known = set(group.commands)  # type: ignore[attr-defined]
    named = set(re.findall(r"`memsync ([a-z][a-z-]+)", README))
    assert named, "the README names no command"
    assert named <= known, f"README names commands that do not exist: {sorted(named - known)}"


def test_every_named_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in sorted(set(re.findall(r"`memsync ([a-z][a-z-]+)", README))):
        assert main([command, "--help"]) == 0, command
        out = capsys.readouterr().out
        assert "Usage" in out and len(out.splitlines()) > 3, command


def test_the_readme_memory_file_example_is_valid(tmp_path: Path) -> None:
    blocks = re.findall(r"^```jsonl\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, "the README shows one agent-memory/0.1 file"
    lines = blocks[0].splitlines()
    assert len(lines) == 2 and '"format": "agent-memory/0.1"' in lines[0]
    example = tmp_path / "example.jsonl"
    example.write_text(blocks[0], encoding="utf-8")
    checked = run_cli("check", str(example))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shown = run_cli("show", str(example))
    assert "Use plain English." in shown.stdout

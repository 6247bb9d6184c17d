"""Help shows no value type for flags (typer 0.29's rich help printed ``--help <bool>``, ``-v <int>``)."""

from __future__ import annotations

import re

import pytest
import typer
from typer._click import Command

from memsync.cli import main
from memsync.cli.app import app
from tests.support.helpers import run_cli


def _command_paths() -> list[list[str]]:
    paths: list[list[str]] = []

    def walk(command: Command, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def _option_row(help_text: str, option: str) -> str:
    """The help table's row for ``option`` (after the border and a required mark, if any)."""
    return next(line for line in help_text.splitlines() if line.lstrip("│ *").startswith(f"{option} "))


def test_top_level_help_in_a_subprocess() -> None:
    result = run_cli("--help", env={"COLUMNS": "120"})  # room for each option's help on one line
    assert result.returncode == 0, result.stderr
    for option, text in [
        ("--verbose", "More log output (-vv for debug). [default: 0]"),
        ("--quiet", "Only warnings and errors."),
        ("--help", "Show this message and exit."),
    ]:
        row = _option_row(result.stdout, option)
        assert text in row and "<" not in row, row
    assert "<bool>" not in result.stdout and "<int>" not in result.stdout
    assert "│ handoff " in result.stdout and "│ purge " in result.stdout


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "memsync")
def test_no_command_shows_a_type_for_a_flag(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "<bool>" not in out
    assert "Show this message and exit." in _option_row(out, "--help")


def test_options_taking_a_value_show_one_placeholder_style(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["daemon", "--help"]) == 0
    out = capsys.readouterr().out
    assert " PATH " in _option_row(out, "--config")
    assert "PATH" not in _option_row(out, "--once")
    assert main(["remember", "--help"]) == 0
    out = capsys.readouterr().out
    assert " NUMBER " in _option_row(out, "--confidence") and " TEXT " in _option_row(out, "--kind")
    assert "Usage: memsync remember [OPTIONS] {TEXT}" in out
    assert main(["handoff", "--help"]) == 0
    assert " prompt " in _option_row(capsys.readouterr().out, "--format")  # a choice's value as typed


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "memsync")
def test_no_help_mixes_placeholder_styles(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"<(?:str|int|float|path|list\[\w+\])>", out), out
    usage = next(line for line in out.splitlines() if "Usage:" in line)
    assert not re.search(r"[{\[][a-z_]+[}\]]", usage), usage  # arguments in upper case, as options


def test_newcomers_commands_come_first_and_version_has_a_short_flag() -> None:
    result = run_cli("--help")
    commands = re.findall(r"^│ ([a-z][a-z-]+) ", result.stdout.split("Commands")[1], flags=re.MULTILINE)
    assert commands[:4] == ["init", "up", "status", "sync"], commands
    short = run_cli("-V")
    assert short.returncode == 0 and short.stdout == run_cli("--version").stdout != ""


def test_shell_completion_is_offered_and_completes_commands() -> None:
    shown = run_cli("--show-completion", "bash")
    assert shown.returncode == 0 and "_MEMSYNC_COMPLETE" in shown.stdout, shown.stdout + shown.stderr
    completed = run_cli(
        env={"_MEMSYNC_COMPLETE": "complete_bash", "COMP_WORDS": "memsync sy", "COMP_CWORD": "1"}
    )
    assert completed.stdout.split() == ["sync"], completed.stdout + completed.stderr

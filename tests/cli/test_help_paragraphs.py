"""A command's help wraps its description to the terminal, not at the docstring's source line ends
(typer's rich help keeps those since 0.20)."""

from __future__ import annotations

import inspect
import itertools

import pytest
import typer
from typer._click import Command

from memsync.cli import main
from memsync.cli.app import app
from tests.support.helpers import run_cli


def _described() -> list[tuple[list[str], list[str]]]:
    """(command path, its description's paragraphs, each as one line) for every command with a help."""
    found: list[tuple[list[str], list[str]]] = []

    def walk(command: Command, path: list[str]) -> None:
        if command.help and not getattr(command, "hidden", False):
            paragraphs = inspect.cleandoc(command.help).split("\n\n")
            found.append((path, [" ".join(text.split()) for text in paragraphs]))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def _status_paragraph(columns: int) -> list[str]:
    result = run_cli("status", "--help", env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Per store:"))
    return lines[start : lines.index("", start)]


def test_status_help_fills_each_line_in_a_subprocess() -> None:
    paragraph = _status_paragraph(80)
    assert " ".join(paragraph).endswith(
        "both-kept files, files meeting directories; and whether the daemon runs."
    )
    for line, following in itertools.pairwise(paragraph):  # broken only where the next word does not fit
        assert len(line) + 1 + len(following.split()[0]) > 80 - 3, (line, following)
    assert len(_status_paragraph(400)) == 1


DESCRIBED = _described()


@pytest.mark.parametrize(
    "path,paragraphs", DESCRIBED, ids=[" ".join(path) or "memsync" for path, _ in DESCRIBED]
)
def test_every_description_paragraph_is_one_line_on_a_wide_terminal(
    path: list[str],
    paragraphs: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    assert main([*path, "--help"]) == 0
    shown = {" ".join(line.split()) for line in capsys.readouterr().out.splitlines()}
    for paragraph in paragraphs:
        assert paragraph in shown, (path, paragraph)

"""`memsync purge --help` wraps its description to the terminal, not at the source's line breaks."""

from __future__ import annotations

import itertools

import pytest

from memsync.cli.purge import PURGE_HELP
from tests.support.helpers import run_cli


def _paragraph(columns: int) -> list[str]:
    """The help lines of the description's second paragraph at a terminal ``columns`` wide."""
    result = run_cli("purge", "--help", env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Rewrites the history"))
    end = lines.index("", start)
    return lines[start:end]


@pytest.mark.parametrize("columns", [60, 80])
def test_description_fills_each_line(columns: int) -> None:
    paragraph = _paragraph(columns)
    assert " ".join(paragraph) == PURGE_HELP.split("\n\n")[1]
    # a line is only broken where the next word would not fit (the old help broke mid-line at the
    # docstring's own line ends: "...once (the" / "only force push" / "memsync makes). ...")
    for line, following in itertools.pairwise(paragraph):
        assert len(line) + 1 + len(following.split()[0]) > columns - 3, (line, following)


def test_wide_terminal_keeps_the_paragraph_on_one_line() -> None:
    assert _paragraph(400) == [PURGE_HELP.split("\n\n")[1]]

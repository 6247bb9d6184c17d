"""The git runner feeds a long stdin whole, however long git takes to read it (``memsync.base.git``): a list
of
10,000 paths for ``git update-index --stdin`` outlasts the runner's first poll of git."""

from __future__ import annotations

from pathlib import Path

from memsync.base import git
from tests.support.helpers import git as run_git


def test_a_stdin_longer_than_a_poll_reaches_git_whole(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q", "-b", "main")
    run_git(tmp_path, "commit", "-q", "--allow-empty", "-m", "start")
    lines = 200_000  # git answers each before reading on: far more than one poll's worth of input
    result = git.run(["cat-file", "--batch-check"], cwd=tmp_path, timeout=300, stdin=b"HEAD\n" * lines)
    assert result.ok, result.err
    answers = result.out.splitlines()
    assert len(answers) == lines and set(answers) == {answers[0]} and " commit " in answers[0]

"""`memsync remote add` warns, and still adds the remote, when a local path holds no git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.cli import main
from memsync.commands import setup
from memsync.tracks.resolve import load_tracks
from tests.support.helpers import git, run_cli


def test_missing_path_warns_in_the_output_and_is_added(home: Path, tmp_path: Path) -> None:
    setup.init()
    missing = tmp_path / "not-yet.git"
    result = run_cli("remote", "add", "backup", str(missing))
    assert result.returncode == 0, result.stderr
    warning = (
        f"warning: {missing} does not exist (added anyway): create it with "
        f"`git init --bare {missing}`, or fix the URL with `memsync remote remove` and "
        "`memsync remote add`"
    )
    assert warning in result.stdout.splitlines()
    assert load_tracks().stores["personal"].remotes == {"backup": str(missing)}


def test_directory_without_repository_warns(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.init()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["remote", "add", "backup", f"file://{plain}"]) == 0
    assert f"warning: file://{plain} is not a git repository (added anyway)" in capsys.readouterr().out
    assert load_tracks().stores["personal"].remotes == {"backup": f"file://{plain}"}


@pytest.mark.parametrize(
    "url", ["{bare}", "git@example.invalid:team/memory.git", "https://example.invalid/team/memory.git"]
)
def test_repository_or_network_url_adds_without_warning(
    home: Path, tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.init()
    git(tmp_path, "init", "--bare", "-q", "remote.git")
    url = url.format(bare=tmp_path / "remote.git")
    assert main(["remote", "add", "backup", url]) == 0
    out = capsys.readouterr().out
    assert f"store personal: remote backup = {url}" in out.splitlines()
    assert "warning" not in out

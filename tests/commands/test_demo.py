"""`memsync demo` runs to completion, shows memory arriving on the other machine, says how long it took
and removes its directory (kept only with --keep)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import run_cli


@pytest.mark.slow
def test_demo_runs_and_shows_memory_arriving() -> None:
    result = run_cli("demo", timeout=120)

    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "bob received alice's memory" in out
    assert re.search(r"arrived on bob after \d+\.\d s", out)
    assert "- [09:05] alice: CI is green again." in out and "- [09:05] bob: flaky test quarantined." in out
    assert "Deploys happen Monday to Thursday." in out and "Never deploy during a release freeze." in out
    assert re.search(r"^demo finished in \d+\.\d s$", out, flags=re.MULTILINE)
    assert "no daemon is running" not in out  # the init lines of a setup step, not news in a demo
    directory = re.search(r"demo directory: (\S+)", out)
    assert directory is not None
    assert not Path(directory[1]).exists()  # cleaned up


@pytest.mark.slow
def test_demo_from_a_project_with_its_own_memsync_folder_runs_memsync(tmp_path: Path) -> None:
    """The demo's daemons and commands run the installed memsync, not a ``memsync/`` folder in the
    directory the demo is started from."""
    marker = tmp_path / "marker"
    (tmp_path / "memsync").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (tmp_path / "memsync" / name).write_text(f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n")

    result = subprocess.run(
        [sys.executable, "-P", "-m", "memsync", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )

    assert not marker.exists()
    assert result.returncode == 0 and "bob received alice's memory" in result.stdout, result.stderr

"""The first-sync benchmark (bench/first_sync_bench.py) still runs: a --quick pass with 50 files."""

from __future__ import annotations

import subprocess
import sys

from tests.support.helpers import REPO_ROOT


def test_first_sync_bench_quick_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "first_sync_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "## 50 new files, 1 run;" in out
    assert "| (a) first sync on A |" in out and "| (b) next sync on B |" in out
    assert "| first sync of 50 files on A / on B | " in out
    targets = out.split("## targets", 1)[1]
    assert targets.count("PASS") + targets.count("FAIL") == 2

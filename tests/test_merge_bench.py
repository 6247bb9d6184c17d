"""The merge benchmark (bench/merge_bench.py) still runs and checks its own result: a tiny pass."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO_ROOT


def test_merge_bench_tiny_run_prints_both_merges_and_the_ratio() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "merge_bench.py"),
            "--lines",
            "2000",
            "--repeat",
            "1",
            "--startup-runs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "2,000 lines" in result.stdout and "ratio driver/git: time" in result.stdout
    assert "driver start-up + tiny merge" in result.stdout

"""The merge benchmark (bench/merge_bench.py) still runs and checks its own result: a --quick pass."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support.helpers import REPO_ROOT


def test_merge_bench_quick_run_prints_both_merges_and_the_ratios() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "merge_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "2,000 lines" in result.stdout and "ratio driver/git: time" in result.stdout
    out = result.stdout
    assert "driver start-up + tiny merge as git runs it (row 8)" in out and "bare interpreter" in out
    for kind in ("jsonl", "daily", "index", "entry"):  # each kind with its ratio and a verdict
        assert re.search(
            rf"driver {kind} .* ratio \d+\.\d\d \(CPU \d+\.\d\d\) \(target <= 1\.3\): (PASS|FAIL)", out
        ), out

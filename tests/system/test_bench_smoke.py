"""The sync benchmark (bench/sync_bench.py) still runs: a --quick pass with the smallest sizes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.helpers import REPO_ROOT


@pytest.mark.slow
def test_sync_bench_quick_runs() -> None:
    """One append on a 20-entry file, baseline and idle included: the report prints every section."""
    result = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "sync_bench.py"),
            "--quick",
            "--sizes",
            "20",
            "--appends",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "## memory file of 20 entries" in out
    assert "(a) append -> committed" in out and "(b) append A -> live on B" in out
    assert "## idle daemon, 5 tracked role directories" in out
    # No line lost (the "lost m/b" column), and every target gets a verdict (3 per size, 2 for idle).
    assert out.count(" 0/0\n") == 2
    targets = out.split("## targets", 1)[1]
    assert targets.count("PASS") + targets.count("FAIL") == 5


def _quick(script: str, timeout: float) -> str:
    """The stdout of ``bench/SCRIPT --quick``, which must exit 0 within ``timeout`` seconds."""
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_session_start_bench_quick_runs() -> None:
    """The hook benchmark's smoke run: every measured line and a verdict per target."""
    out = _quick("session_start_bench.py", 300)
    assert "## 20 entries tracked" in out and "baseline: `python -c pass`" in out
    for label in ("(a) session-start", "(b) session-start", "(c) sync-now", "(d) sync-now"):
        assert f"| {label}" in out
    targets = out.split("## targets", 1)[1]
    assert targets.count("PASS") + targets.count("FAIL") == 3


def test_scan_bench_runs() -> None:
    """The secret-scan benchmark (bench/scan_bench.py) prints both scanners and a verdict; its exit code
    is that verdict, a figure of the machine, so only the report is checked here."""
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "scan_bench.py"), "--lines", "200", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "| memsync scan_text |" in result.stdout and "ungated |" in result.stdout, result.stderr
    assert "ratio memsync / baseline: " in result.stdout and "target per line < 1000 µs: " in result.stdout


@pytest.mark.slow
def test_bigfile_bench_quick_runs() -> None:
    """The big-file benchmark's smoke run (1 and 3 MiB): every figure and a verdict per target and size."""
    out = _quick("bigfile_bench.py", 600)
    assert out.count("| (a) first sight") == 2 and out.count("| (b) append -> committed") == 2
    assert out.count("| (c) daemon peak RSS") == 2 and "load average" in out
    # Every append was committed (an uncommitted one prints an infinite latency).
    assert "inf" not in out.split("## targets", 1)[0]
    targets = out.split("## targets", 1)[1]
    assert targets.count("PASS") + targets.count("FAIL") == 8


@pytest.mark.slow
def test_cycle_bench_quick_runs() -> None:
    """The cycle-cost benchmark's smoke run: rows 1-4 printed, each target with a verdict."""
    out = _quick("cycle_bench.py", 300)
    assert "| 10 | " in out and "| 100 | " in out and "vs one raw `git fetch`" in out
    assert "## (3) local-path remote" in out and "## (4) git:// remote on 127.0.0.1" in out
    assert out.count("load average") >= 5
    targets = out.split("## targets", 1)[1]
    assert targets.count("PASS") + targets.count("FAIL") == 5


@pytest.mark.slow
def test_recall_bench_quick_runs() -> None:
    """The recall benchmark's smoke run: each figure against its baseline, a verdict per target."""
    out = _quick("recall.py", 300)
    for label in ("recall via MCP", "raw FTS5 query", "cycle with index", "index size"):
        assert label in out
    # Per ranker measured (lexical; hybrid where the semantic extra is installed): the MCP p95 ratio; then
    # the cycle with the index and the index size.
    rankers = 2 if "recall via MCP, hybrid" in out else 1
    assert out.count("PASS") + out.count("MISSED") == rankers + 2


@pytest.mark.slow
def test_mcp_start_bench_quick_runs() -> None:
    """The start-up benchmark's smoke run: initialize against --version and the first recall after it, in
    wall and in the server's CPU time, a verdict for each."""
    out = _quick("mcp_start.py", 300)
    for label in ("initialize wall", "initialize cpu", "first recall after initialize, lexical cpu"):
        assert label in out
    # initialize (wall, CPU), then per ranker (lexical; hybrid where the extra is installed) wall and CPU.
    rankers = 2 if "first recall after initialize, hybrid" in out else 1
    assert out.count("PASS") + out.count("MISSED") == 2 + 2 * rankers

"""The team benchmark (bench/peers.py) still runs: its --quick pass (2 and 4 peers, one round), this tree
beside a design run by another interpreter (here this checkout's own, through --python); the shared
branch stays a line of commits (no merge commit in a round, none whose tree equals a parent's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.helpers import REPO_ROOT

pytestmark = pytest.mark.slow


def test_peers_bench_quick_prints_both_designs() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "peers.py"), "--quick", "--python", sys.executable],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| ")]
    header, body = rows[0], [row for row in rows[2:]]
    assert [cell.strip() for cell in header[:5]] == [
        "design",
        "peers",
        "converge s, median",
        "rejected/round",
        "commits/round",
    ]
    assert len(body) == 4, result.stdout
    assert {row[1].strip() for row in body} == {"2", "4"}
    designs = {row[0].strip() for row in body}
    assert "this tree" in designs and len(designs) == 2, designs
    for row in body:
        peers, merges, same_tree = int(row[1]), float(row[5]), int(row[6])
        assert (merges, same_tree) == (0.0, 0), row
        # One commit per peer's write: the round's commits on the remote are the team's own.
        assert float(row[4].split()[0]) == peers, row

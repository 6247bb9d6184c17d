"""Provenance of memory larger than a command-line argument: `recall` (and the MCP `history` tool) find
who wrote a daily-log line of hundreds of KiB, through real `python -m memsync` subprocesses and a real
store, without ever putting the line on git's command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.base.paths import config_path
from memsync.config.file import edit_config
from memsync.mcp.tools import history
from tests.support.helpers import run_cli

DAY = "2026-11-30"
# Longer than one argument may be (128 KiB), and than the part of a text memsync gives git's pickaxe:
# the two lines share their first 150 KiB, so only the whole text tells their commits apart.
SHARED = "harbor " + "word " * 30_000


def _sync_as(host: str) -> None:
    edit_config(config_path(), lambda raw: raw.__setitem__("host", host))
    synced = run_cli("sync")
    assert synced.returncode == 0, synced.stderr


def _hosts(query: str) -> dict[str, str]:
    found = run_cli("recall", query, "--json")
    assert found.returncode == 0, found.stderr[-2000:]
    assert "Traceback" not in found.stderr
    return {hit["id"]: hit["host"] for hit in map(json.loads, found.stdout.splitlines())}


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_lines_over_an_argument_are_credited_to_the_commit_that_added_them(home: Path) -> None:
    assert run_cli("init").returncode == 0
    log = home / ".agents" / "memory" / "qa" / "daily" / f"{DAY}.md"
    log.parent.mkdir(parents=True)
    log.write_text(f"# Daily log — {DAY}\n\n- [09:15] {SHARED}alpha\n")
    _sync_as("first")
    with log.open("a") as out:
        out.write(f"- [09:15] {SHARED}beta\n")
    _sync_as("second")

    line_id = f"roles/qa/daily/{DAY}.md"
    assert _hosts("alpha beta") == {f"{line_id}:3": "first", f"{line_id}:4": "second"}

    # The MCP history tool given the whole line: only the commit that added it, not the first one.
    told = history(f"- [09:15] {SHARED}beta", 10).splitlines()
    assert len(told) == 2 and " second " in told[0] and told[1] == f"    {line_id}"

"""The daemon's log lines carry a local date, time and zone, except when journald writes its stderr."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import run_cli, wait_for

_STAMPED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4} (INFO|WARNING|ERROR|DEBUG) memsync\.")


def _daemon_lines(log: Path, env: dict[str, str] | None = None) -> list[str]:
    """The lines a real `memsync daemon` writes to ``log`` (its stderr) until its first cycle is done."""
    with log.open("wb") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon"],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
        )
    try:
        wait_for(lambda: "memsync." in log.read_text(), timeout=60, what="the daemon's first log line")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
    return [line for line in log.read_text().splitlines() if "memsync." in line]


def test_daemon_lines_carry_a_timestamp_in_a_plain_log_file(home: Path, tmp_path: Path) -> None:
    assert run_cli("init").returncode == 0
    lines = _daemon_lines(tmp_path / "daemon.log")
    assert lines and all(_STAMPED.match(line) for line in lines), lines


@pytest.mark.parametrize("same_file", [True, False], ids=["journald", "inherited-variable"])
def test_under_journald_the_lines_carry_none(home: Path, tmp_path: Path, same_file: bool) -> None:
    assert run_cli("init").returncode == 0
    log = tmp_path / "daemon.log"
    log.touch()
    named = log if same_file else tmp_path / "elsewhere"
    named.touch()
    stat = named.stat()
    lines = _daemon_lines(log, env={"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"})
    assert lines
    if same_file:
        assert all(re.match(r"^(INFO|WARNING|ERROR|DEBUG) memsync\.", line) for line in lines), lines
    else:
        assert all(_STAMPED.match(line) for line in lines), lines

"""`memsync stop` ends the running daemon whatever started it, and `memsync up` says when one runs instead
of starting a second (real daemon processes, the CLI as a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memsync.commands import service
from memsync.daemon.instance import pid_file, running_daemon_pid
from tests.support.helpers import run_cli, wait_for


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def test_stop_ends_the_daemon_up_started_and_up_does_not_start_a_second(home: Path, tmp_path: Path) -> None:
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    log_path = tmp_path / "up.log"
    with log_path.open("wb") as log:
        first = subprocess.Popen(
            [sys.executable, "-m", "memsync", "up"], stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(lambda: pid_file(_config(home)).exists(), timeout=60, what="the daemon's pid file")
        assert running_daemon_pid(_config(home)) == first.pid

        again = run_cli("up", timeout=60)
        assert again.returncode == 0, again.stderr
        assert f"a memsync daemon is already running for {_config(home)} (PID {first.pid})" in again.stdout
        assert "`memsync stop` stops it" in again.stdout
        assert first.poll() is None
        # `daemon` was asked to be the daemon here and cannot: exit 1 (README "Exit codes"), one line.
        refused = run_cli("daemon", timeout=60)
        assert refused.returncode == 1, refused.stderr
        assert f"(PID {first.pid})" in refused.stderr and "Traceback" not in refused.stderr
        assert first.poll() is None

        stopped = run_cli("stop", timeout=60)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.splitlines() == [f"stopped the memsync daemon (PID {first.pid})"]
        # `stop` returned once the daemon was gone, not merely signalled.
        assert first.poll() == 0, log_path.read_text()
        assert running_daemon_pid(_config(home)) is None
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()

    none = run_cli("stop")
    assert none.returncode == 0, none.stderr
    assert none.stdout == f"no memsync daemon is running for {_config(home)}\n"


def test_stop_promises_no_restart_from_a_unit_no_service_manager_runs(home: Path) -> None:
    if service.user_systemd() is None:
        pytest.skip("a user systemd manager is reachable here: the unit would start the daemon")
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    assert run_cli("init").returncode == 0
    installed = run_cli("service", "install")
    assert "not started, and nothing will start it" in installed.stderr, installed.stderr
    daemon = subprocess.Popen(
        [sys.executable, "-m", "memsync", "daemon"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: pid_file(_config(home)).exists(), timeout=60, what="the daemon's pid file")
        stopped = run_cli("stop", timeout=60)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.splitlines() == [f"stopped the memsync daemon (PID {daemon.pid})"]
    finally:
        if daemon.poll() is None:
            daemon.kill()
        daemon.wait()

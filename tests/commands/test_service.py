"""The systemd user unit as `memsync service install` writes it (issue 5)."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.commands import doctor, service
from tests.support.helpers import REPO_ROOT, run_cli

REFERENCE_ARGV = ["/usr/bin/python3", "-P", "-m", "memsync", "daemon"]


def test_repository_unit_is_the_rendered_template() -> None:
    """systemd/memsync.service is exactly what install writes for a system-wide python3: no drift."""
    assert (REPO_ROOT / "systemd" / "memsync.service").read_text() == service.unit_text(REFERENCE_ARGV, {})


def test_unit_runs_this_interpreter_with_pinned_paths_and_restarts_on_failure() -> None:
    text = service.unit_text(service.daemon_argv(), {"MEMSYNC_CONFIG": "/tmp/a b/config.toml"})
    lines = text.splitlines()
    assert f'ExecStart="{Path(sys.executable).absolute()}" "-P" "-m" "memsync" "daemon"' in lines
    assert 'Environment="MEMSYNC_CONFIG=/tmp/a b/config.toml"' in lines
    assert "Restart=on-failure" in lines
    assert "NoNewPrivileges=yes" in lines
    # File-system namespacing would need user namespaces in a user unit: never used.
    assert not any(line.startswith(("ProtectSystem", "ProtectHome", "PrivateTmp")) for line in lines)


def test_install_needs_a_config(home: Path) -> None:
    result = run_cli("service", "install")
    assert result.returncode == 1 and "memsync init" in result.stderr
    assert not (home / ".config" / "systemd" / "user" / "memsync.service").exists()


def test_install_writes_verified_unit_and_explains_without_user_systemd(home: Path, tmp_path: Path) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("")  # a valid config with no stores yet
    result = run_cli("service", "install")
    unit = home / ".config" / "systemd" / "user" / "memsync.service"
    assert f"wrote {unit}" in result.stdout
    reason = service.user_systemd()
    if reason is not None:  # containers: nothing will start the daemon, one line says so and what to do
        assert result.returncode == 1, result.stderr
        assert result.stderr.count("\n") == 1 and "systemd --user is not available here" in result.stderr
        assert "Run `memsync up`" in result.stderr and "-P -m memsync daemon" in result.stderr
    else:
        assert result.returncode == 0, result.stderr

    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed: the unit file was written but not verified")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    # --user needs a runtime dir to build a manager; a private one makes the check work in containers.
    verify = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        timeout=60,
    )
    assert verify.returncode == 0, verify.stderr
    # systemd-analyze reports unknown or malformed settings as warnings with exit 0: require none.
    assert verify.stderr.strip() == ""

    assert f"installed: {unit}" in service.status().lines
    assert f"installed: {unit}" in doctor.check_service().detail
    service.uninstall()
    assert not unit.exists()
    assert "not installed" in service.status().lines[0]


def test_repository_launchd_agent_is_the_rendered_template() -> None:
    """launchd/…plist is what install writes on macOS for a python3 in /usr/local/bin: no drift."""
    path = REPO_ROOT / "launchd" / f"{service.LAUNCHD_LABEL}.plist"
    log = Path("/Users/you/Library/Logs/memsync.log")
    rendered = service.launchd_plist(["/usr/local/bin/python3", "-m", "memsync", "daemon"], {}, log)
    assert path.read_bytes() == rendered
    agent = plistlib.loads(rendered)
    assert agent["ProgramArguments"][-2:] == ["memsync", "daemon"]
    assert agent["KeepAlive"] == {"SuccessfulExit": False}  # restarted on failure, not after a clean stop

"""The CLI's edge: version, help, usage errors and the exit-code contract."""

from __future__ import annotations

from tests.support.helpers import run_cli


def test_version_prints_package_version() -> None:
    from memsync import __version__

    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"memsync {__version__}"


def test_unknown_command_is_a_usage_error_without_traceback() -> None:
    result = run_cli("no-such-command")
    assert result.returncode == 2
    assert "No such command" in result.stderr
    assert "Traceback" not in result.stderr

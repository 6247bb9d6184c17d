"""`memsync key export|import` check their file arguments before asking for a passphrase, and with no
terminal on stdin read it from stdin's first line: an empty stdin is one line saying how to give it,
exit 1, not an interrupt nor Python's getpass warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyrage import x25519

from tests.support.helpers import run_cli

NEEDED = "a passphrase is needed. Type it at a terminal, or give it as the first line of stdin"


@pytest.fixture
def device_key(home: Path) -> Path:
    """This device's key file, as `memsync join` writes it."""
    path = home / ".config" / "memsync" / "device.key"
    path.parent.mkdir(parents=True)
    path.write_text(f"{x25519.Identity.generate()}\n")
    return path


def _one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and "Warning" not in stderr and "Traceback" not in stderr, stderr
    return stderr


def test_export_with_an_empty_stdin_says_a_passphrase_is_needed_and_writes_nothing(
    device_key: Path, tmp_path: Path
) -> None:
    out = tmp_path / "key.backup"
    result = run_cli("key", "export", str(out), input="")
    assert result.returncode == 1
    assert _one_line(result.stderr) == f"memsync: cannot export the key: {NEEDED}\n"
    assert not out.exists()


def test_export_to_a_missing_directory_or_an_existing_file_is_refused_before_any_passphrase(
    device_key: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no" / "key.backup"
    result = run_cli("key", "export", str(missing), input="")
    assert result.returncode == 1
    assert _one_line(result.stderr).startswith(f"memsync: FILE {missing}: its directory {missing.parent}")
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    result = run_cli("key", "export", str(taken), input="")
    assert _one_line(result.stderr) == f"memsync: cannot export the key: {taken} exists. Name a new file\n"
    assert result.returncode == 1 and taken.read_text() == "keep me\n"


def test_import_of_a_missing_file_or_over_a_key_is_refused_before_any_passphrase(
    device_key: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nonexistent"
    result = run_cli("key", "import", str(missing), input="")
    assert result.returncode == 1
    assert _one_line(result.stderr) == (
        f"memsync: cannot import the key: {missing}: No such file or directory. Check the path\n"
    )
    backup = tmp_path / "key.backup"
    assert run_cli("key", "export", str(backup), input="correct horse battery\n").returncode == 0
    held = device_key.read_text()
    result = run_cli("key", "import", str(backup), input="")
    assert _one_line(result.stderr) == (
        f"memsync: cannot import the key: {device_key} exists. Move it away first\n"
    )
    device_key.unlink()
    result = run_cli("key", "import", str(backup), input="")
    assert result.returncode == 1
    assert _one_line(result.stderr) == f"memsync: cannot import the key: {NEEDED}\n"
    assert run_cli("key", "import", str(backup), input="correct horse battery\n").returncode == 0
    assert device_key.read_text() == held

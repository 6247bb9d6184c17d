"""`memsync doctor` says in one clean sentence why a remote cannot be reached (real git, real paths)."""

from __future__ import annotations

from pathlib import Path

from memsync.commands import setup, setup_remote
from memsync.commands.doctor import check_remote
from memsync.config.file import StoreConfig
from tests.support.helpers import run_cli


def _store(tmp_path: Path) -> StoreConfig:
    return StoreConfig(name="personal", path=tmp_path / "store", remotes={}, tracks=())


def test_missing_or_plain_directory_remote_is_one_sentence(tmp_path: Path) -> None:
    missing = tmp_path / "x" / "does-not-exist.git"
    plain = tmp_path / "plain"
    plain.mkdir()
    for url in (str(missing), str(plain)):
        check = check_remote(_store(tmp_path), "backup", url)
        assert (check.level, check.detail) == ("FAIL", f"{url}: no git repository there. Check the URL")


def test_other_failures_keep_gits_first_line(tmp_path: Path) -> None:
    url = "http://127.0.0.1:1/x.git"  # nothing listens on port 1: refused at once
    check = check_remote(_store(tmp_path), "backup", url)
    assert check.level == "FAIL"
    assert check.detail.startswith(f"{url} unreachable: unable to access '{url}/': ")
    assert check.detail.endswith("Couldn't connect to server. Check the URL and your credentials")


def test_doctor_prints_the_clean_line(home: Path, tmp_path: Path) -> None:
    setup.init()
    setup_remote.remote_add("origin", str(tmp_path / "does-not-exist.git"))
    result = run_cli("doctor")
    assert result.returncode == 1
    line = next(line for line in result.stdout.splitlines() if line.startswith("FAIL remote "))
    assert line == (
        f"FAIL remote personal/origin: {tmp_path}/does-not-exist.git: no git repository there. Check the URL"
    )

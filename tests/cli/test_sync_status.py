"""`memsync status` with a store's repository gone says so, says how to fix it and exits 1."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memsync.cli import main
from memsync.commands import setup
from tests.support.helpers import cli_main


def test_status_with_the_store_missing_says_so_and_exits_1(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.init()
    assert main(["status"]) == 0
    store = home / ".local" / "share" / "memsync" / "stores" / "personal"
    shutil.rmtree(store)
    result = cli_main("status")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[2] == (
        f"store personal: missing, no git repository at {store}. Run `memsync init` to create it, "
        "or fix stores.personal.path in the config"
    )
    assert "last cycle" not in result.stdout and "bytes" not in result.stdout
    assert main(["status", "--json"]) == 1
    assert '"exists": false' in capsys.readouterr().out

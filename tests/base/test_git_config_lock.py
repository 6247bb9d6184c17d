"""A `git config` write that meets the config locked by another process waits for the lock (memsync.base.git),
instead of failing the store's open: real git, a real lock file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memsync.base import git
from tests.support.helpers import git as run_git


def test_a_config_write_waits_for_a_lock_another_process_holds(tmp_path: Path) -> None:
    run_git(tmp_path, "init", "-q")
    lock = tmp_path / ".git" / "config.lock"
    lock.write_text("")
    released = threading.Timer(0.5, lock.unlink)
    released.start()
    try:
        git.check(["config", "--local", "memsync.test", "yes"], cwd=tmp_path, timeout=30)
    finally:
        released.join()
    assert run_git(tmp_path, "config", "--local", "memsync.test").strip() == "yes"


def test_a_lock_never_released_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git, "CONFIG_LOCK_WAIT_S", 0.3)
    run_git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "config.lock").write_text("")
    with pytest.raises(git.GitError, match="could not lock config file"):
        git.check(["config", "--local", "memsync.test", "yes"], cwd=tmp_path, timeout=30)

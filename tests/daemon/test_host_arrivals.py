"""The daemon notices an agent host installed while it runs (its config folder appearing) and says once
which command connects it; a host memsync is already connected to is not named (a real daemon, real
folders)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import wait_for
from tests.support.peers import Peer


@pytest.fixture
def alice(tmp_path: Path, remote: Path) -> Iterator[Peer]:
    peer = Peer.create(tmp_path, "alice", remote, pull_interval_s=0.5)
    yield peer
    if not peer.proc_dead():
        peer.kill()


@pytest.mark.slow  # a real daemon's start-up: tens of seconds on a busy machine
def test_a_host_installed_while_the_daemon_runs_is_named_once(alice: Peer) -> None:
    (alice.home / ".cursor").mkdir()  # there before: `connect --status` names it, the daemon does not
    offset = alice.start()
    assert alice.cli("connect", "zed").returncode == 0  # connected before its folder is "installed"
    (alice.home / ".gemini").mkdir()  # Gemini CLI installed now
    line = f"agent host gemini-cli found ({alice.home / '.gemini'}): run `memsync connect gemini-cli`"
    wait_for(lambda: line in alice.log(offset), timeout=30, what="the daemon naming Gemini CLI")
    (alice.home / ".qwen").mkdir()
    wait_for(lambda: "agent host qwen-code found" in alice.log(offset), timeout=30, what="Qwen Code")
    log = alice.log(offset)
    assert log.count("agent host gemini-cli found") == 1
    assert "agent host cursor" not in log and "agent host zed" not in log

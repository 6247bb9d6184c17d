"""A remote that never answers, or a dead local path (issue 11: one unreachable remote hung `memsync sync`
silently for 2 minutes, and was warned about twice). `network_timeout_s` bounds every fetch and push and
the message names the remote; `sync` prints its result line per store, each remote's outcome in turn,
and one warning per unreachable remote, which the result line only points at; the daemon keeps serving
the other remotes and stores meanwhile. The dead network is a real TCP server on 127.0.0.1 that accepts
and never answers (``tests.support.hanging``)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import tomli_w

from memsync.commands.doctor import check_remote
from memsync.config.file import StoreConfig
from tests.support.hanging import hanging_server
from tests.support.helpers import bare_remote, git, wait_for
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, Peer, running


def _pushed(remote: Path, rel: str = MEMORY_STORE) -> bytes:
    try:
        return git(remote, "show", f"main:{rel}").encode()
    except subprocess.CalledProcessError:
        return b""


def _warnings(stderr: str, remote: str) -> list[str]:
    """The warnings naming ``remote`` (as a word: a failure's line names it once)."""
    named = re.compile(rf"(?<![\w.-]){re.escape(remote)}(?![\w.-])")
    return [line for line in stderr.splitlines() if line.startswith("WARNING") and named.search(line)]


def test_sync_with_a_remote_that_never_answers_is_bounded_and_says_which(
    tmp_path: Path, remote: Path
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    with hanging_server() as server:
        alice.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=3.0)
        line = alice.append_entry("reaches the remote that answers")
        said = alice.cli("sync", timeout=90)
    assert said.returncode == 75, said.stderr
    # Each remote in its turn, dead first, said once: the failure as the one line on stderr.
    assert said.stdout == (
        "store main: committed memory: +1 entry; dead: failed, see the warning on stderr; origin: pushed;"
        " nothing delivered\n"
    )
    [warning] = said.stderr.splitlines()
    assert warning == _warnings(said.stderr, "dead")[0]
    assert (
        f"cannot reach dead ({server.url}): no answer within 3 s (network_timeout_s in the config)" in warning
    )
    assert line in _pushed(remote)


def test_a_dead_local_remote_is_warned_about_once_per_sync(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    gone = tmp_path / "gone.git"
    alice.configure({"origin": str(remote), "gone": str(gone)})
    said = alice.cli("sync")
    assert said.returncode == 75, said.stderr
    mentions = [text for text in (said.stdout + said.stderr).splitlines() if str(gone) in text]
    assert len(mentions) == 1 and mentions[0] in said.stderr and mentions[0].startswith("WARNING"), said
    assert "gone: failed, see the warning on stderr" in said.stdout


def test_the_daemon_serves_another_store_while_a_remote_hangs(tmp_path: Path, remote: Path) -> None:
    """alice's personal store has a remote whose fetch hangs for a minute; her team store, served by the
    same daemon, commits and pushes meanwhile."""
    team_remote = bare_remote(tmp_path / "team.git")
    team_dir = tmp_path / "alice" / ".agents" / "memory" / "team-role"
    alice = Peer.create(tmp_path, "alice", remote)
    team_dir.mkdir(parents=True)
    raw = tomllib.loads(alice.config.read_text())
    raw["stores"]["team"] = {
        "path": str(alice.home / "team-store"),
        "remotes": {"origin": str(team_remote)},
        "track": [{"path": str(team_dir), "as": "roles/team-role"}],
    }
    alice.config.write_text(tomli_w.dumps(raw))
    alice.init_store()
    with hanging_server() as server:
        alice.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=60.0)
        with running(alice, ready=False):
            wait_for(lambda: server.connections > 0, timeout=60, what="the personal store's hanging fetch")
            (team_dir / "daily").mkdir()
            (team_dir / "daily" / "2026-11-30.md").write_text("- [10:00] the team store syncs meanwhile\n")
            wait_for(
                lambda: b"syncs meanwhile" in _pushed(team_remote, "roles/team-role/daily/2026-11-30.md"),
                timeout=40,
                what="the team store's push while the other store's remote hangs",
            )
            assert server.connections >= 1 and "remote dead failed" not in alice.log()


@pytest.mark.slow
def test_the_daemon_serves_the_other_remotes_while_one_hangs(tmp_path: Path, remote: Path) -> None:
    """Once a remote hung past network_timeout_s, it is asked in the background whether it answers; the
    store's other remote keeps exchanging lines with bob meanwhile."""
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    with hanging_server() as server:
        alice.configure({"dead": server.url, "origin": str(remote)}, network_timeout_s=2.0)
        with running(alice, ready=False), running(bob):
            wait_for(lambda: "remote dead failed" in alice.log(), timeout=60, what="the first timeout")
            asked = server.connections
            for i in range(2):
                line = bob.append_entry(f"bob's line {i}, while alice's other remote hangs")
                wait_for(lambda line=line: line in alice.read_live(MEMORY_FILE), timeout=30, what=f"line {i}")
                mine = alice.append_entry(f"alice's answer {i}")
                wait_for(lambda mine=mine: mine in bob.read_live(MEMORY_FILE), timeout=30, what=f"answer {i}")
            wait_for(lambda: server.connections > asked, timeout=60, what="the dead remote asked again")
        assert "remote dead reachable again" not in alice.log()


def test_doctor_gives_a_remote_that_never_answers_network_timeout_s(tmp_path: Path) -> None:
    with hanging_server() as server:
        check = check_remote(StoreConfig(name="main", path=tmp_path / "store"), "dead", server.url, 2.0)
    assert (check.level, check.what) == ("FAIL", "remote main/dead")
    assert check.detail == f"{server.url} did not answer within 2 s (network_timeout_s). Check the network"

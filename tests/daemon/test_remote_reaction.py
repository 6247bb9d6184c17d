"""A peer's daemon reacts to a watched remote's pushes once they pause (``served.REMOTE_QUIET_S``), so a
burst of pushes is fetched by a few cycles, not one each: through a real daemon, a real bare remote,
real inotify and pushes made with plain git from another clone."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import git, wait_for
from tests.support.peers import MEMORY_FILE, MEMORY_STORE, Peer, entry_line

PUSHES = 10


def test_a_burst_of_pushes_is_fetched_by_fewer_cycles_than_pushes(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    peers.append(alice)
    alice.append_entry("Alice's first line makes the remote a store.")
    clone = tmp_path / "clone"
    with alice.running():
        wait_for(lambda: git(remote, "rev-parse", "main").strip() != "", timeout=60)
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        git(clone, "config", "user.name", "plain git")
        git(clone, "config", "user.email", "git@example.invalid")
        offset = alice.log_path.stat().st_size
        lines = [entry_line(f"Pushed line {n} of a burst.") for n in range(PUSHES)]
        for line in lines:
            with (clone / MEMORY_STORE).open("ab") as out:
                out.write(line)
            git(clone, "commit", "-qam", "a line")
            git(clone, "push", "-q", "origin", "main")
        wait_for(lambda: all(line in alice.read_live(MEMORY_FILE) for line in lines), timeout=60)
        fetched = alice.log(offset).count("cycle (remote refs changed")
    # Fetching soon after each push took 4 cycles for these 10 on an idle machine; waiting for quiet, 1
    # (a loaded machine spreads the pushes: 2 s at most between fetches while they go on).
    assert 1 <= fetched <= 3
    assert alice.read_live(MEMORY_FILE).endswith(b"".join(lines))

"""`memsync status` counts the commits waiting to be pushed per remote (text and ``--json``), read from
the store: a remote that took every push shows 0 beside one that could not be reached."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import git
from tests.support.peers import Peer


def test_status_shows_unpushed_commits_per_remote(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    gone = tmp_path / "gone.git"
    alice.configure({"origin": str(remote), "backup": str(gone)})
    alice.append_entry("first")
    assert alice.main("sync").returncode == 75
    alice.append_entry("second")
    assert alice.main("sync").returncode == 75
    commits = int(git(alice.store, "rev-list", "--count", "HEAD"))
    assert commits >= 2

    shown = alice.main("status", "--json")
    assert shown.returncode == 0, shown.stderr
    store = json.loads(shown.stdout)["stores"]["main"]
    assert store["remotes"]["origin"]["unpushed"] == 0
    assert store["remotes"]["backup"]["unpushed"] == commits  # never reached: lacks every commit
    assert store["unpushed"] == commits

    text = alice.main("status").stdout
    assert f"  remote origin ({remote}): last exchange 2" in text
    (origin,) = [line for line in text.splitlines() if line.startswith("  remote origin ")]
    assert origin.endswith("; commits waiting to be pushed: 0"), origin
    (backup,) = [line for line in text.splitlines() if line.startswith("  remote backup ")]
    waiting = f"last exchange never; commits waiting to be pushed: {commits}; last error: "
    assert backup.startswith(f"  remote backup ({gone}): {waiting}"), backup

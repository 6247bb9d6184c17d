"""What `memsync sync` says, through the CLI subprocess: each fact once, a result line per store on stdout
(nothing with -q), a failure as one warning on stderr naming the remote once, with its URL and why; with
-v also its steps on stderr in the order they happen (commit, contact, fetch/merge and push, deliver)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.helpers import remote_blobs
from tests.support.peers import Peer


def _position(lines: list[str], text: str) -> int:
    (found,) = [i for i, line in enumerate(lines) if text in line]
    return found


def test_sync_v_says_commit_then_exchange_then_delivery(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    alice.append_entry("alice's lesson")
    assert alice.main("sync").returncode == 0
    bob.append_entry("bob's lesson")
    said = bob.main("sync", "-v")
    assert said.returncode == 0, said.stderr
    lines = said.stderr.splitlines()
    order = [
        _position(lines, "store main: committed memory: +1 entry"),
        _position(lines, f"store main: contacting origin ({remote})"),
        _position(lines, "store main: origin: merged and pushed"),
        _position(lines, "store main: delivered memory: memory/memory.jsonl appended (+1 line)"),
    ]
    assert order == sorted(order), said.stderr
    assert (
        said.stdout == "store main: committed memory: +1 entry; origin: merged and pushed; delivered 1 file\n"
    )
    assert b"alice's lesson" in bob.memory_file.read_bytes()


def test_an_unreachable_remote_is_one_line_naming_it_once_with_its_url(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    gone, refused = tmp_path / "gone.git", "ssh://127.0.0.1:1/memory.git"  # port 1: refused at once
    alice.configure({"origin": str(remote), "backup": str(gone), "mirror": refused}, network_timeout_s=10.0)
    alice.append_entry("reaches origin")
    said = alice.cli("sync", timeout=120)
    assert said.returncode == 75, said.stderr
    warnings = said.stderr.splitlines()
    assert len(warnings) == 2 and all(line.startswith("WARNING") for line in warnings), said.stderr
    # The result line points at the warnings; the URLs and causes are said once, there.
    assert said.stdout == (
        "store main: committed memory: +1 entry; origin: pushed; backup: failed, see the warning on stderr;"
        " mirror: failed, see the warning on stderr; nothing delivered\n"
    )
    for name, url, cause in (
        ("backup", str(gone), "does not appear to be a git repository"),
        ("mirror", refused, "Connection refused"),
    ):
        (line,) = [text for text in warnings if re.search(rf"\b{name}\b", text)]
        assert len(re.findall(rf"\b{name}\b", line)) == 1, line
        assert line.startswith(f"WARNING memsync.commands.sync: store main: cannot reach {name}"), line
        assert url in line and cause in line, line
        assert (said.stdout + said.stderr).count(cause) == 1, said


def test_sync_prints_its_result_per_store_on_stdout_and_nothing_with_q(tmp_path: Path, remote: Path) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    alice.append_entry("alice's lesson")
    first = alice.main("sync")
    assert first.returncode == 0, first.stderr
    # Each fact once: the result line on stdout, no log line on stderr repeating it.
    assert (first.stdout, first.stderr) == (
        "store main: committed memory: +1 entry; origin: pushed; nothing delivered\n",
        "",
    )
    bob.append_entry("bob's lesson")
    said = bob.main("sync")
    assert said.returncode == 0, said.stderr
    assert (said.stdout, said.stderr) == (
        "store main: committed memory: +1 entry; origin: merged and pushed; delivered 1 file\n",
        "",
    )
    alice.append_entry("alice again")
    quiet = alice.main("sync", "-q")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    assert any(b"alice again" in blob for blob in remote_blobs(remote))  # quiet, yet synced

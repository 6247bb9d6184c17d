"""memsync over ``ssh://`` against a real sshd on 127.0.0.1 (``tests.support.servers.ssh``): two daemons sync
both
ways; a wrong or locked key, an unknown and a changed host key each give a one-line error, never a
prompt, and the commit waits until the user fixes the setup."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, Peer, running
from tests.support.servers.process import run_on_tty
from tests.support.servers.ssh import keygen
from tests.support.servers.transport import CANNOT_REACH, LOG_LINE, Remote, sync_on_tty


@pytest.mark.slow
def test_two_daemons_sync_both_ways_over_ssh(ssh_remote: Remote, tmp_path: Path) -> None:
    alice = ssh_remote.peer(tmp_path, "alice")
    bob = ssh_remote.peer(tmp_path, "bob")
    assert alice.load_config().stores["main"].remotes["origin"].startswith("ssh://")
    with running(alice, bob):
        entry = alice.append_entry("The staging host answers on ssh only.")
        note = bob.append_daily("- [09:10] bob: deploys go through the bastion\n")
        wait_for(lambda: entry in bob.read_live(MEMORY_FILE), timeout=60, what="alice's entry at bob")
        wait_for(lambda: note in alice.read_live(f"daily/{DAY}.md"), timeout=60, what="bob's note at alice")
    assert entry in ssh_remote.file(MEMORY_STORE)
    assert ssh_remote.ssh is not None
    assert ssh_remote.ssh.log.read_text().count("Accepted publickey for") >= 4  # fetches and pushes


def _wrong_key(remote: Remote, peer: Peer) -> None:
    assert remote.ssh is not None
    keygen(peer.home / "other_key", "not authorized")
    remote.ssh.setup_client(peer.home, key=peer.home / "other_key")


def _locked_key(remote: Remote, peer: Peer) -> None:
    """The authorized key, under a passphrase and with no agent: ssh would ask for the passphrase."""
    assert remote.ssh is not None
    locked = peer.home / "locked_key"
    locked.write_bytes(remote.ssh.client_key.read_bytes())
    locked.chmod(0o600)
    subprocess.run(
        ["ssh-keygen", "-q", "-p", "-N", "sekrit", "-f", str(locked)], check=True, capture_output=True
    )
    remote.ssh.setup_client(peer.home, key=locked)


def _unknown_host(remote: Remote, peer: Peer) -> None:
    assert remote.ssh is not None
    remote.ssh.setup_client(peer.home, known_hosts="")


def _changed_host_key(remote: Remote, peer: Peer) -> None:
    assert remote.ssh is not None
    other = keygen(peer.home / "impostor", "impostor")
    remote.ssh.setup_client(peer.home, known_hosts=remote.ssh.known_hosts_line(other) + "\n")


# Each breaks the ssh setup of a peer's HOME as users do, and the reason memsync must give.
SETUP_PROBLEMS: list[tuple[str, Callable[[Remote, Peer], None], str]] = [
    ("wrong key", _wrong_key, r"Permission denied \(publickey\)"),
    ("key with a passphrase", _locked_key, r"Permission denied \(publickey\)"),
    ("unknown host key", _unknown_host, r"Host key verification failed"),
    (
        "changed host key",
        _changed_host_key,
        r"Host key for \[127\.0\.0\.1\]:\d+ has changed and you have requested strict checking "
        r"\(offending ED25519 key in \S+/known_hosts:1\)",
    ),
]


@pytest.mark.slow
def test_an_ssh_setup_problem_is_one_line_never_a_prompt(ssh_remote: Remote, tmp_path: Path) -> None:
    alice = ssh_remote.peer(tmp_path, "alice")
    entry = alice.append_entry("Written while ssh was misconfigured.")
    for case, breaks, reason in SETUP_PROBLEMS:
        breaks(ssh_remote, alice)
        run = sync_on_tty(alice)
        assert run.terminal == "", f"{case}: something asked on the terminal: {run.terminal!r}"
        assert run.returncode == 75, f"{case}: {run.stderr}"  # committed, not pushed
        assert all(LOG_LINE.match(line) for line in run.stderr.splitlines()), f"{case}: {run.stderr}"
        error = alice.status()["stores"]["main"]["remotes"]["origin"]["last_error"]
        assert re.fullmatch(rf"{CANNOT_REACH}.*{reason}.*", error), f"{case}: {error}"
        assert "\n" not in error
        assert entry not in ssh_remote.file(MEMORY_STORE)
    ssh_remote.setup_client(alice.home)  # the user fixes the key and known_hosts
    assert alice.cli("sync").returncode == 0
    assert entry in ssh_remote.file(MEMORY_STORE)


def test_doctor_and_init_use_the_users_ssh_setup_and_never_prompt(ssh_remote: Remote, tmp_path: Path) -> None:
    assert ssh_remote.ssh is not None
    alice = ssh_remote.peer(tmp_path, "alice")
    doctor = alice.cli("doctor")
    line = next(line for line in doctor.stdout.splitlines() if "remote main/origin" in line)
    assert line == f"OK   remote main/origin: {ssh_remote.url} reachable", doctor.stdout

    # A new machine whose known_hosts lacks the host: `memsync init` asks nothing and says why.
    home = tmp_path / "newcomer"
    env = {k: v for k, v in {**os.environ, **isolated_env(home)}.items() if k != "GIT_TERMINAL_PROMPT"}
    ssh_remote.ssh.setup_client(home, known_hosts="")
    run = run_on_tty([sys.executable, "-m", "memsync", "init", "--remote", ssh_remote.url], env, timeout=90)
    assert run.terminal == "", f"something asked on the terminal: {run.terminal!r}"
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Host key verification failed" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr

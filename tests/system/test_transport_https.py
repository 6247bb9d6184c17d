"""memsync over HTTPS with basic auth: git's smart HTTP (``git http-backend``) behind nginx with TLS from a
test CA (``tests.support.servers.https``), the login in git's credential store. Content syncs both ways; the
password appears in none of memsync's config, status, logs or the store's git config; a wrong password
(401) is one line, never a prompt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.helpers import wait_for
from tests.support.peers import DAY, MEMORY_FILE, MEMORY_STORE, running
from tests.support.servers.transport import CANNOT_REACH, LOG_LINE, Remote, sync_on_tty


@pytest.mark.slow
def test_two_peers_sync_over_https_and_the_password_stays_in_the_credential_helper(
    https_remote: Remote, tmp_path: Path
) -> None:
    assert https_remote.https is not None
    password = https_remote.https.password
    alice = https_remote.peer(tmp_path, "alice")
    bob = https_remote.peer(tmp_path, "bob")
    url = alice.load_config().stores["main"].remotes["origin"]
    assert url.startswith("https://") and "@" not in url
    with running(alice):
        entry = alice.append_entry("The wiki moved behind the VPN.")
        wait_for(lambda: entry in https_remote.file(MEMORY_STORE), timeout=60, what="alice's push")
        bob_sync = bob.cli("sync")
        assert bob_sync.returncode == 0, bob_sync.stderr
        assert entry in bob.read_live(MEMORY_FILE)
        note = bob.append_daily("- [11:20] bob: the wiki needs the VPN profile\n")
        bob_sync = bob.cli("sync")
        assert bob_sync.returncode == 0, bob_sync.stderr
        wait_for(lambda: note in alice.read_live(f"daily/{DAY}.md"), timeout=60, what="bob's note at alice")
    web_log = (https_remote.https.root / "access.log").read_text()
    assert re.search(r'"POST /git/remote\.git/git-receive-pack HTTP/1\.1" 200', web_log)

    seen = {
        "config": alice.config.read_text(),
        "status": alice.cli("status").stdout + alice.cli("status", "--json").stdout,
        "daemon log": alice.log(),
        "sync output": bob_sync.stdout + bob_sync.stderr,
    }
    for peer in (alice, bob):
        meta = peer.store / ".git"
        seen[f"{peer.name}'s store git config"] = (meta / "config").read_text()
        for path in (meta / "memsync").glob("*.json"):
            seen[f"{peer.name}'s {path.name}"] = path.read_text()
    assert len(seen) > 6
    for where, text in seen.items():
        assert password not in text, f"the password is in {where}"


def test_a_wrong_password_is_one_line_never_a_prompt(https_remote: Remote, tmp_path: Path) -> None:
    assert https_remote.https is not None
    alice = https_remote.peer(tmp_path, "alice")
    https_remote.https.setup_client(alice.home, password="not-the-password")
    entry = alice.append_entry("Written while the stored password was stale.")
    run = sync_on_tty(alice)
    assert run.terminal == "", f"something asked on the terminal: {run.terminal!r}"
    assert run.returncode == 75, run.stderr
    assert all(LOG_LINE.match(line) for line in run.stderr.splitlines()), run.stderr
    error = alice.status()["stores"]["main"]["remotes"]["origin"]["last_error"]
    assert re.fullmatch(
        rf"{CANNOT_REACH}Authentication failed for '{re.escape(https_remote.url)}/'", error
    ), error
    assert "not-the-password" not in run.stderr + alice.cli("status").stdout
    web_log = (https_remote.https.root / "access.log").read_text()
    assert '" 401 ' in web_log

    https_remote.setup_client(alice.home)  # the user stores the right password
    assert alice.cli("sync").returncode == 0
    assert entry in https_remote.file(MEMORY_STORE)

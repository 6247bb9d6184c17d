"""A remote URL with a password (``https://user:secret@host/...``) is shown without it: memsync never
prints or logs the password, in `sync` progress, `status`, `remote add|list` or `config list` (nor in
`doctor`, through the same ``redacted``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memsync.base.remote_url import redacted
from tests.support.peers import Peer

SECRET = "SuperSecret99"
URL = f"https://user:{SECRET}@127.0.0.1:1/x.git"


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_no_command_shows_a_remote_password(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    alice.configure(network_timeout_s=5.0)
    added = alice.cli("remote", "add", "evil", URL, "--store", "main")
    assert added.returncode == 0, added.stderr
    said = {
        args: alice.cli(*args.split())
        for args in ("sync", "sync -v", "status", "status --json", "remote list", "config list")
    }
    shown = added.stdout + added.stderr + "".join(done.stdout + done.stderr for done in said.values())
    assert "contacting evil (https://user@127.0.0.1:1/x.git)" in said["sync -v"].stderr
    [warning] = said["sync"].stderr.splitlines()  # the failure said once, on stderr
    assert warning.startswith("WARNING") and "cannot reach evil (https://user@127.0.0.1:1/x.git)" in warning
    assert "evil: failed, see the warning on stderr" in said["sync"].stdout
    assert "remote evil (https://user@127.0.0.1:1/x.git)" in said["status"].stdout
    assert "evil https://user@127.0.0.1:1/x.git" in said["remote list"].stdout
    assert SECRET not in shown
    assert SECRET in str(alice.load_config())  # the config keeps it: git needs it


@given(
    scheme=st.sampled_from(["https://", "ssh://", "persistent-https::https://", ""]),
    user=st.text("abcdefgh-_.", min_size=1, max_size=8),
    password=st.text(
        st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#"), max_size=20
    ),
    host=st.sampled_from(["host.example", "127.0.0.1:8443", "[::1]"]),
)
def test_a_password_is_never_shown(scheme: str, user: str, password: str, host: str) -> None:
    assume(scheme or not password.startswith(":"))  # `user::...` is git's `transport::address`
    sep = "/" if scheme else ":"
    url = f"{scheme}{user}:{password}@{host}{sep}org/repo.git"
    shown = redacted(url)
    assert shown == f"{scheme}{user}@{host}{sep}org/repo.git"
    assert redacted(shown) == shown
    assert redacted(f"{scheme}git@{host}{sep}org/repo") == f"{scheme}git@{host}{sep}org/repo"

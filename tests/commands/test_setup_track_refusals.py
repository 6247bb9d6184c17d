"""What cannot be agent memory is never tracked (DESIGN I6): the file-system root, HOME and the folders
holding it, system directories (/etc, /usr, /var, ...) and HOME's credential folders and files. `memsync
track` and `init --track` refuse them in one line naming the argument, writing nothing; a config that
names one by hand is refused by `memsync sync` and by the daemon (at start and at a reload, keeping the
previous config), and nothing of it reaches the store or the remote. Store copies never get wider
permission bits than their live files."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from tests.support.helpers import cli_main, reachable_paths, wait_for
from tests.support.peers import DAY, MEMORY_STORE, ROLE_STORE, Peer, running

CONFIG = """\
[[stores.main.track]]
path = "~/.agents/memory/scout"
"""


def _home_path(home: Path, rel: str, *, make: str = "") -> str:
    """``home/rel`` as a string, with ``home/make`` created first (a directory) when given."""
    if make:
        (home / make).mkdir(parents=True, exist_ok=True)
    return str(home / rel)


REFUSED = {
    "the root": (lambda home: "/", "the file-system root"),
    "HOME": (lambda home: str(home), "your home directory"),
    "a folder holding HOME": (lambda home: str(home.parent), "a folder holding your home directory"),
    "/etc": (lambda home: "/etc", "a system directory"),
    "/etc/passwd": (lambda home: "/etc/passwd", "in the system directory /etc"),
    "/usr/share": (lambda home: "/usr/share", "in the system directory /usr"),
    "/var/log": (lambda home: "/var/log", "in the system directory /var"),
    "~/.ssh": (lambda home: _home_path(home, ".ssh", make=".ssh"), "the credential ~/.ssh"),
    "a key in ~/.ssh": (
        lambda home: _home_path(home, ".ssh/id_ed25519", make=".ssh"),
        "in the credential folder ~/.ssh",
    ),
    "~/.aws/credentials": (
        lambda home: _home_path(home, ".aws/credentials", make=".aws"),
        "in the credential folder ~/.aws",
    ),
    "~/.config, holding gcloud's": (
        lambda home: _home_path(home, ".config", make=".config/gcloud"),
        "a folder holding the credential ~/.config/gcloud",
    ),
    "~/.netrc": (lambda home: _home_path(home, ".netrc"), "the credential ~/.netrc"),
}


@pytest.mark.parametrize(("given", "why"), REFUSED.values(), ids=REFUSED.keys())
def test_track_refuses_what_cannot_be_agent_memory(home: Path, given: object, why: str) -> None:
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG)
    path = given(home)  # type: ignore[operator]

    result = cli_main("track", path)

    assert result.returncode == 1, result.stdout
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr
    assert f"PATH {path}: it is {why}" in result.stderr and "not agent memory" in result.stderr
    assert config.read_text() == CONFIG and not config.with_name("config.toml.bak").exists()


def test_a_link_to_etc_is_refused_as_etc(home: Path) -> None:
    link = home / "notes"
    link.symlink_to("/etc")

    result = cli_main("track", str(link))

    assert result.returncode == 1
    assert f"PATH {link}: it is a system directory" in result.stderr
    assert not (home / ".config" / "memsync" / "config.toml").exists()


def test_init_refuses_a_system_track_before_writing(home: Path) -> None:
    result = cli_main("init", "--track", "/etc")

    assert result.returncode == 1
    assert "--track /etc: it is a system directory, not agent memory" in result.stderr
    assert not (home / ".config" / "memsync").exists()
    assert not (home / ".local" / "share" / "memsync").exists()


def test_memory_under_tmp_and_home_stays_allowed(home: Path) -> None:
    inside = home / "work" / "notes"
    inside.mkdir(parents=True)
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)

    result = cli_main("track", str(inside), "--store", "main", "--as", "roles/notes")

    assert result.returncode == 0, result.stderr
    assert f"tracking {inside} in store main as roles/notes" in result.stdout


def _add_etc_by_hand(peer: Peer) -> None:
    with peer.config.open("a") as out:
        out.write('\n[[stores.main.track]]\npath = "/etc"\nas = "etc"\n')


def test_a_hand_written_etc_track_is_never_synced(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote, pull_interval_s=600)
    with running(alice):
        first = alice.append_entry("the probe retries once")
        wait_for(lambda: first in alice.read_store(MEMORY_STORE), timeout=30, what="first publish")
        offset = alice.log_path.stat().st_size
        _add_etc_by_hand(alice)
        assert alice.proc is not None
        alice.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "config not reloaded" in alice.log(offset), timeout=30, what="the refused reload")
        reload_line = next(line for line in alice.log(offset).splitlines() if "config not reloaded" in line)
        assert "`stores.main.track[2].path` /etc is a system directory, not agent memory" in reload_line
        later = alice.append_entry("the daemon goes on with the previous config")
        wait_for(lambda: later in alice.read_store(MEMORY_STORE), timeout=30, what="later entry published")
    assert first in alice.read_store(MEMORY_STORE)

    synced = alice.main("sync")
    assert synced.returncode == 1
    assert "`stores.main.track[2].path` /etc is a system directory" in synced.stderr

    offset = alice.start(wait_ready=False)
    assert alice.proc is not None and alice.proc.wait(60) != 0
    assert "/etc is a system directory, not agent memory" in alice.log(offset)

    paths = reachable_paths(remote) | reachable_paths(alice.store)
    assert paths and not any(p == "etc" or p.startswith("etc/") for p in paths)
    assert not (alice.store / "etc").exists()


def test_a_store_copy_is_never_wider_than_its_live_file(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    curated = alice.role_dir / "ops.md"
    curated.write_bytes(b"---\nname: ops\ndescription: ops\ntype: project\n---\n\nthe probe retries\n")
    curated.chmod(0o600)
    daily = alice.role_dir / "daily" / f"{DAY}.md"
    daily.parent.mkdir()
    daily.write_bytes(f"# Daily log — {DAY}\n\n- [09:00] ran the probe\n".encode())
    daily.chmod(0o600)
    alice.memory_file.chmod(0o640)
    alice.append_entry("kept for the owner and the group")

    synced = alice.main("sync")

    assert synced.returncode == 0, synced.stderr
    copies = {
        alice.store / ROLE_STORE / "ops.md": 0o600,
        alice.store / ROLE_STORE / "daily" / f"{DAY}.md": 0o600,
        alice.store / MEMORY_STORE: 0o640,
    }
    for copy, live_mode in copies.items():
        assert copy.read_bytes()  # published
        mode = stat.S_IMODE(os.stat(copy).st_mode)
        assert mode & ~live_mode == 0, f"{copy}: {oct(mode)} is wider than the live file's {oct(live_mode)}"
    assert (alice.store / ROLE_STORE / "ops.md").read_bytes() == curated.read_bytes()

"""`memsync uninstall [--dry-run] [--purge] [--force]`: the daemon stopped, memsync's hooks and MCP entries
gone from every host file it wrote them in (the user's and a tracked project's), the user's own entries
kept byte for byte, and what stays listed (real daemon, real stores and remotes, the CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.commands import hooks, installs, setup, setup_track
from memsync.commands.mcp_install import install_line
from memsync.crypt import keys
from memsync.daemon.instance import pid_file
from memsync.hosts import mcp_install
from memsync.hosts.hooks import HOSTS as HOOK_HOSTS
from memsync.hosts.settings_file import BACKUP_SUFFIX
from tests.support.helpers import bare_remote, cli_main, wait_for

THEIR_CLAUDE = {
    "model": "opus",
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say 'done'"}]}]},
}
THEIR_CODEX = 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n'


def _ok(*args: str) -> list[str]:
    done = cli_main(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_dry_run_changes_nothing_then_uninstall_removes_only_what_memsync_added(
    home: Path, tmp_path: Path
) -> None:
    claude_settings = home / ".claude" / "settings.json"
    claude_settings.parent.mkdir(parents=True)
    claude_settings.write_text(json.dumps(THEIR_CLAUDE, indent=2) + "\n")
    codex_config = home / ".codex" / "config.toml"
    codex_config.parent.mkdir(parents=True)
    codex_config.write_text(THEIR_CODEX)
    shop = tmp_path / "shop"
    (shop / ".agents" / "memory" / "dev").mkdir(parents=True)
    # Set up in this process (the commands' own tests run them as subprocesses): uninstall is under test.
    setup.init(remote=str(bare_remote(tmp_path / "remote.git")))
    setup_track.track(shop / ".agents" / "memory" / "dev")
    for host in HOOK_HOSTS:
        hooks.install(host)
        mcp_install.install(host)
    hooks.install("claude-code", shop)
    config = home / ".config" / "memsync" / "config.toml"
    host_files = [
        claude_settings,
        home / ".codex" / "hooks.json",
        home / ".claude.json",
        codex_config,
        shop / ".claude" / "settings.json",
    ]
    before = {path: path.read_bytes() for path in [*host_files, config]}
    original_claude = json.dumps(THEIR_CLAUDE, indent=2) + "\n"

    log_path = tmp_path / "daemon.log"
    with log_path.open("wb") as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memsync", "daemon"], stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(lambda: pid_file(config).exists(), timeout=60, what="the daemon's pid file")

        planned = _ok("uninstall", "--dry-run")
        assert f"would stop the memsync daemon (PID {daemon.pid})" in planned
        for path in (claude_settings, home / ".codex" / "hooks.json", shop / ".claude" / "settings.json"):
            assert f"would remove memsync's hooks from {path}" in planned
        for path in (home / ".claude.json", codex_config):
            assert f"would remove memsync's MCP server from {path}" in planned
        assert planned[-1] == "nothing was changed (--dry-run)"
        assert {path: path.read_bytes() for path in before} == before
        assert daemon.poll() is None

        done = _ok("uninstall")
        assert daemon.poll() == 0, log_path.read_text()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert f"stopped the memsync daemon (PID {daemon.pid})" in done
    assert f"kept: memsync's state {home / '.local' / 'state' / 'memsync'}" in "\n".join(done)
    assert claude_settings.read_text() == original_claude
    assert codex_config.read_text() == THEIR_CODEX
    assert "memsync" not in (home / ".claude.json").read_text()  # registered around the record
    # memsync created these: with its entries gone they held nothing, so they went too
    for path in (home / ".codex" / "hooks.json", shop / ".claude" / "settings.json"):
        assert not path.exists()
        assert not path.with_name(path.name + BACKUP_SUFFIX).exists()
    # What stays is listed, and stays.
    assert f"kept: the config {config}" in done
    store = home / ".local" / "share" / "memsync" / "stores" / "personal"
    assert any(line.startswith(f"kept: store personal {store}") for line in done)
    # its backup held the file with memsync's entries: restoring it would only bring them back
    backup = claude_settings.with_name(claude_settings.name + BACKUP_SUFFIX)
    assert f"deleted memsync's backup {backup} (memsync's entries are gone from the file)" in done
    assert not backup.exists() and not any(line.startswith("kept: backup") for line in done)
    assert config.read_bytes() == before[config] and (store / ".git").is_dir()

    assert _ok("uninstall")[0] == "nothing of memsync's to remove from this machine"


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_purge_deletes_stores_only_once_pushed_or_forced(home: Path, tmp_path: Path) -> None:
    role = home / ".agents" / "memory" / "dev"
    role.mkdir(parents=True)
    (role / "notes.md").write_text("# mine\n")
    setup.init(remote=str(bare_remote(tmp_path / "remote.git")))
    setup.store_add("team")
    _ok("sync")
    hooks.install("claude-code")
    stores = home / ".local" / "share" / "memsync" / "stores"
    config = home / ".config" / "memsync" / "config.toml"

    refused = cli_main("uninstall", "--purge")
    assert refused.returncode == 1
    assert f"cannot purge store team ({stores / 'team'}): it has no remote" in refused.stderr
    assert "--force" in refused.stderr
    assert "memsync.hook" in (home / ".claude" / "settings.json").read_text()  # nothing was done
    assert (stores / "team" / ".git").is_dir() and config.exists()

    _ok("store", "remove", "team")  # its working tree stays: not the config's any more
    (role / "later.md").write_text("# not pushed yet\n")
    _ok("sync")
    done = _ok("uninstall", "--purge")
    assert f"deleted store personal {stores / 'personal'}" in done
    assert not (stores / "personal").exists() and not config.exists()
    assert not (home / ".local" / "state" / "memsync").exists()
    # memsync made settings.json (it was not there before hooks install): with its hooks gone it is empty,
    # and deleted with its backup
    assert not (home / ".claude" / "settings.json").exists()
    assert not list((home / ".claude").glob("settings.json*"))
    assert (stores / "team" / ".git").is_dir()
    assert (role / "notes.md").read_text() == "# mine\n"  # the memory itself stays


def test_purge_force_deletes_a_store_no_remote_has(home: Path) -> None:
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    setup.init()
    store = home / ".local" / "share" / "memsync" / "stores" / "personal"
    assert cli_main("uninstall", "--purge").returncode == 1 and store.is_dir()
    done = _ok("uninstall", "--purge", "--force")
    assert f"deleted store personal {store}" in done and not store.exists()
    # nothing of memsync's is left behind, not even its empty directories
    assert not (home / ".local" / "share" / "memsync").exists()
    assert not (home / ".config" / "memsync").exists()


def test_a_broken_config_does_not_keep_the_hooks_in(home: Path) -> None:
    hooks.install("claude-code")
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("stores = [not toml\n")
    purge = cli_main("uninstall", "--purge")
    assert purge.returncode == 1 and "invalid config" in purge.stderr
    done = _ok("uninstall")
    assert (
        f"claude-code: removed memsync's hooks from {home / '.claude' / 'settings.json'}; other hooks kept"
        in (done)
    )
    assert f"kept: the config {config}" in done and config.read_text() == "stores = [not toml\n"


def test_uninstall_visits_a_project_it_was_installed_in_and_leaves_no_stub_it_created(
    home: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"  # no track, not Claude Code's, not the cwd: only the record names it
    proj.mkdir()
    project_settings = proj / ".claude" / "settings.json"
    _ok("hooks", "install", "claude-code", "--project", str(proj))
    _ok("mcp", "install", "cursor")
    assert project_settings.exists() and (home / ".cursor" / "mcp.json").exists()

    dry = "\n".join(_ok("uninstall", "--dry-run"))
    assert f"remove memsync's hooks from {project_settings}" in dry
    assert project_settings.exists()

    out = "\n".join(_ok("uninstall"))
    assert f"deleted {project_settings} and its backup (memsync created it" in out
    assert not project_settings.exists()  # memsync created it: no `{}` stub stays
    assert not (proj / ".claude").exists()
    assert not (home / ".cursor").exists()
    assert proj.is_dir()


def test_uninstall_keeps_a_file_memsync_did_not_create(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{}\n")
    _ok("hooks", "install", "claude-code")
    _ok("uninstall")
    assert json.loads(settings.read_text()) == {}
    assert not settings.with_name(settings.name + BACKUP_SUFFIX).exists()


def test_purge_after_connect_in_an_existing_claude_dir_leaves_nothing_memsync_made(home: Path) -> None:
    """The purge deleted the installs record before reading it: `{}` stubs and their backups stayed."""
    setup.init()
    (home / ".claude").mkdir()  # Claude Code's, before memsync: it stays
    _ok("connect", "claude-code")
    cli_main("service", "install")  # no user systemd here: the unit is written, not started (exit 1)
    made = [home / ".claude.json", home / ".claude" / "settings.json"]
    assert all(path.exists() for path in made)

    done = "\n".join(_ok("uninstall", "--purge", "--force"))
    for path in made:
        assert not path.exists() and not path.with_name(path.name + BACKUP_SUFFIX).exists()
        assert f"deleted {path} and its backup (memsync created it" in done
    assert (home / ".claude").is_dir() and not any((home / ".claude").iterdir())
    assert f"deleted the empty directory {home / '.config' / 'systemd' / 'user'}" in done
    for gone in (".config/systemd/user", ".config/memsync", ".local/share/memsync", ".local/state/memsync"):
        assert not (home / gone).exists(), gone


def test_disconnect_deletes_a_file_it_created_once_empty_and_keeps_one_it_did_not(home: Path) -> None:
    setup.init()
    mine = home / ".claude" / "settings.json"
    mine.parent.mkdir()
    mine.write_text('{"model": "opus"}\n')
    _ok("connect", "claude-code")
    assert "memsync" in (home / ".claude.json").read_text()
    done = "\n".join(_ok("disconnect", "claude-code"))
    assert f"deleted {home / '.claude.json'} and its backup (memsync created it" in done
    assert not (home / ".claude.json").exists()
    assert json.loads(mine.read_text()) == {"model": "opus"}


def test_an_install_found_in_place_is_recorded_so_uninstall_removes_it(home: Path, tmp_path: Path) -> None:
    proj = tmp_path / "proj"  # no track, not Claude Code's, not the cwd: only the record names it
    proj.mkdir()
    install_line("cursor", proj)
    hooks.install("claude-code", proj)
    installs.record_path().unlink()  # as an older memsync left them: in place, recorded nowhere
    assert install_line("cursor", proj).startswith("memsync's MCP server is already registered")
    assert hooks.install("claude-code", proj)[0].startswith("claude-code: memsync's hooks are already")

    done = _ok("uninstall")
    mcp_file, settings = proj / ".cursor" / "mcp.json", proj / ".claude" / "settings.json"
    assert f"removed memsync's MCP server from {mcp_file}" in done
    assert f"claude-code: removed memsync's hooks from {settings}; other hooks kept" in done
    assert "memsync" not in mcp_file.read_text() + settings.read_text()


def test_uninstall_keeps_a_config_backup_memsync_did_not_make(home: Path) -> None:
    setup.init()
    config = home / ".config" / "memsync" / "config.toml"
    backup = config.with_name("config.toml.bak")  # the user's own: memsync edits its config in place
    backup.write_text("# my copy from last week\n")
    assert not any("config.toml.bak" in line for line in _ok("uninstall"))  # not claimed as memsync's
    done = _ok("uninstall", "--purge", "--force")
    assert not config.exists() and f"deleted {config}" in done
    assert backup.read_text() == "# my copy from last week\n"
    assert not any("config.toml.bak" in line for line in done)


def test_the_device_key_is_listed_as_kept_and_purge_names_it_before_deleting_it(home: Path) -> None:
    setup.init()
    key = keys.key_path()
    keys.device_key(create=True)
    secret = key.read_text()
    assert f"kept: this device's private key {key}" in "\n".join(_ok("uninstall"))
    assert key.read_text() == secret

    planned = "\n".join(_ok("uninstall", "--purge", "--force", "--dry-run"))
    assert f"would delete this device's private key {key}" in planned
    assert "`memsync key export`" in planned and key.read_text() == secret

    done = _ok("uninstall", "--purge", "--force")
    assert f"deleted this device's private key {key}" in done
    assert any(line.startswith("warning: memory on an encrypted remote is unreadable") for line in done)
    assert not key.exists() and not (home / ".config" / "memsync").exists()


def test_purge_deletes_the_members_a_join_expected(home: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    remote.mkdir()
    assert cli_main("join", str(remote), "--member", "1285-1618").returncode == 0
    expected = home / ".config" / "memsync" / "expected-members"
    assert expected.read_text() == f"{remote}\t1285-1618\n"
    done = _ok("uninstall", "--purge", "--force")
    assert f"deleted {expected}" in done and not expected.exists()
    assert not (home / ".config" / "memsync").exists()

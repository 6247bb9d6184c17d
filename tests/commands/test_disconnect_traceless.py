"""`memsync connect HOST` then `memsync disconnect HOST` leaves no trace: a full listing of HOME (every
path, every file's bytes) is the same before the connect and after the disconnect, for every host of the
registry, on a HOME without the host and on one where the host's files already hold the user's
settings (the trial of the README's "deletes the files it created", "byte for byte")."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from memsync.hosts import registry
from memsync.hosts.hooks import HOSTS as HOOK_HOSTS
from memsync.hosts.hooks import settings_path
from tests.support.helpers import bare_remote, cli_main


def listing(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (relative), with a file's bytes (a symlink's target), None for a
    directory; memsync's own state (its locks) and the directories above it are left out: memsync is
    still installed after a disconnect (``uninstall --purge`` takes them out)."""
    state = root / ".local" / "state" / "memsync"
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        if path == state or state in path.parents or path in state.parents:
            continue
        if path.is_symlink():
            found[str(path.relative_to(root))] = f"-> {os.readlink(path)}".encode()
        else:
            found[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return found


def _ok(*args: str) -> str:
    done = cli_main(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _user_files(host: str) -> list[Path]:
    files = [registry.user_file(host)]
    hooked = next((h for h in HOOK_HOSTS if h == host), None)
    if hooked is not None:
        files.append(settings_path(hooked, None))
    return list(dict.fromkeys(files))


@pytest.mark.parametrize("host", registry.NAMES)
def test_connect_then_disconnect_on_a_home_without_the_host_leaves_home_as_it_was(
    host: str, home: Path
) -> None:
    before = listing(home)
    said = _ok("connect", host)
    assert "memsync-backup" not in said  # there was no file to back up
    assert all(path.exists() for path in _user_files(host) if path.suffix != ".toml" or host == "codex")
    _ok("disconnect", host)
    assert listing(home) == before


def _theirs(path: Path) -> bytes:
    """A file of the user's for ``path``, in a layout memsync does not write itself (compact JSON, one
    line; TOML and YAML with a comment)."""
    if path.suffix == ".toml":
        return b'# mine\nmodel = "o3"\n'
    if path.suffix == ".yaml":
        return b"# mine\nmodel: gpt\n"
    return json.dumps({"theme": "dark", "n": 1}, separators=(",", ":")).encode()


def _write_theirs(host: str) -> None:
    """The user's own files for ``host`` (``_theirs``), before memsync touches them."""
    for path in _user_files(host):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_theirs(path))


@pytest.mark.parametrize("host", registry.NAMES)
def test_connect_then_disconnect_keeps_the_users_files_byte_for_byte_and_leaves_no_backup(
    host: str, home: Path
) -> None:
    _write_theirs(host)
    before = listing(home)
    _ok("connect", host)
    assert listing(home) != before
    _ok("disconnect", host)
    assert listing(home) == before


def test_init_connect_every_host_then_uninstall_purge_leaves_home_as_it_was(
    home: Path, tmp_path: Path
) -> None:
    (home / ".config").mkdir()  # a directory that was there before memsync stays
    (home / ".cursor").mkdir()

    def everything() -> dict[str, bytes | None]:
        return {
            str(p.relative_to(home)): None if p.is_dir() else p.read_bytes() for p in sorted(home.rglob("*"))
        }

    before = everything()
    _ok("init", "--remote", str(bare_remote(tmp_path / "remote.git")))
    for host in registry.NAMES:
        _ok("connect", host)
    _ok("uninstall", "--purge", "--force")
    assert everything() == before


def test_disconnect_after_the_user_edited_a_compact_file_keeps_it_compact(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"theme":"dark","n":1}')
    _ok("connect", "claude-code")
    settings.write_bytes(settings.read_bytes().replace(b'"dark"', b'"light"'))  # the user's edit meanwhile
    said = _ok("disconnect", "claude-code")
    assert settings.read_bytes() == b'{"theme":"light","n":1}'
    kept = re.search(
        rf"is kept as ({re.escape(str(settings))}\.memsync-backup\.\d{{8}}T\d{{6}}Z)$", said, re.M
    )
    assert kept, said  # kept, and said where
    handed = Path(kept[1]).read_bytes()
    assert b'"light"' in handed and b"memsync" in handed  # the file just before disconnect's edit
    _ok("connect", "claude-code")  # a later edit writes its own backup, never over the one handed over
    _ok("uninstall")
    assert Path(kept[1]).read_bytes() == handed and settings.read_bytes() == b'{"theme":"light","n":1}'


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_each_half_installed_and_removed_alone_keeps_the_users_files_byte_for_byte(
    host: str, home: Path
) -> None:
    _write_theirs(host)
    before = listing(home)
    _ok("mcp", "install", host)
    _ok("hooks", "install", host)
    _ok("hooks", "uninstall", host)  # Gemini CLI, Qwen Code: the MCP entry stays in the same file
    assert listing(home) != before
    _ok("mcp", "uninstall", host)
    assert listing(home) == before


def test_the_halves_installed_alone_then_uninstall_purge_leave_home_as_it_was(home: Path) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{\n    "theme": "Dark"  }\n')

    def everything() -> dict[str, bytes | None]:
        return {
            str(p.relative_to(home)): None if p.is_dir() else p.read_bytes() for p in sorted(home.rglob("*"))
        }

    before = everything()
    for host in ("gemini-cli", "claude-code"):  # no `init`: memsync's state directory is made here
        _ok("mcp", "install", host)
        _ok("hooks", "install", host)
    _ok("connect", "gemini-cli")  # already there: the backup still holds the file as memsync found it
    said = _ok("uninstall", "--purge", "--force")
    assert f"removed memsync's entries from {settings}: it is back byte for byte" in said, said
    assert everything() == before


@pytest.mark.parametrize("host", ["claude-code", "cursor", "gemini-cli"])
def test_a_link_to_a_file_not_made_yet_stays_a_link_and_the_file_memsync_made_goes(
    host: str, home: Path
) -> None:
    for path in _user_files(host):  # a dotfiles manager's links, into a folder not made yet
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(home / "dotfiles" / "new" / path.name)
    before = listing(home)
    _ok("connect", host)
    assert all((home / "dotfiles" / "new" / p.name).is_file() for p in _user_files(host))
    said = _ok("disconnect", host)
    assert "which stays" in said, said
    assert listing(home) == before
    assert all(p.is_symlink() for p in _user_files(host))


def _everything(home: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(home)): None if p.is_dir() else p.read_bytes() for p in sorted(home.rglob("*"))}


@pytest.mark.parametrize(
    "args",
    [("connect", "--status"), ("hooks", "status"), ("disconnect", "cursor"), ("mcp", "uninstall", "zed")],
)
def test_a_status_or_a_disconnect_of_nothing_writes_nothing_in_home(
    args: tuple[str, ...], home: Path
) -> None:
    (home / ".cursor").mkdir()  # the host is there, memsync never connected it
    (home / ".cursor" / "mcp.json").write_bytes(b'{"mcpServers": {"other": {"command": "x"}}}\n')
    before = _everything(home)
    _ok(*args)
    assert _everything(home) == before


def test_uninstall_purge_after_only_read_only_commands_leaves_home_as_it_was(home: Path) -> None:
    before = _everything(home)
    _ok("connect", "--status")
    _ok("hooks", "status")
    _ok("disconnect", "cursor")
    _ok("uninstall", "--purge", "--force")
    assert _everything(home) == before


def test_uninstall_leaves_the_backup_a_disconnect_kept_and_names_it(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"theme":"dark"}')
    _ok("connect", "claude-code")
    settings.write_bytes(settings.read_bytes().replace(b'"dark"', b'"light"'))  # the user's edit meanwhile
    _ok("disconnect", "claude-code")
    (kept,) = settings.parent.glob("settings.json.memsync-backup.*")
    held = kept.read_bytes()
    for args in (("uninstall", "--dry-run"), ("uninstall",)):
        said = _ok(*args)
        assert f"kept: {kept} (a copy memsync set aside for you rather than write over it" in said, said
    assert kept.read_bytes() == held
    assert settings.read_bytes() == b'{"theme":"light"}'


def test_a_backup_memsync_did_not_make_is_set_aside_not_written_over(home: Path) -> None:
    claude = home / ".claude.json"
    claude.write_bytes(b'{"a":1}')
    mine = home / ".claude.json.memsync-backup"
    mine.write_bytes(b"MY OWN BACKUP\n")
    said = _ok("mcp", "install", "claude-code")
    (aside,) = home.glob(".claude.json.memsync-backup.*")
    assert f"an earlier {mine} that memsync did not make is kept as {aside}" in said, said
    assert aside.read_bytes() == b"MY OWN BACKUP\n" and mine.read_bytes() == b'{"a":1}'
    _ok("mcp", "install", "claude-code")  # memsync's file now: no second copy set aside
    assert list(home.glob(".claude.json.memsync-backup.*")) == [aside]
    said = _ok("uninstall", "--purge", "--force")
    assert f"kept: {aside}" in said and aside.read_bytes() == b"MY OWN BACKUP\n"
    assert claude.read_bytes() == b'{"a":1}' and not mine.exists()

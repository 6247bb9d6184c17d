"""`memsync uninstall --purge --force` goes on past a host file it cannot read: one that holds nothing of
memsync's is left as it is, byte for byte; one that does gets one warning line naming the file and what
to remove by hand, and the exit code 3; everything else is uninstalled."""

from __future__ import annotations

from pathlib import Path

from memsync.hosts import mcp_install
from tests.support.helpers import cli_main

THEIRS = b'// my servers\n{"mcpServers": {"docs": {"command": "docs"}}}\n'


def test_uninstall_leaves_unreadable_files_without_memsync_alone_and_removes_the_rest(home: Path) -> None:
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_bytes(THEIRS)
    goose = home / ".config" / "goose" / "config.yaml"
    goose.parent.mkdir(parents=True)
    goose.write_bytes(b"")  # a host's empty file, memsync's never
    assert cli_main("connect", "claude-code").returncode == 0
    assert (home / ".claude.json").exists()

    done = cli_main("uninstall", "--purge", "--force")

    assert done.returncode == 0, done.stderr
    assert not (home / ".claude.json").exists() and mcp_install.registered("claude-code") is None
    assert cursor.read_bytes() == THEIRS and goose.read_bytes() == b""
    assert str(cursor) not in done.stdout + done.stderr


def test_uninstall_names_an_unreadable_file_holding_memsyncs_entry_and_exits_3(home: Path) -> None:
    assert cli_main("connect", "cursor").returncode == 0
    assert cli_main("connect", "gemini-cli").returncode == 0
    cursor = home / ".cursor" / "mcp.json"
    mangled = b"// the user's note\n" + cursor.read_bytes()
    cursor.write_bytes(mangled)

    done = cli_main("uninstall", "--purge", "--force")

    assert done.returncode == 3, done.stderr
    warned = [line for line in done.stdout.splitlines() if str(cursor) in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ")
    assert '"memsync"' in warned[0] and "mcpServers" in warned[0] and "by hand" in warned[0]
    assert cursor.read_bytes() == mangled
    assert not (home / ".gemini").exists()  # the rest is uninstalled


def test_a_host_file_left_half_written_keeps_its_backup_the_only_whole_copy(home: Path) -> None:
    claude = home / ".claude.json"
    claude.write_bytes(b'{"a":1}')
    assert cli_main("connect", "claude-code").returncode == 0
    backup = home / ".claude.json.memsync-backup"
    assert backup.read_bytes() == b'{"a":1}'
    half = b'{"a":1, "mcpServers": {"memsync": {"command": "x"}}, '  # a host killed mid-write
    claude.write_bytes(half)

    done = cli_main("uninstall")

    assert done.returncode == 3, done.stderr
    assert backup.read_bytes() == b'{"a":1}' and claude.read_bytes() == half
    kept = [line for line in done.stdout.splitlines() if str(backup) in line]
    assert kept == [
        f"kept {backup}: {claude} still names memsync or cannot be read; the backup holds it as before"
    ]

"""CLI: `memsync join`, `memsync encrypt`, `memsync key add|list|remove|rotate|export|import`."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app
from memsync.errors import MemsyncError

key_app = typer.Typer(help="The device keys an encrypted store's remote is sealed for.", no_args_is_help=True)
app.add_typer(key_app, name="key")

KeyStore = Annotated[str | None, typer.Option("--store", help="The encrypted store (default: the only one).")]


def _print(lines: list[str]) -> int:
    for line in lines:
        typer.echo(line)
    return 0


def _passphrase(action: str, confirm: bool) -> str:
    """The passphrase typed at the terminal (twice with ``confirm``), or, with no terminal on stdin, the
    first line of stdin. Raises ``MemsyncError`` naming ``action`` when input ends before one is given:
    an end of input is no interrupt (Ctrl-C still is)."""
    needed = MemsyncError(
        f"cannot {action} the key: a passphrase is needed. Type it at a terminal, "
        "or give it as the first line of stdin"
    )
    if not sys.stdin.isatty():
        # A script: one line, no confirmation; getpass would warn that the input may be echoed.
        line = sys.stdin.readline()
        if not line:
            raise needed
        return line.removesuffix("\n").removesuffix("\r")
    try:
        secret = getpass.getpass("Passphrase: ")
        while confirm and getpass.getpass("Repeat for confirmation: ") != secret:
            typer.echo("Error: the two entries do not match.", err=True)
            secret = getpass.getpass("Passphrase: ")
    except EOFError:
        raise needed from None
    return secret


@app.command("join")
def join_command(
    url: Annotated[str, typer.Argument(help="URL of the encrypted remote to join.")],
    member: Annotated[
        str | None,
        typer.Option("--member", help="The code of the member adding you, read off its screen (NNNN-NNNN)."),
    ] = None,
) -> int:
    """Print this device's public key and verification code, for a member's `memsync key add`; with
    --member, take the remote's history only if that member sealed it.

    Then join with `memsync init --remote URL --encrypt` (this device's first store) or `memsync store add
    NAME --remote URL --encrypt` (beside a store it has)."""
    from memsync.commands import keys

    return _print(keys.join(url, member))


@app.command("encrypt")
def encrypt_command(store: Annotated[str, typer.Argument(help="The store to encrypt, e.g. team.")]) -> int:
    """Switch STORE to encrypted remotes; what they hold already stays there in plaintext."""
    from memsync.commands import keys

    return _print(keys.encrypt(store))


@key_app.command("add")
def key_add_command(
    key: Annotated[str, typer.Argument(help="The new device's public key (age1... or ssh-ed25519 ...).")],
    signing: Annotated[
        str | None, typer.Argument(help="Its signing key (ed25519:...), as `memsync join` printed it.")
    ] = None,
    store: KeyStore = None,
) -> int:
    """Seal the store's remote for KEY too and take what SIGNING signs; that device reads all history from
    its next sync."""
    from memsync.commands import keys

    return _print(keys.key_add(key, signing, store))


@key_app.command("remove")
def key_remove_command(
    key: Annotated[
        str,
        typer.Argument(
            help="The device to remove: its public key, or its device id (NNNN-NNNN) as `key list` shows it."
        ),
    ],
    store: KeyStore = None,
) -> int:
    """Stop sealing the store's remote for KEY; what that device fetched stays readable to it."""
    from memsync.commands import keys

    return _print(keys.key_remove(key, store))


@key_app.command("rotate")
def key_rotate_command() -> int:
    """Give this device a new key; every encrypted store's remote is sealed for it instead of the old."""
    from memsync.commands import keys

    return _print(keys.key_rotate())


@key_app.command("list")
def key_list_command(store: KeyStore = None) -> int:
    """List the keys the store's remote is sealed for, with their verification codes."""
    from memsync.commands import keys

    return _print(keys.key_list(store))


@key_app.command("export")
def key_export_command(
    out: Annotated[Path, typer.Argument(help="The backup file to write (not overwritten).")],
) -> int:
    """Write this device's key to OUT, protected by a passphrase you type (twice) or pipe in (one line)."""
    from memsync.commands import keys

    return _print([keys.key_export(out, lambda: _passphrase("export", confirm=True))])


@key_app.command("import")
def key_import_command(
    backup: Annotated[Path, typer.Argument(help="A file `memsync key export` wrote.")],
) -> int:
    """Restore this device's key from a backup, with its passphrase typed or piped in (one line)."""
    from memsync.commands import keys

    return _print([keys.key_import(backup, lambda: _passphrase("import", confirm=False))])

"""CLI: `memsync stop`, `uninstall`, `store list|remove`, `remote list`, `config list`: seeing and undoing
what setup did, without editing `config.toml` by hand."""

from __future__ import annotations

from typing import Annotated

import typer

from memsync.cli.app import app
from memsync.cli.setup import config_app, remote_app, store_app


def _print(lines: tuple[str, ...]) -> int:
    for line in lines:
        typer.echo(line)
    return 0


@app.command("stop")
def stop_command() -> int:
    """Stop the running daemon, whatever started it (service, `memsync up`), and wait until it is gone."""
    from memsync.commands.stop import stop

    return _print(stop().lines)


@app.command("uninstall")
def uninstall_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be done; change nothing.")
    ] = False,
    purge: Annotated[
        bool,
        typer.Option("--purge", help="Also delete the stores, the config and memsync's state, once pushed."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="With --purge: delete stores even if a remote lacks commits.")
    ] = False,
) -> int:
    """Stop the daemon; remove the service, memsync's hooks and MCP entries from every agent host; list what
    stays (config, stores, backups, memory files). Exit code 3: a host file memsync cannot read still
    holds its entry (a warning names it: remove it by hand)."""
    from memsync.commands.uninstall import BY_HAND, uninstall

    done = uninstall(dry_run=dry_run, purge=purge, force=force)
    _print(done.lines)
    return BY_HAND if done.by_hand and not dry_run else 0


@store_app.command("list")
def store_list_command() -> int:
    """List the stores: name, working tree, branch, remotes, how many paths each tracks."""
    from memsync.commands import setup

    return _print(setup.store_list())


@store_app.command("remove")
def store_remove_command(name: Annotated[str, typer.Argument(help="Name of the store, e.g. team.")]) -> int:
    """Stop syncing store NAME (a running daemon drops it); its working tree, history and files stay."""
    from memsync.commands import setup

    return _print(setup.store_remove(name).lines)


@remote_app.command("list")
def remote_list_command(
    store: Annotated[
        str | None, typer.Option("--store", help="The store whose remotes to list (default: every store).")
    ] = None,
) -> int:
    """List the remotes of every store (or of --store): store, remote name, URL."""
    from memsync.commands import setup_remote

    return _print(setup_remote.remote_list(store))


@config_app.command("list")
def config_list_command() -> int:
    """Print every setting in effect (defaults included), one `key = value` per line."""
    from memsync.commands import settings

    return _print(settings.list_values())

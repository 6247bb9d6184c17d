"""CLI: `memsync init`, `up`, `track`, `untrack`, `store add`, `remote add|remove`, `config get|set`,
`service ...`, `doctor`, `demo`.

setup and doctor pull in the sync engine (the store, watchdog, the scanner): the commands import them in
their bodies, since every CLI call imports this module to list its commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memsync.cli.app import app, daemon_log_times, note_no_store

store_app = typer.Typer(help="Manage stores (git repositories memsync syncs through).", no_args_is_help=True)
remote_app = typer.Typer(help="Manage a store's remotes.", no_args_is_help=True)
service_app = typer.Typer(
    help="Run the daemon as a per-user service (systemd, launchd).", no_args_is_help=True
)
config_app = typer.Typer(
    help="Read or change one setting of the config (host, author.name, stores.NAME.branch, ...).",
    no_args_is_help=True,
)
app.add_typer(store_app, name="store")
app.add_typer(config_app, name="config")
app.add_typer(remote_app, name="remote")
app.add_typer(service_app, name="service")

# None stands for setup.DEFAULT_STORE, which the help names.
StoreName = Annotated[str | None, typer.Option("--store", help="The store to use (default: personal).")]


def _print(lines: tuple[str, ...]) -> int:
    for line in lines:
        typer.echo(line)
    return 0


@app.command("init")
def init_command(
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote",
            help="URL of the store's remote (origin): cloned if it has history, else pushed to.",
        ),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Working tree of the personal store (default: <data dir>/memsync/stores/personal).",
        ),
    ] = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Branch to sync (default: main).")] = None,
    track: Annotated[
        list[Path] | None,
        typer.Option(
            "--track", help="A memory file or role directory to track besides those found; repeatable."
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option("--host", help="This machine's name in commits and `memsync log` (default: hostname)."),
    ] = None,
    encrypt: Annotated[
        bool,
        typer.Option(
            "--encrypt",
            help="The remote receives ciphertext only, sealed for your devices. To join one from another "
            "device, run `memsync join URL` there first.",
        ),
    ] = False,
) -> int:
    """Write the config, create the personal store, track the memory found here. Safe to rerun."""
    from memsync.commands import setup

    report = setup.init(
        remote=remote, store=store, branch=branch, tracks=track or (), host=host, encrypt=encrypt
    )
    return _print(report.lines)


@app.command("up")
def up_command() -> int:
    """Initialise with defaults if there is no config, then run the daemon in the foreground."""
    from memsync.commands import setup

    daemon_log_times()
    return setup.up(typer.echo)


@app.command("track")
def track_command(
    path: Annotated[Path, typer.Argument(help="A role directory or memory file to sync.")],
    store: StoreName = None,
    as_path: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Its path in the store (default: roles/<role>, projects/<project>/<role>, "
            "memory/<name>.jsonl, ...).",
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            help="Move PATH's memory, which another store synced, into a store with another remote "
            "(that remote receives it). Without it such a track is refused, nothing written.",
        ),
    ] = False,
) -> int:
    """Start syncing PATH; what the store already holds at its store path is merged with it, nothing lost."""
    from memsync.commands import setup_track
    from memsync.commands.config_edits import DEFAULT_STORE

    return _print(setup_track.track(path, store=store or DEFAULT_STORE, as_path=as_path, yes=yes).lines)


@app.command("untrack")
def untrack_command(
    path: Annotated[Path, typer.Argument(help="A tracked path, or (--exclude) a path in a tracked folder.")],
    exclude: Annotated[
        bool,
        typer.Option("--exclude", help="Leave PATH out of the tracked folder it is in; the rest syncs on."),
    ] = False,
) -> int:
    """Stop syncing PATH; its files and its history in the store are kept."""
    from memsync.commands import setup_track

    return _print(setup_track.untrack(path, exclude=exclude).lines)


@store_app.command("add")
def store_add_command(
    name: Annotated[str, typer.Argument(help="Name of the new store, e.g. team.")],
    remote: Annotated[str | None, typer.Option("--remote", help="URL of its remote (origin).")] = None,
    path: Annotated[
        Path | None,
        typer.Option("--path", help="Its working tree (default: <user data dir>/memsync/stores/NAME)."),
    ] = None,
    branch: Annotated[
        str | None,
        typer.Option(
            "--branch", help="Branch to sync (default: the one the remote's HEAD names, else main)."
        ),
    ] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Agents' writes into it are proposals until a person approves them (memsync review).",
        ),
    ] = False,
    encrypt: Annotated[
        bool,
        typer.Option("--encrypt", help="Its remote receives ciphertext only, sealed for its members' keys."),
    ] = False,
) -> int:
    """Add a store (e.g. a team store beside the personal one); nothing goes into it until you track there."""
    from memsync.commands import setup

    report = setup.store_add(name, remote=remote, path=path, branch=branch, review=review, encrypt=encrypt)
    return _print(report.lines)


@remote_app.command("add")
def remote_add_command(
    name: Annotated[str, typer.Argument(help="Remote name, e.g. origin.")],
    url: Annotated[str, typer.Argument(help="Git URL or path of the remote repository.")],
    store: StoreName = None,
) -> int:
    """Add a remote to a store; the next cycle fetches, merges and pushes to it."""
    from memsync.commands import setup_remote
    from memsync.commands.config_edits import DEFAULT_STORE

    return _print(setup_remote.remote_add(name, url, store=store or DEFAULT_STORE).lines)


@remote_app.command("remove")
def remote_remove_command(
    name: Annotated[str, typer.Argument(help="Remote name.")],
    store: StoreName = None,
) -> int:
    """Remove a remote from a store; history already exchanged stays."""
    from memsync.commands import setup_remote
    from memsync.commands.config_edits import DEFAULT_STORE

    return _print(setup_remote.remote_remove(name, store=store or DEFAULT_STORE).lines)


@config_app.command("get")
def config_get_command(
    key: Annotated[str, typer.Argument(help="A dotted key: host, author.email, stores.personal.branch, ...")],
) -> int:
    """Print the value in effect for KEY (its default when the config does not set it)."""
    from memsync.commands import settings

    typer.echo(settings.get_value(key))
    return 0


# A value may start with "-" (a negative number reaches the range check): an unknown option is an argument.
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set_command(
    key: Annotated[str, typer.Argument(help="A dotted key: host, debounce_s, author.name, ...")],
    value: Annotated[str, typer.Argument(help="Its new value (seconds for the *_s keys).")],
) -> int:
    """Set KEY to VALUE in the config, checked as when memsync loads it; a running daemon reloads."""
    from memsync.commands import settings

    _print(settings.set_value(key, value).lines)
    note_no_store(": until then nothing is synced")
    return 0


@service_app.command("install")
def service_install_command() -> int:
    """Install the daemon as a user service (systemd user unit, launchd agent); start it where possible."""
    from memsync.commands import service

    report = service.install()
    if report.active:
        return _print(report.lines)
    # Nothing runs the daemon now: a script must not take this for an installed service.
    _print(report.lines[:-1])
    typer.echo(report.lines[-1], err=True)
    return 1


@service_app.command("uninstall")
def service_uninstall_command() -> int:
    """Stop the user service and remove its unit file."""
    from memsync.commands import service

    return _print(service.uninstall().lines)


@service_app.command("status")
def service_status_command() -> int:
    """Whether the user service is installed and running."""
    from memsync.commands import service

    return _print(service.status().lines)


@app.command("doctor")
def doctor_command() -> int:
    """Check git, identity, stores, drivers, remotes, inotify, daemon, service, clock. Exit 1 on a FAIL."""
    from memsync.commands import doctor

    checks = doctor.run_checks()
    for check in checks:
        typer.echo(check.line())
    return 1 if any(check.level == "FAIL" for check in checks) else 0


@app.command("demo")
def demo_command(
    keep: Annotated[bool, typer.Option("--keep", help="Keep the temporary directory afterwards.")] = False,
) -> int:
    """Two simulated machines sharing one remote in a temp dir: memory arriving, merges, history."""
    from memsync.commands.demo import run_demo

    return run_demo(typer.echo, keep=keep)

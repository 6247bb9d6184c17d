"""CLI: `memsync daemon`, `sync`, `status`, `log`, `resync`.

The commands import the sync engine (the store, watchdog, the scanner) in their bodies: every CLI call
imports this module to list its commands, and most calls need none of it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from memsync.base.paths import config_path
from memsync.cli.app import app, daemon_log_times

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", help="Config file (default: $MEMSYNC_CONFIG, else <user config dir>/memsync/config.toml)."
    ),
]


class _OncePerState(logging.Filter):
    """Drops a warning identical to the one just before it from the same logger.

    The store logs every failed exchange; while a remote stays offline the daemon retries with backoff,
    and the user should read about the outage once (when it starts), not on every retry.
    """

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a warning that repeats the previous one of its logger; lower levels reset that."""
        text = record.getMessage()
        if record.levelno < logging.WARNING:
            self._last.pop(record.name, None)
            return True
        if self._last.get(record.name) == text:
            return False
        self._last[record.name] = text
        return True


@app.command("daemon")
def daemon_command(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug log output.")] = False,
    once: Annotated[bool, typer.Option("--once", help="Run one cycle per store, then exit.")] = False,
    config: ConfigOption = None,
) -> int:
    """Watch the tracked memory and keep it in sync until stopped (SIGTERM/SIGINT).

    Syncs on changes, on the pull timer and after failures with backoff; SIGHUP reloads the config.
    Exit 1 when another daemon already runs for this config.
    """
    from memsync.commands.sync import run_once
    from memsync.daemon.loop import run_daemon

    if verbose:
        # memsync's own debug lines only: git/watchdog/filelock debug output would drown them.
        logging.getLogger("memsync").setLevel(logging.DEBUG)
    logging.getLogger("memsync.store").addFilter(_OncePerState())
    daemon_log_times()
    path = config or config_path()
    return run_once(path) if once else run_daemon(path)


@app.command("sync")
def sync_command(
    config: ConfigOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Show what would be committed and pushed, per store and remote, file by file (held-back "
            "lines named, not shown); change nothing.",
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print no result and no progress; only warnings and errors.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also log each step on stderr as it happens.")
    ] = False,
) -> int:
    """Run one sync cycle over every store.

    One line per store on stdout: what it committed, each remote's outcome, what it delivered; a failure
    is a warning or an error on stderr (the line names it). With -v each step is also logged on stderr as
    it happens. Exit 0 when everything is pushed, 75 when committed but not pushed, 77 when committed but
    a member removed this device from an encrypted remote, 1 on error.
    """
    if dry_run:
        return _preview(config, shown=False)
    from memsync.commands.sync import run_all_from

    if quiet:
        logging.getLogger("memsync").setLevel(logging.WARNING)
    elif verbose and not logging.getLogger().isEnabledFor(logging.INFO):  # `memsync -v sync`: DEBUG already
        # each step as it happens; without -v the result lines say it all
        logging.getLogger("memsync").setLevel(logging.INFO)
    return run_all_from(config or config_path(), None if quiet else typer.echo)


def _preview(config: Path | None, shown: bool) -> int:
    from memsync.commands.preview import preview

    for line in preview(config or config_path(), shown=shown):
        typer.echo(line)
    return 0


@app.command("diff")
def diff_command(config: ConfigOption = None) -> int:
    """Show what `memsync sync` would commit and push, with the lines themselves; change nothing.

    Per store: each tracked file's new lines, or a whole file's diff against the store; lines the secret
    scanner holds back are named by file and line, never shown; then what each remote would receive.
    """
    return _preview(config, shown=True)


@app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
    config: ConfigOption = None,
) -> int:
    """Show this machine's host, each store's tracks, remotes and what needs your attention.

    Per store: tracked paths, each remote with its last exchange and the commits waiting to be pushed
    to it, held-back secrets, entries dated in the future of this clock, both-kept files, files meeting
    directories; and whether the daemon runs."""
    from memsync.commands.status import collect_status, render_status

    status = collect_status(config or config_path())
    if as_json:
        typer.echo(json.dumps(status, indent=2, sort_keys=True))
    else:
        typer.echo(render_status(status))
    # A store whose repository is gone syncs nothing: that is for the user to fix, as in `memsync sync`.
    return 1 if any(not store["exists"] for store in status["stores"].values()) else 0


@app.command("log")
def log_command(
    target: Annotated[
        str | None, typer.Argument(help="A live or store path, or an entry id; default: all memory.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only commits at or after this date or time (2026-11-01, local time)."),
    ] = None,
    host: Annotated[str | None, typer.Option("--host", help="Only commits this host made.")] = None,
    count: Annotated[
        int | None, typer.Option("--max-count", "-n", min=1, help="Only the N newest commits.")
    ] = None,
    config: ConfigOption = None,
) -> int:
    """History of memory: which host added, superseded or deleted what, and when (read from git history).

    Newest first over every store; times in this machine's local time and zone."""
    from memsync.commands.log import LogFilter, history_of, parse_since

    shown = LogFilter(since=None if since is None else parse_since(since), host=host, limit=count)
    lines = history_of(config or config_path(), target, shown)
    if lines is None:
        typer.echo(
            f"memsync log: no history for {target} (not a tracked path, store path or entry id)", err=True
        )
        return 1
    if not lines and (host or since):  # filtered to nothing: say so, so an empty output is no puzzle
        which = " ".join(filter(None, (host and f"from host {host}", since and f"since {since}")))
        typer.echo(f"memsync log: no commit {which}", err=True)
    for line in lines:
        typer.echo(line)
    return 0


@app.command("resync")
def resync_command(
    remote: Annotated[str, typer.Argument(help="The remote whose rewritten history to adopt.")],
    store: Annotated[
        str | None, typer.Option("--store", help="The store (needed when several have REMOTE).")
    ] = None,
    adopt_unrelated: Annotated[
        bool,
        typer.Option(
            "--adopt-unrelated",
            help="Also adopt a REMOTE whose history is unrelated to the store (another repository).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> int:
    """Adopt REMOTE's history after it was rewritten (force-pushed) and put local memory back on top.

    The lines a `memsync purge` there removed stay removed. A REMOTE unrelated to the store (no commit in
    common, another store id) is refused unless --adopt-unrelated."""
    from memsync.commands.resync import resync

    typer.echo(resync(config or config_path(), remote, store, adopt_unrelated=adopt_unrelated))
    return 0

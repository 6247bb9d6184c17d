"""CLI: `memsync daemon`, `sync`, `status`, `log`, `resync` (issue 4 "CLI").

The commands import the sync engine (GitPython, watchdog, the scanner) in their bodies: every CLI call
imports this module to list its commands, and most calls need none of it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from memsync.cli.app import app
from memsync.config import Config, config_path, load_config
from memsync.hosts.claude_code import partly_loaded
from memsync.wording import plural

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
    from memsync.daemon import run_daemon

    if verbose:
        # memsync's own debug lines only: git/watchdog/filelock debug output would drown them.
        logging.getLogger("memsync").setLevel(logging.DEBUG)
    logging.getLogger("memsync.store").addFilter(_OncePerState())
    return run_daemon(config or config_path(), once=once)


@app.command("sync")
def sync_command(
    config: ConfigOption = None,
) -> int:
    """Run one sync cycle over every store.

    Exit 0 when everything is pushed, 75 when committed but not pushed, 1 on error.
    """
    from memsync.daemon import run_all_from

    return run_all_from(config or config_path())


@app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
    config: ConfigOption = None,
) -> int:
    """Show stores, remotes, last exchange, unpushed commits, held-back secrets, entries dated in the
    future of this clock, both-kept files, files meeting directories, daemon."""
    from memsync.cycle import collect_status

    status = collect_status(config or config_path())
    if as_json:
        typer.echo(json.dumps(status, indent=2, sort_keys=True))
    else:
        typer.echo(_render_status(status))
    # A store whose repository is gone syncs nothing: that is for the user to fix, as in `memsync sync`.
    return 1 if any(not store["exists"] for store in status["stores"].values()) else 0


def _render_status(status: dict[str, Any]) -> str:
    daemon = status["daemon"]
    lines = [
        f"host: {status['host']} (this machine, as commits name it)",
        f"daemon: {'running (PID ' + str(daemon['pid']) + ')' if daemon['running'] else 'not running'}",
    ]
    for name, store in status["stores"].items():
        if not store["exists"]:
            lines.append(
                f"store {name}: missing, no git repository at {store['path']}. Run `memsync init` "
                f"to create it, or fix stores.{name}.path in the config"
            )
            continue
        lines.append(f"store {name}: {store['path']} (branch {store['branch']}, {store['size_bytes']} bytes)")
        lines.append(f"  last cycle: {store.get('last_cycle') or 'never'}")
        for track in store["tracks"]:
            held = plural(track["files"], "file") if track["exists"] else "does not exist yet"
            lines.append(f"  tracking {track['path']} as {track['store_path']} ({held})")
            lines.extend(f"    left out: {path}" for path in track["excludes"])
        if not store["tracks"]:
            lines.append("  tracking nothing: `memsync track PATH` adds memory")
        for remote, info in store["remotes"].items():
            state = f"last exchange {info.get('last_success') or 'never'}"
            if info.get("last_error"):
                state += f"; last error: {info['last_error']}"
            lines.append(f"  remote {remote} ({info['url']}): {state}")
        lines.append(f"  commits waiting to be pushed: {store['unpushed']}")
        for secret in store["held_back_secrets"]:
            lines.append(f"  held back (secret): {secret['file']}:{secret['line']} ({secret['detector']})")
        for entry in store["future_entries"]:
            lines.append(f"  dated in the future: {entry['file']}: {entry['advice']}")
        for path in store["both_kept"]:
            lines.append(f"  both versions kept, resolve by editing: {path}")
        for path in store["set_aside"]:
            lines.append(f"  moved aside, a directory took its name: {path} (merge it by hand, delete it)")
        for clash in store["clashes"]:
            lines.append(f"  not synced, a file meets a directory: {clash['advice']}")
        for path in store["untracked"]:
            lines.append(f"  in the store, not tracked here: {path}")
        for index in store["partly_loaded"]:
            lines.append(f"  {partly_loaded(index['file'], index['lines'], index['bytes'])}")
    return "\n".join(lines)


@app.command("log")
def log_command(
    target: Annotated[
        str | None, typer.Argument(help="A live or store path, or an entry id; default: all memory.")
    ] = None,
    config: ConfigOption = None,
) -> int:
    """History of memory: which host added, superseded or deleted what, and when (read from git history)."""
    from memsync.cycle import history

    path = config or config_path()
    if target is None:
        lines = history(path, target)
    else:
        place = _place(load_config(path), target)
        # git refuses a path outside the store's worktree with an error of its own; nothing to ask it there.
        lines = [] if place == "outside" else history(path, target)
        if not lines and place != "exists":
            typer.echo(
                f"memsync log: no history for {target} (not a tracked path, store path or entry id)", err=True
            )
            return 1
    for line in lines:
        typer.echo(line)
    return 0


def _place(config: Config, target: str) -> Literal["exists", "inside", "outside"]:
    """Where `memsync log`'s ``target`` is, read as a live path (from here) or a store path (from a store's
    worktree): an existing tracked live path or store path; else inside a tracked path or a store (a
    deleted file, or an entry id); else outside all of them."""
    given = Path(target).expanduser()
    live = Path(os.path.abspath(given))
    place: Literal["exists", "inside", "outside"] = "outside"
    for store in config.stores.values():
        in_store = Path(os.path.normpath(store.path / given))
        for candidate, root in [(in_store, store.path), *((live, track.live) for track in store.tracks)]:
            if candidate.is_relative_to(root):
                if candidate.exists():
                    return "exists"
                place = "inside"
    return place


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
    """Adopt REMOTE's history after it was rewritten (force-pushed) and re-publish local memory on top,
    without the lines a `memsync purge` there removed. A REMOTE unrelated to the store (no commit in
    common, another store id) is refused unless --adopt-unrelated."""
    from memsync.cycle import resync

    typer.echo(resync(config or config_path(), remote, store, adopt_unrelated=adopt_unrelated))
    return 0

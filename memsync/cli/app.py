"""The typer application and the one edge that owns exit codes.

Exit codes: 0 success, 1 the user must act (``MemsyncError``), 2 usage error (click's),
3 unexpected error (traceback written to a crash log that the message names), 130 interrupted.
Commands may document further codes (``memsync sync`` returns 75 when committed but not pushed).
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path

import typer
from typer._click import Command
from typer._click.globals import get_current_context

import memsync
from memsync.base.paths import state_dir
from memsync.errors import MemsyncError

EXIT_USER = 1
EXIT_UNEXPECTED = 3
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="memsync",
    help="Keep AI-agent memory in sync between machines, people and agents through git.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # `--install-completion` / `--show-completion`: the shell completes commands, options and paths.
    add_completion=True,
)

# The commands a newcomer needs first lead `memsync --help`; the others follow in the order they were
# registered.
FIRST_COMMANDS = ("init", "up", "status", "sync")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memsync {memsync.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More log output (-vv for debug)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only warnings and errors."),
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Keep AI-agent memory in sync between machines, people and agents through git."""
    # A one-shot command says its result on stdout: its progress lines are for -v (a daemon's, see
    # daemon_log_times, are its only output and stay on).
    level = logging.DEBUG if verbose and not quiet else logging.WARNING
    logging.basicConfig(level=level, format=_LINE, stream=sys.stderr)


_LINE = "%(levelname)s %(name)s: %(message)s"


def under_journald() -> bool:
    """True when stderr is journald's stream: ``JOURNAL_STREAM`` (``DEVICE:INODE``, set by systemd) names
    stderr's device and inode. A child that inherited the variable but writes elsewhere is not."""
    device, _, inode = os.environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        stat = os.fstat(sys.stderr.fileno())
        return (int(device), int(inode)) == (stat.st_dev, stat.st_ino)
    except (ValueError, OSError):
        return False


def daemon_log_times() -> None:
    """Log what a long-running process (the daemon) does from INFO up (unless -q), and start each line
    with its local date and time and zone, unless journald writes them (it timestamps each line itself)."""
    root = logging.getLogger()
    context = get_current_context(silent=True)
    quiet = context is not None and bool(context.find_root().params.get("quiet"))
    if not quiet and root.level > logging.INFO:
        root.setLevel(logging.INFO)
    if under_journald():
        return
    for handler in logging.getLogger().handlers:
        handler.setFormatter(logging.Formatter(f"%(asctime)s {_LINE}", datefmt="%Y-%m-%d %H:%M:%S%z"))


def note_no_store(until: str) -> None:
    """Say on stderr, before `memsync init`, that what a command just set up does nothing ``until`` then
    (``config.no_store_note``)."""
    from memsync.config.file import no_store_note

    note = no_store_note(until=until)
    if note is not None:
        typer.echo(note, err=True)


def crash_log_path() -> Path:
    """Where an unexpected error's traceback goes: ``$XDG_STATE_HOME/memsync/crash.log``."""
    return state_dir() / "crash.log"


def _write_crash_log(exc: BaseException) -> Path:
    path = crash_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        log.write(f"--- {datetime.now(UTC).isoformat()} memsync {memsync.__version__} argv={sys.argv!r}\n")
        log.write("".join(traceback.format_exception(exc)))
    return path


# A value's placeholder in help, by the type typer would show (``<str>``): one upper-case style throughout.
_PLACEHOLDERS = {"str": "TEXT", "int": "N", "float": "NUMBER", "path": "PATH"}


def _placeholders(command: Command) -> None:
    """Give every parameter of ``command`` and its subcommands (``--help`` included) a placeholder in one
    style: none for a flag or a count, ``TEXT``, ``N``, ``NUMBER``, ``PATH`` (or a choice's values
    ``a|b``) for an option's value, the upper-case name for an argument (``{TEXT}`` in the usage line
    when it is required). A metavar a command sets itself (``ID``) is kept.

    typer 0.29's rich help prints each option's type, flags too (``--quiet <bool>``, ``--help <bool>``,
    ``-v <int>``), and a lower-case name for an argument: its panel skips the type only when a metavar is
    set. The help option is made here, once, so the one the parser later uses is this one.
    """
    ctx = typer.Context(command)
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if isinstance(param, typer.core.TyperOption) and (param.is_flag or param.count):
            param.metavar = ""
        elif isinstance(param, typer.core.TyperArgument):
            param.metavar = param.metavar or (param.name or "value").upper()
            # The argument's name is its placeholder: its row shows no type beside it (typer has no option).
            setattr(param, "display_type_rich", lambda ctx: None)  # noqa: B010
        elif param.metavar is not None:
            continue
        elif isinstance(param, typer.core.TyperOption):
            shown = (param.display_type(ctx) or "").strip("<>").removeprefix("list[").removesuffix("]")
            # A choice's values are typed as shown (`prompt`, `a|b`), not placeholders.
            choice = param.type_descriptor.is_choice
            param.metavar = shown if choice else _PLACEHOLDERS.get(shown, shown.upper())
    for sub in getattr(command, "commands", {}).values():
        _placeholders(sub)


def _newcomers_first(command: Command) -> None:
    """Reorder the top-level commands of ``command`` so that :data:`FIRST_COMMANDS` come first."""
    commands: dict[str, Command] = getattr(command, "commands", {})
    ordered = {name: commands[name] for name in FIRST_COMMANDS if name in commands}
    ordered.update(commands)
    commands.clear()
    commands.update(ordered)


# A paragraph whose line ends are meant: a list item or an indented line starts one of its lines.
_LAID_OUT = re.compile(r"^(?:[ \t]|[-*+] |\d+[.)] )", re.MULTILINE)


def _unwrap(help_text: str) -> str:
    """``help_text`` with each prose paragraph on one line, so help wraps it to the terminal: typer's
    rich help keeps a docstring's source line ends (since 0.20). Paragraphs marked ``\\b`` (click's
    "no rewrap") or laid out as a list or indented block are kept as written."""
    paragraphs = inspect.cleandoc(help_text).split("\n\n")
    return "\n\n".join(
        text if text.startswith("\b") or _LAID_OUT.search(text) else " ".join(text.split("\n"))
        for text in paragraphs
    )


def _help_unwrapped(command: Command) -> None:
    """Unwrap (:func:`_unwrap`) the help of ``command`` and of every subcommand, in place."""
    if command.help:
        command.help = _unwrap(command.help)
    for sub in getattr(command, "commands", {}).values():
        _help_unwrapped(sub)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the process exit code."""
    command = typer.main.get_command(app)
    _placeholders(command)
    _newcomers_first(command)
    _help_unwrapped(command)
    try:
        result = command.main(args=argv, prog_name="memsync", standalone_mode=False)
    except MemsyncError as exc:
        typer.echo(f"memsync: {exc}", err=True)
        return EXIT_USER
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("", err=True)
        return EXIT_INTERRUPTED
    except typer.TyperException as exc:  # usage errors: typer has shown the usage, we add the reason
        if isinstance(exc, typer.BadParameter):
            # typer validates through pydantic, whose wording would lead the CLI's line
            exc.message = exc.message.removeprefix("Value error, ")
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"memsync: {exc.format_message()}", err=True)
        return exc.exit_code
    except Exception as exc:  # the one place that turns any bug into exit 3 and a crash log
        path = _write_crash_log(exc)
        typer.echo(f"memsync: unexpected error: {exc!r}. The traceback is in {path}", err=True)
        return EXIT_UNEXPECTED
    return result if isinstance(result, int) else 0

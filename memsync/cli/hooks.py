"""CLI: `memsync hooks install|uninstall|status` (memsync's hooks in an agent host's settings) and
`memsync hook session-start|prompt-context|sync-now` (what those hooks run; hosts call the lighter
``python -P -m memsync.hook``, see :mod:`memsync.hook`)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from memsync.base.paths import config_path
from memsync.cli.app import app, note_no_store
from memsync.cli.sync import ConfigOption

hooks_app = typer.Typer(
    help="Install memsync's hooks into an agent host's settings: peers' memory at session start.",
    no_args_is_help=True,
)
hook_app = typer.Typer(help="What memsync's agent-host hooks run (hosts call these).", no_args_is_help=True)
app.add_typer(hooks_app, name="hooks")
app.add_typer(hook_app, name="hook")


class Host(StrEnum):
    """The agent hosts whose hook settings memsync edits."""

    claude_code = "claude-code"
    codex = "codex"
    gemini_cli = "gemini-cli"
    qwen_code = "qwen-code"
    cursor = "cursor"
    copilot_cli = "copilot-cli"


HostArgument = Annotated[Host, typer.Argument(help="The agent host.")]
ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="A project directory: its own hook file (.claude/settings.json, ...) instead of the user's.",
    ),
]
AgentOption = Annotated[Host, typer.Option("--agent", help="The host running the hook.")]


@hooks_app.command("install")
def install_command(host: HostArgument, project: ProjectOption = None) -> int:
    """Add memsync's hooks to HOST's settings, keeping every other hook (the previous file is backed up).

    At session start the agent gets what other machines and agents added since its last session; the
    end of a turn, of a session and a compaction ask the daemon to sync now. Running it again changes
    nothing.
    """
    from memsync.commands.connect import connect

    for line in connect(host.value, project, mcp=False):
        typer.echo(line)
    note_no_store(": until then the hooks have no memory to bring or sync")
    return 0


@hooks_app.command("uninstall")
def uninstall_command(host: HostArgument, project: ProjectOption = None) -> int:
    """Remove memsync's hooks from HOST's settings; nothing else changes."""
    from memsync.commands.connect import disconnect

    for line in disconnect(host.value, project, mcp=False):
        typer.echo(line)
    return 0


@hooks_app.command("status")
def status_command(project: ProjectOption = None) -> int:
    """Show, per host, which memsync hooks are installed and whether they run this memsync."""
    from memsync.commands import hooks

    for line in hooks.status(project=project):
        typer.echo(line)
    return 0


@hook_app.command("session-start")
def session_start_command(agent: AgentOption = Host.claude_code, config: ConfigOption = None) -> int:
    """Print what peers added since this agent's last session, as a SessionStart hook's JSON output.

    Reads the host's hook input (JSON with cwd and source) on stdin when there is one. Prints nothing
    when nothing was added.
    """
    from memsync.hook import _payload, run

    out = run("session-start", agent.value, config, _payload())
    if out:
        typer.echo(out)
    return 0


@hook_app.command("prompt-context")
def prompt_context_command(agent: AgentOption = Host.claude_code, config: ConfigOption = None) -> int:
    """Print what recall finds for a session's first prompt, as a UserPromptSubmit hook's JSON output.

    Reads the host's hook input (JSON with session_id, cwd and prompt) on stdin. Prints nothing for a
    later prompt of the session, or when nothing is found.
    """
    from memsync.hook import _payload, run

    out = run("prompt-context", agent.value, config, _payload())
    if out:
        typer.echo(out)
    return 0


@hook_app.command("sync-now")
def sync_now_command(config: ConfigOption = None) -> int:
    """Ask the running daemon to sync now; with no daemon, publish and commit once (no exchange)."""
    from memsync.hook import sync_now

    print(sync_now(config or config_path()), file=sys.stderr)
    return 0

"""memsync's hooks in an agent host's hook settings: which handlers, where, and editing them (DESIGN
"Agent hosts"; the commands that drive this are in ``commands.hooks``).

Two shapes, each host's own (from its documentation and source):

- matcher groups: ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...,
  "timeout": t}]}]}}``: Claude Code (``~/.claude/settings.json``, a project's ``.claude/settings.json``),
  Codex (``~/.codex/hooks.json``, ``.codex/hooks.json``), Gemini CLI and Qwen Code (their
  ``settings.json``, where their MCP servers are too; timeouts in milliseconds; Gemini CLI matches a
  SessionStart matcher to the source exactly, so memsync gives it none);
- a list per event, in a file with ``"version": 1``: Cursor (``~/.cursor/hooks.json``,
  ``.cursor/hooks.json``: ``{"command": ..., "timeout": s}``), Copilot CLI (a file of memsync's own,
  ``~/.copilot/hooks/memsync.json`` or ``.github/hooks/memsync.json``: ``{"type": "command", "bash": ...,
  "timeoutSec": s}``).

memsync adds one group (or list item) of its own per event and never touches another: uninstall removes
only handlers whose command runs ``memsync.hook``, and the containers that leaves empty (but for those the
file held before memsync's first edit), so a file comes back byte for byte (``hosts.settings_file`` keeps
the rest and backs the previous file up).

The commands run this interpreter (``sys.executable``) with ``-P``: the same memsync, and nothing
imported from the project directory the host runs hooks in. They fail open: once memsync is
uninstalled (``pip uninstall``: the module is gone; ``pipx uninstall``: the interpreter too) a hook
exits 0 silently, so the host shows no error at every session. Commands of the earlier form (``-P -m
memsync.hook``) are still recognised, so installing again or uninstalling replaces or removes them.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from memsync.errors import MemsyncError
from memsync.hosts import claude_code, codex, registry

Host = Literal["claude-code", "codex", "gemini-cli", "qwen-code", "cursor", "copilot-cli"]
HOSTS: tuple[Host, ...] = get_args(Host)
SESSION_SOURCES = "startup|resume|clear|compact"
SESSION_TIMEOUT_S = 10
# A first prompt's hook that also gives the session-start context (START_ON_FIRST_PROMPT) does both
# jobs in one process: a loaded machine took over 10 s, and the host then drops the context.
FIRST_PROMPT_TIMEOUT_S = 30
SYNC_TIMEOUT_S = 30
_OURS = re.compile(r'(?:^|\s)-m\s+memsync\.hook(?:\s|$)|__import__\("memsync\.hook"\)')
# Run the hook if memsync is importable, else exit 0: `-m memsync.hook` would fail loudly without it.
_FAIL_OPEN = (
    "import sys, importlib.util as u; "
    'sys.exit(u.find_spec("memsync") and __import__("memsync.hook").hook.main())'
)


@dataclass(frozen=True)
class Handler:
    """One hook memsync installs: the host ``event``, its ``matcher`` (None: every occurrence), the
    ``command`` and its ``timeout`` in seconds."""

    event: str
    matcher: str | None
    command: str
    timeout: int


def hook_command(action: str, host: Host) -> str:
    """The shell command a host runs for memsync's hook ``action`` (``memsync.hook.ACTIONS``):
    this interpreter runs ``memsync.hook``; exit 0 and nothing printed when the interpreter or memsync
    is gone (see the module doc)."""
    python = shlex.quote(sys.executable)
    return f"[ -x {python} ] || exit 0; exec {python} -P -c {shlex.quote(_FAIL_OPEN)} {action} --agent {host}"


def interpreter(command: str) -> str:
    """The Python interpreter the hook ``command`` (one of memsync's, either form) runs."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: not a command memsync wrote
        words = command.split()
    return words[2] if words[:2] == ["[", "-x"] and len(words) > 2 else (words or [""])[0]


@dataclass(frozen=True)
class Style:
    """How a host writes one handler: in matcher ``groups`` (else a flat list per event), the key of its
    command, the key of its timeout, how many of its units make a second, and whether it names its
    type."""

    groups: bool
    command_key: str = "command"
    timeout_key: str = "timeout"
    per_second: int = 1
    typed: bool = True  # the handler says "type": "command"


# The session-start event, the events that end a turn, a session, and come before a compaction.
_EVENTS: dict[Host, tuple[str, tuple[str, ...]]] = {
    "claude-code": ("SessionStart", ("Stop", "SessionEnd", "PreCompact")),
    "codex": ("SessionStart", ("Stop", "PreCompact")),  # Codex has no SessionEnd
    # Gemini CLI (0.61) fires PreCompress before every model call, compression or not: no sync there.
    "gemini-cli": ("SessionStart", ("AfterAgent", "SessionEnd")),
    "qwen-code": ("SessionStart", ("Stop", "SessionEnd", "PreCompact")),
    "cursor": ("sessionStart", ("stop", "sessionEnd", "preCompact")),
    "copilot-cli": ("sessionStart", ("agentStop", "sessionEnd", "preCompact")),
}
_STYLES: dict[Host, Style] = {
    "claude-code": Style(True),
    "codex": Style(True),
    "gemini-cli": Style(True, per_second=1000),
    "qwen-code": Style(True, per_second=1000),
    "cursor": Style(False, typed=False),
    "copilot-cli": Style(False, "bash", "timeoutSec"),
}
# The event of a submitted prompt, where a host has one whose hook may add context.
_PROMPT_EVENTS: dict[Host, str] = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "qwen-code": "UserPromptSubmit",
}
# Hosts that drop a session-start hook's context (Qwen Code 0.15 fires SessionStart in its TUI only and
# reads none of its output): the first prompt's hook gives it instead, and no session-start hook is
# installed (it would take the session's start from the one that shows it).
START_ON_FIRST_PROMPT: tuple[Host, ...] = ("qwen-code",)
# A file memsync owns whole (deleted once it holds nothing): Copilot CLI reads every file of its folder.
OWN_FILE = "memsync.json"


def handlers(host: Host) -> tuple[Handler, ...]:
    """What memsync installs for ``host``: session start prints what peers added; a session's first
    prompt (where the host has the event) what recall finds for it, after what peers added for a host
    of ``START_ON_FIRST_PROMPT``; the end of a turn, of a session and a compaction ask for a sync now
    (each host's own event names; timeouts in its unit)."""
    start, ends = _EVENTS[host]
    unit = _STYLES[host].per_second
    matcher = SESSION_SOURCES if host in ("claude-code", "codex") else None
    first = []
    if host not in START_ON_FIRST_PROMPT:
        first.append(Handler(start, matcher, hook_command("session-start", host), SESSION_TIMEOUT_S * unit))
    if host in _PROMPT_EVENTS:
        command = hook_command("prompt-context", host)
        seconds = FIRST_PROMPT_TIMEOUT_S if host in START_ON_FIRST_PROMPT else SESSION_TIMEOUT_S
        first.append(Handler(_PROMPT_EVENTS[host], None, command, seconds * unit))
    sync = hook_command("sync-now", host)
    return (*first, *(Handler(event, None, sync, SYNC_TIMEOUT_S * unit) for event in ends))


def settings_path(host: Host, project: Path | None = None) -> Path:
    """The hook settings file of ``host``: the user's, or the one of the project directory ``project``."""
    if host == "codex":
        return codex.hooks_file(project)
    if host in ("gemini-cli", "qwen-code"):  # their settings.json, beside their MCP servers
        return registry.user_file(host) if project is None else registry.project_file(host, project)
    if host == "cursor":
        return (project if project is not None else Path.home()) / ".cursor" / "hooks.json"
    if host == "copilot-cli":
        if project is not None:
            return project / ".github" / "hooks" / OWN_FILE
        home = os.environ.get("COPILOT_HOME")
        return (Path(home).expanduser() if home else Path.home() / ".copilot") / "hooks" / OWN_FILE
    return (project / ".claude" if project is not None else claude_code.claude_dir()) / "settings.json"


def is_ours(handler: object) -> bool:
    """True for a hook handler (a JSON object) whose command runs memsync's hook entry point."""
    return isinstance(handler, dict) and bool(_OURS.search(_command(handler)))


def _command(handler: dict[str, Any]) -> str:
    command = handler.get("command", handler.get("bash"))
    return command if isinstance(command, str) else ""


def _hooks_table(settings: dict[str, Any], path: Path) -> dict[str, Any] | None:
    table = settings.get("hooks")
    if table is None:
        return None
    if not isinstance(table, dict) or not all(isinstance(groups, list) for groups in table.values()):
        raise MemsyncError(
            f"cannot edit hooks in {path}: `hooks` is not an object of event lists. "
            "Fix the file (see the host's hooks reference), then retry"
        )
    return table


def _members(item: object) -> list[Any]:
    """The handlers of one item of an event list: a matcher group's ``hooks``, or the item itself."""
    if not isinstance(item, dict):
        return []
    inner = item.get("hooks")
    if inner is None:
        return [item]
    return inner if isinstance(inner, list) else []


def installed(settings: dict[str, Any], path: Path) -> list[Handler]:
    """memsync's handlers in ``settings`` (read from ``path``, for messages), in file order."""
    found: list[Handler] = []
    for event, items in (_hooks_table(settings, path) or {}).items():
        for item in items:
            matcher = item.get("matcher") if isinstance(item, dict) else None
            for handler in _members(item):
                if is_ours(handler):
                    timeout = handler.get("timeout", handler.get("timeoutSec"))
                    found.append(
                        Handler(
                            event,
                            matcher if isinstance(matcher, str) else None,
                            _command(handler),
                            timeout if isinstance(timeout, int) else 0,
                        )
                    )
    return found


def others(settings: dict[str, Any], path: Path) -> int:
    """How many hook handlers in ``settings`` are not memsync's."""
    return sum(
        1
        for items in (_hooks_table(settings, path) or {}).values()
        for item in items
        for handler in _members(item)
        if not is_ours(handler)
    )


def remove_ours(settings: dict[str, Any], path: Path, held: dict[str, Any] | None = None) -> int:
    """Remove memsync's handlers from ``settings`` in place, and the groups, event lists and ``hooks``
    object (with a ``version`` then alone) that this leaves empty, but for an event list or ``hooks``
    object the file ``held`` before memsync's first edit; returns how many handlers went. Everything
    else keeps its place."""
    theirs = (held or {}).get("hooks")
    theirs = theirs if isinstance(theirs, dict) else {}
    table = _hooks_table(settings, path)
    if table is None:
        return 0
    removed = 0
    for event in list(table):
        items: list[Any] = []
        touched = False
        for item in table[event]:
            members = _members(item)
            if not any(is_ours(h) for h in members):
                items.append(item)
                continue
            kept = [h for h in members if not is_ours(h)]
            removed += len(members) - len(kept)
            touched = True
            if kept:  # only a group holds others
                items.append({**item, "hooks": kept})
        if touched:
            if items or event in theirs:
                table[event] = items
            else:
                del table[event]
    if removed and not table and "hooks" not in (held or {}):
        del settings["hooks"]
        if settings == {"version": 1}:  # what memsync added to a new file of a list-per-event host
            del settings["version"]
    return removed


def add_ours(settings: dict[str, Any], path: Path, host: Host) -> None:
    """Put ``host``'s handlers into ``settings`` in place, one matcher group (or list item) of memsync's
    own per handler, after removing memsync's earlier handlers (another interpreter path, say)."""
    remove_ours(settings, path)  # also refuses a `hooks` value of another shape
    style = _STYLES[host]
    if not style.groups and "hooks" not in settings:
        settings.setdefault("version", 1)
    table = settings.setdefault("hooks", {})
    for handler in handlers(host):
        entry: dict[str, Any] = {"type": "command"} if style.typed else {}
        entry |= {style.command_key: handler.command, style.timeout_key: handler.timeout}
        if style.groups:
            group: dict[str, Any] = {} if handler.matcher is None else {"matcher": handler.matcher}
            entry = {**group, "hooks": [entry]}
        table.setdefault(handler.event, []).append(entry)

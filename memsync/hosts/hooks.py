"""memsync's hooks in an agent host's hook settings: which handlers, where, and editing them (DESIGN
"Agent hosts"; the commands that drive this are in ``commands.hooks``).

Claude Code (``~/.claude/settings.json`` or a project's ``.claude/settings.json``) and Codex
(``~/.codex/hooks.json`` or a project's ``.codex/hooks.json``) read hooks in one shape: ``{"hooks":
{EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": s}]}]}}``. memsync
adds one matcher group of its own per event and never touches another group: uninstall removes only
handlers whose command runs ``memsync.hook``, and the containers that leaves empty, so a file comes back
byte for byte (``hosts.settings_file`` keeps the rest and backs the previous file up).

The commands run this interpreter (``sys.executable``) with ``-P``: the same memsync, and nothing
imported from the project directory the host runs hooks in. They fail open: once memsync is
uninstalled (``pip uninstall``: the module is gone; ``pipx uninstall``: the interpreter too) a hook
exits 0 silently, so the host shows no error at every session. Commands of the earlier form (``-P -m
memsync.hook``) are still recognised, so installing again or uninstalling replaces or removes them.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memsync.errors import MemsyncError
from memsync.hosts import claude_code, codex

Host = Literal["claude-code", "codex"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex")
SESSION_SOURCES = "startup|resume|clear|compact"
SESSION_TIMEOUT_S = 10
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
    """The shell command a host runs for memsync's hook ``action`` (``session-start`` or ``sync-now``):
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


def handlers(host: Host) -> tuple[Handler, ...]:
    """What memsync installs for ``host``: SessionStart prints what peers added; the end of a turn, of
    a session and a compaction ask for a sync now. Codex has no SessionEnd event."""
    start = Handler("SessionStart", SESSION_SOURCES, hook_command("session-start", host), SESSION_TIMEOUT_S)
    sync = hook_command("sync-now", host)
    ends = ("Stop", "SessionEnd", "PreCompact") if host == "claude-code" else ("Stop", "PreCompact")
    return (start, *(Handler(event, None, sync, SYNC_TIMEOUT_S) for event in ends))


def settings_path(host: Host, project: Path | None = None) -> Path:
    """The hook settings file of ``host``: the user's, or the one of the project directory ``project``."""
    if host == "codex":
        return codex.hooks_file(project)
    return (project / ".claude" if project is not None else claude_code.claude_dir()) / "settings.json"


def is_ours(handler: object) -> bool:
    """True for a hook handler (a JSON object) whose command runs memsync's hook entry point."""
    return (
        isinstance(handler, dict)
        and isinstance(handler.get("command"), str)
        and bool(_OURS.search(handler["command"]))
    )


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


def installed(settings: dict[str, Any], path: Path) -> list[Handler]:
    """memsync's handlers in ``settings`` (read from ``path``, for messages), in file order."""
    found: list[Handler] = []
    for event, groups in (_hooks_table(settings, path) or {}).items():
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            for handler in group["hooks"]:
                if is_ours(handler):
                    timeout = handler.get("timeout")
                    found.append(
                        Handler(
                            event, matcher, handler["command"], timeout if isinstance(timeout, int) else 0
                        )
                    )
    return found


def others(settings: dict[str, Any], path: Path) -> int:
    """How many hook handlers in ``settings`` are not memsync's."""
    return sum(
        1
        for groups in (_hooks_table(settings, path) or {}).values()
        for group in groups
        for handler in (group.get("hooks") if isinstance(group, dict) else None) or []
        if not is_ours(handler)
    )


def remove_ours(settings: dict[str, Any], path: Path) -> int:
    """Remove memsync's handlers from ``settings`` in place, and the groups, event lists and ``hooks``
    object that this leaves empty; returns how many handlers went. Everything else keeps its place."""
    table = _hooks_table(settings, path)
    if table is None:
        return 0
    removed = 0
    for event in list(table):
        groups: list[Any] = []
        touched = False
        for group in table[event]:
            handlers_ = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers_, list) and any(is_ours(h) for h in handlers_):
                kept = [h for h in handlers_ if not is_ours(h)]
                removed += len(handlers_) - len(kept)
                touched = True
                if kept:
                    groups.append({**group, "hooks": kept})
                continue
            groups.append(group)
        if touched:
            if groups:
                table[event] = groups
            else:
                del table[event]
    if removed and not table:
        del settings["hooks"]
    return removed


def add_ours(settings: dict[str, Any], path: Path, wanted: Sequence[Handler]) -> None:
    """Put ``wanted`` into ``settings`` in place, one matcher group of memsync's own per handler, after
    removing memsync's earlier handlers (another interpreter path, say)."""
    remove_ours(settings, path)  # also refuses a `hooks` value of another shape
    table = settings.setdefault("hooks", {})
    for handler in wanted:
        group: dict[str, Any] = {} if handler.matcher is None else {"matcher": handler.matcher}
        group["hooks"] = [{"type": "command", "command": handler.command, "timeout": handler.timeout}]
        table.setdefault(handler.event, []).append(group)

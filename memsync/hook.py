"""The light entry point agent hosts run as hooks: ``memsync.hook``'s ``main`` with ``ACTION --agent
HOST``, run by this interpreter only while memsync is installed (``hosts.hooks.hook_command``; DESIGN
"Agent hosts"; installed by ``memsync hooks install``).

- ``session-start`` prints what peers added since the agent's last session
  (``memsync.commands.session_context``) in the shape the host reads on stdout: ``{"hookSpecificOutput":
  {"hookEventName": "SessionStart", "additionalContext": ...}}`` (Claude Code, Codex, Gemini CLI, Qwen
  Code), ``{"additionalContext": ...}`` (Copilot CLI), ``{"additional_context": ...}`` (Cursor); nothing
  when nothing was added. The project is the hook input's ``cwd`` (Cursor: its first
  ``workspace_roots``), else the directory the host runs the hook in.
- ``prompt-context`` (a prompt submitted; Claude Code, Codex, Qwen Code) prints, for the first prompt
  of a session only (the input's ``session_id``), what recall finds for the prompt
  (``memsync.commands.prompt_context``; for Qwen Code, which drops a session-start hook's output, the
  session-start context first) as ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
  "additionalContext": ...}}``; nothing for later prompts, for no hit, or without a ``session_id``.
- ``sync-now`` (end of a turn, of a session, before a compaction) sends the running daemon SIGUSR1 and
  returns at once; with no daemon it returns at once too and a detached child publishes and commits once
  (no exchange), waiting at most ``SYNC_LOCK_WAIT_S`` for another cycle. It prints nothing (Codex reads
  a Stop hook's stdout as JSON).

A hook never fails the agent's session: problems are one line on stderr and the exit code is 0. Only
what an action needs is imported (no typer, and the store only for a sync without a daemon); ``-P``
keeps the project directory the host runs hooks in off ``sys.path``.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
from pathlib import Path
from typing import Any

from memsync.base.paths import config_path
from memsync.daemon.instance import running_daemon_pid
from memsync.errors import MemsyncError
from memsync.formats.bounded_json import decode_object

ACTIONS = ("session-start", "prompt-context", "sync-now")
AGENTS = ("claude-code", "codex", "gemini-cli", "qwen-code", "cursor", "copilot-cli")
SYNC_LOCK_WAIT_S = 5.0
STDIN_WAIT_S = 0.5
STDIN_MAX_BYTES = 1 << 20


def run(action: str, agent: str, config: Path | None = None, payload: dict[str, Any] | None = None) -> str:
    """Run hook ``action`` for ``agent`` with the host's hook input ``payload`` (``cwd``, ``source``,
    ``session_id``, ``prompt``);
    returns what to print on stdout ("" for nothing). Raises ``MemsyncError`` (e.g. no config) and
    ``OSError``."""
    payload = payload or {}
    path = config or config_path()
    if action == "sync-now":
        sync_now(path)
        return ""
    from memsync.tracks.resolve import load_tracks

    cwd, source, roots = payload.get("cwd"), payload.get("source"), payload.get("workspace_roots")
    if not (isinstance(cwd, str) and cwd):
        cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else os.getcwd()
    if action == "prompt-context":
        session, prompt = payload.get("session_id"), payload.get("prompt")
        if not (isinstance(session, str) and session and isinstance(prompt, str)):
            return ""
        from memsync.commands.prompt_context import prompt_context  # recall: only for this action

        found = prompt_context(load_tracks(path, discover=False), Path(cwd), agent, session, prompt)
        event = {"hookEventName": "UserPromptSubmit", "additionalContext": found}
        return json.dumps({"hookSpecificOutput": event}) if found else ""
    from memsync.commands.session_context import session_context

    source = source if isinstance(source, str) else "startup"
    text = session_context(load_tracks(path, discover=False), Path(cwd), agent, source)
    if not text:
        return ""
    if agent == "copilot-cli":
        return json.dumps({"additionalContext": text})
    if agent == "cursor":
        return json.dumps({"additional_context": text})
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}})


def sync_now(path: Path) -> str:
    """Ask the daemon running for config ``path`` to sync now (SIGUSR1), or, with none running, start a
    detached child that publishes and commits every store once without exchanging. Returns at once with
    what was done, in a few words. Raises ``MemsyncError`` for a bad config (checked before detaching)."""
    pid = running_daemon_pid(path)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGUSR1)
            return f"asked the daemon (PID {pid}) to sync"
        except OSError:
            pass  # it just exited: sync here
    from memsync.tracks.resolve import load_tracks

    config = load_tracks(path)
    # A cycle takes seconds on a loaded machine and hosts wait for a hook's output to close before the
    # agent goes on (Gemini CLI at the end of every turn): a child in a session of its own, its output
    # on /dev/null, does the work (a store's error is not shown: the next cycle meets it again).
    if os.fork() != 0:
        return "publishing and committing locally in the background (no daemon runs)"
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        from memsync.cycle.run import Cycle  # the sync engine, only when there is no daemon to ask
        from memsync.cycle.session import Session

        session = Session()
        for store in config.stores.values():
            try:
                Cycle(config, store, session, remotes=(), lock_wait_s=SYNC_LOCK_WAIT_S).run()
            except MemsyncError:
                continue  # the next store still syncs
    finally:
        os._exit(0)  # never return into the hook's (or the CLI's) caller


def _payload() -> dict[str, Any]:
    """The host's JSON object on stdin when there is one within ``STDIN_WAIT_S`` (read by the bounded
    decoder), else {}."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return {}
    try:
        ready, _, _ = select.select([stream], [], [], STDIN_WAIT_S)
        data = stream.buffer.read(STDIN_MAX_BYTES) if ready else b""
    except (OSError, ValueError):
        return {}
    parsed, _ = decode_object(data.strip())
    return parsed or {}


def main(argv: list[str] | None = None) -> int:
    """``python -m memsync.hook ACTION --agent HOST [--config PATH]``; always exits 0 (see the module)."""
    parser = argparse.ArgumentParser(prog="python -m memsync.hook", description="memsync's agent-host hooks")
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("--agent", choices=AGENTS, default="claude-code")
    parser.add_argument("--config", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        out = run(args.action, args.agent, args.config, _payload())
    except Exception as exc:  # a hook must never break the agent's session
        print(f"memsync hook {args.action}: {exc}", file=sys.stderr)
        return 0
    if out:
        print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

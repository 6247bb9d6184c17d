"""What the MCP server's tools do, as plain functions over memsync's library (DESIGN "Agent hosts",
MCP): which memory file a tool writes, remember/forget through ``MemoryFile`` (the writer lock and one
``O_APPEND`` write per line, DESIGN I5; the secret scanner refuses secrets, I6), the prompt target, and
history/handoff/status through the functions the CLI commands call.

Memory is named the way ``handoff`` names it: a tracked memory file or role directory by its file or
directory name, its name without ``.jsonl``, or its store path (``memory/ada.jsonl``, ``roles/qa``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsync.base.paths import config_path
from memsync.commands.crossing import check, crossing, personal_store
from memsync.commands.memory import holder, write_entry
from memsync.commands.proposals import Proposal, gated, propose
from memsync.config.file import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.records import Entry
from memsync.formats.quoted import neutralise_lines
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.tracks.resolve import current_config
from memsync.tracks.tracked import Format, Tracked, check_new_role, tracked_memory

# A recall hit's id for a line names its file and line: `roles/qa/daily/2026-11-30.md:7`.
_LINE_SUFFIX = re.compile(r"^(?P<path>.+/.+):\d+$")


def _names(item: Tracked) -> set[str]:
    names = {item.live.name, item.store_path, item.store_path.rsplit("/", 1)[-1]}
    if item.format == "jsonl":
        names.add(item.live.stem)
    return names


def find_memory(config: Config | None, name: str | None, fmt: Format | None = None) -> Tracked:
    """The tracked memory file or role directory called ``name`` (see the module doc), of format ``fmt``
    when given; ``None`` names the default memory file (``~/.agent-memory/<user>.jsonl``, which need not
    exist yet). Raises MemsyncError for an unknown or ambiguous name, listing the names there are."""
    items = [item for item in tracked_memory(config) if fmt is None or item.format == fmt]
    if name is None:
        default = default_memory_path()
        return next((i for i in items if i.live == default), Tracked(None, default.name, default, "jsonl"))
    matches = [item for item in items if name in _names(item)]
    if len(matches) == 1:
        return matches[0]
    what = {"jsonl": "memory file", "role": "role directory", None: "memory file or role directory"}[fmt]
    if matches:
        listed = ", ".join(f"{m.store}:{m.store_path}" for m in matches)
        raise MemsyncError(f"{name!r} names several tracked {what}s ({listed}). Give its store path")
    known = ", ".join(sorted(item.store_path for item in items)[:20]) or "none"
    raise MemsyncError(f"no tracked {what} is called {name!r} (tracked here: {known}). Give one of those")


def tracked_agent(config: Config | None, spec: str, *, receiving: bool) -> Path:
    """The live path of the tracked memory file or role directory ``spec`` names (see the module doc;
    also its live path), or, when ``receiving``, of a new one directly inside a tracked folder of them
    (``~/.agents/memory/reviewer``, ``roles/reviewer``; a role name, never in the folder of memory
    files: ``check_new_role``), which the daemon then syncs. The MCP tools read
    and write tracked memory only, as its resources do: any other path is refused, so an agent cannot
    make memsync write files into, or read a synced role from, a directory of its choosing. Raises
    MemsyncError naming what is tracked."""
    items = tracked_memory(config)
    path = Path(os.path.abspath(Path(spec).expanduser()))
    by_path = [item.live for item in items if item.live == path]
    if by_path:
        return by_path[0]
    if any(spec in _names(item) for item in items):
        return find_memory(config, spec).live  # raises for a name several items answer to
    members = {item.live for item in items}
    for store in config.stores.values() if receiving and config is not None else ():
        for track in store.tracks:
            if track.live in members or not track.live.is_dir():
                continue  # a memory file or role directory: nothing new goes inside it
            prefix = track.store_path.strip("/") + "/"
            new = track.live / spec[len(prefix) :] if spec.startswith(prefix) else path
            if new.parent == track.live and not new.name.startswith(".") and new not in track.excludes:
                if new.suffix != ".jsonl":
                    check_new_role(new)
                return new
    known = ", ".join(sorted(item.store_path for item in items)[:20]) or "none"
    raise MemsyncError(
        f"handoff: no tracked agent or path {spec!r} here (tracked: {known}); the MCP tools hand over "
        "tracked memory only. Give a store path or the live path of tracked memory"
    )


@dataclass(frozen=True)
class Remembered:
    """What ``remember`` did for the memory file ``path``: the ``entry`` it appended, or, for a file a
    store set to review syncs, the ``proposal`` it recorded instead (the file unchanged)."""

    entry: Entry | None
    path: Path
    proposal: Proposal | None = None


def remember(
    config: Config | None, new: NewEntry, file: str | None = None, store: str | None = None
) -> Remembered:
    """Append ``new`` to the memory file ``file`` names (default: the default memory file, created if
    missing; with ``new.supersedes``, the memory file holding that entry). A file that a store other
    than the personal one syncs with another remote needs ``store`` naming that store. A file a store
    set to review syncs gets no entry: a proposal is recorded in that store (``proposals.propose``).
    Raises MemsyncError for a bad field, an unknown file or id, a secret in the text, a user entry an
    inferred one may not replace, such a file without ``store``, or a failed write."""
    if file is None and new.supersedes is not None:
        memory = MemoryFile(holder(config, new.supersedes, "supersede"))
    else:
        memory = MemoryFile(find_memory(config, file, "jsonl").live)
    moved = crossing(config, personal_store(config), memory.path)
    check(moved, f"remember into {memory.path}", "the store argument", store)
    gate = gated(config, memory.path)
    if gate is not None and config is not None:
        return Remembered(None, memory.path, propose(config, gate, memory.path, new))
    return Remembered(write_entry(memory, new), memory.path)


def forget(config: Config | None, entry_id: str, file: str | None = None) -> Path:
    """Delete the entry ``entry_id`` for good (a tombstone) in the memory file ``file`` names, or, with
    no file, in the one tracked memory file that holds it; returns that file's path. Raises MemsyncError
    when no file or several hold the id, or it is already deleted."""
    path = find_memory(config, file, "jsonl").live if file is not None else holder(config, entry_id, "forget")
    MemoryFile(path).forget(entry_id)
    from memsync.recall.search import written

    written(config, path)
    return path


def prompt(
    config: Config | None,
    target: str | None,
    scope: str | None,
    kinds: Sequence[str],
    max_bytes: int | None,
) -> str:
    """The prompt block (``memsync prompt``) of the tracked memory file or role directory ``target``
    names (default: the default memory file). Raises MemsyncError (see ``prompt.prompt_text``)."""
    from memsync.mcp.prompt import prompt_text

    item = find_memory(config, target)
    if not item.live.exists():
        return ""
    return prompt_text(item.live, scope, kinds, max_bytes)


def history(target: str | None, limit: int) -> str:
    """`memsync log` for an entry id, a recall hit's id, a tracked live path or a store path (None: all
    memory), the ``limit`` newest commits over every store, one line per commit and file, neutralised
    (peers wrote the hosts, messages and file names). Raises MemsyncError (no config, git failing) or
    when nothing in the history mentions ``target``."""
    from memsync.commands.log import LogFilter
    from memsync.commands.log import history as store_history

    if target is not None and (line := _LINE_SUFFIX.match(target)):
        target = line.group("path")
    lines = store_history(config_path(), target, LogFilter(limit=limit))
    if not lines:
        raise MemsyncError(
            f"history {target or ''}: no commit mentions it yet. Give an entry id, a tracked path or a "
            "store path (memory written since the last sync has no history yet)"
        )
    return neutralise_lines("\n".join(lines))


def handoff(from_agent: str, to_agent: str, dry_run: bool, store: str | None = None) -> dict[str, Any]:
    """`memsync handoff FROM TO` between tracked memory only (``tracked_agent``): the report as JSON
    data (summary, handed, present, skipped, written, receivers). TO in a store syncing with a remote
    FROM's does not needs ``store`` naming that store. Raises MemsyncError for memory not tracked here,
    else as ``handoff.handoff`` does."""
    from memsync.commands.handoff.handoff import handoff as hand

    config = current_config()
    source = tracked_agent(config, from_agent, receiving=False)
    target = tracked_agent(config, to_agent, receiving=True)
    report = hand(str(source), str(target), dry_run=dry_run, yes=store or False, consent="the store argument")
    return {
        "summary": f"{report.source} -> {report.target}: {report.summary()}",
        "receivers": report.receivers,
        "handed": list(report.handed),
        "present": list(report.present),
        "skipped": [
            {"item": skip.item, "reason": skip.reason, "detail": skip.detail} for skip in report.skipped
        ],
        "written": [str(path) for path in report.written],
    }


def status() -> dict[str, Any]:
    """memsync's sync status: stores, remotes, last exchange, unpushed commits, held-back secrets, daemon."""
    # The docstring is the MCP tool's description; a missing or bad config raises MemsyncError
    # (`memsync status --json`'s data otherwise).
    from memsync.commands.status import collect_status

    return collect_status(config_path())

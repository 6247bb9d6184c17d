"""Which agent FROM or TO names: a tracked role or memory file by name, or a path to a role directory
or ``*.jsonl`` memory file."""

from __future__ import annotations

import os
from pathlib import Path

from memsync.base.argcheck import existing_parent
from memsync.base.paths import config_path
from memsync.commands.handoff.mapping import Agent, AgentFormat
from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import is_header, parse_record
from memsync.formats.markdown.skill import is_role_name
from memsync.tracks.resolve import load_tracks
from memsync.tracks.tracked import check_new_role, is_role_dir, member_format


def agent_name(path: Path, fmt: AgentFormat) -> str:
    """The name of the agent at ``path``: a memory file's stem, a role directory's name (``.claude/memory``
    -> ``claude``)."""
    path = Path(os.path.abspath(path))
    if fmt == "jsonl":
        return path.stem
    if path.name == "memory" and path.parent.name.lstrip("."):
        return path.parent.name.lstrip(".")
    return path.name


def _tracked() -> list[tuple[set[str], Path]]:
    """Every tracked live path with the names it answers to (empty without a config file), and every
    agent directly inside a tracked folder: a role directory in ``~/.agents/memory`` (tracked as
    ``roles``), a ``*.jsonl`` memory file in ``~/.agent-memory``."""
    if not config_path().is_file():
        return []
    result = []
    for store in load_tracks().stores.values():
        for track in store.tracks:
            fmt: AgentFormat = "jsonl" if track.live.suffix == ".jsonl" else "role"
            names = {
                track.live.name,
                agent_name(track.live, fmt),
                track.store_path,
                track.store_path.rsplit("/", 1)[-1],
            }
            result.append((names, track.live))
            result.extend(_folder_members(track.live, track.store_path))
    return result


def _folder_members(folder: Path, store_path: str) -> list[tuple[set[str], Path]]:
    """The agents directly inside tracked ``folder`` with their names: subdirectories (roles) and
    ``*.jsonl`` files; none when ``folder`` is itself a role directory (its ``daily/`` is no role)."""
    if not folder.is_dir() or is_role_dir(folder):
        return []
    members = []
    for child in sorted(folder.iterdir()):
        fmt = member_format(folder, child)
        if fmt == "role":
            members.append(({child.name, f"{store_path}/{child.name}"}, child))
        elif fmt == "jsonl":
            members.append(({child.name, child.stem, f"{store_path}/{child.name}"}, child))
    return members


def is_memory_file(path: Path) -> bool:
    """True for a ``*.jsonl`` path, or a file whose first line is an agent-memory/0.1 header."""
    if path.suffix == ".jsonl":
        return True
    try:
        with path.open("rb") as stream:
            obj = parse_record(stream.readline().rstrip(b"\r\n"))
    except OSError:
        return False
    return obj is not None and is_header(obj)


def resolve_agent(spec: str, *, create: bool = False) -> Agent:
    """Resolve FROM or TO: a tracked role or memory file by name, else a path (``~`` expanded).

    A name without ``/`` is looked up among the tracked paths of the config first. With ``create`` (TO), a
    path that does not exist is accepted: ``*.jsonl`` as a new memory file, anything else as a new role
    directory (nothing is created here). Raises MemsyncError for an unknown name, an ambiguous name, a
    missing FROM, or a file that is not a memory file.
    """
    if not spec.strip():
        raise MemsyncError("handoff: an agent name is empty. Give a tracked role, a memory file or a path")
    if "/" not in spec and not spec.startswith("~"):
        matches = sorted({live for names, live in _tracked() if spec in names})
        if len(matches) > 1:
            listed = ", ".join(str(m) for m in matches)
            raise MemsyncError(f"handoff: {spec!r} names several tracked paths ({listed}). Give the path")
        if matches:
            live = matches[0]
            fmt: AgentFormat = "jsonl" if live.suffix == ".jsonl" else "role"
            return Agent(agent_name(live, fmt), live, fmt)
    path = Path(spec).expanduser()
    if path.is_dir():
        return Agent(agent_name(path, "role"), path, "role")
    if path.is_file():
        if not is_memory_file(path):
            raise MemsyncError(
                f"handoff: {path} is neither a memory file (*.jsonl) nor a role directory. "
                "Give a memory file, a role directory or a tracked name"
            )
        return Agent(agent_name(path, "jsonl"), path, "jsonl")
    if path.exists() or not create:
        names = sorted(
            agent_name(live, "jsonl") if live.suffix == ".jsonl" else agent_name(live, "role")
            for _, live in _tracked()
            if live.suffix == ".jsonl" or is_role_dir(live)
        )
        known = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "") if names else "none"
        raise MemsyncError(
            f"handoff: no tracked agent or path {spec!r} (tracked agents here: {known}). "
            "Give one of those names or an existing path"
        )
    if "/" not in spec and path.suffix != ".jsonl":
        # The path suggested must be one check_new_role accepts: a role's name has no suffix.
        role = path.stem if path.suffix else spec
        raise MemsyncError(
            f"handoff: {spec!r} is not a tracked agent. To create a new role that syncs, "
            "give its path in a tracked folder, such as "
            + (f"~/.agents/memory/{role}" if is_role_name(role) else "~/.agents/memory/NAME (a plain name)")
        )
    path = existing_parent(path, "TO")
    fmt = "jsonl" if path.suffix == ".jsonl" else "role"
    if fmt == "role":
        check_new_role(path)
    return Agent(agent_name(path, fmt), path, fmt)

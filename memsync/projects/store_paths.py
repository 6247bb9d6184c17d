"""Default store paths: where a tracked live path lands in a store when the config gives no ``as``, so
the same memory meets on every machine (DESIGN "Vocabulary", "Agent hosts"), and the store paths earlier
versions gave the same paths (folded into the current ones by ``memsync.cycle.legacy``)."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from memsync.base import git
from memsync.base.remote_url import PLAIN_NAME
from memsync.hosts import claude_code, own_memory
from memsync.projects import claude_folders, identity


def default_store_path_for(live: Path) -> str:
    """The store path a tracked ``live`` path maps to when the config gives none (DESIGN "Vocabulary",
    "Agent hosts").

    ``~/.agents/memory/<role>`` -> ``roles/<role>``; ``<project>/.agents/memory/<role>`` ->
    ``projects/<project key>/<role>`` and a Claude Code project memory folder
    ``~/.claude/projects/<name>/memory`` -> ``claude/projects/<project key>`` (the key is the project's
    identity: ``memsync.projects.identity.project_key``), and so a project's own host memory
    (``<project>/.claude/agent-memory`` -> ``claude/project-agent-memory/<project key>``,
    ``<project>/.goose/memory`` -> ``goose/projects/<project key>``), and Gemini CLI's
    ``~/.gemini/tmp/<slug>/memory`` -> ``gemini/projects/<project key>`` (the project named by its
    ``.project_root``); the hosts' user-scope memory
    (``hosts.own_memory.user_memory``) -> its store path there; ``<name>.jsonl`` -> ``memory/<name>.jsonl``
    and the folder ``~/.agent-memory`` -> ``memory``; any other path under the home directory -> its path
    relative to home without leading dots (``~/.claude/memory`` -> ``claude/memory``, ``~/.codex/memories`` ->
    ``codex/memories``); anything else -> ``paths/<name>``. Pure apart from reading the project's git
    config and Claude Code's transcripts; never raises.
    """
    live = _absolute(live)
    if live.suffix != ".jsonl" and claude_code.is_project_memory(live):
        return claude_folders.project_memory(live).store_path
    tmp = own_memory.gemini_tmp()
    if live.is_relative_to(tmp) and len(live.relative_to(tmp).parts) >= 2:
        folder = tmp.joinpath(*live.relative_to(tmp).parts[:2])
        project = own_memory.gemini_project(folder)
        if project is not None:
            rest = live.relative_to(folder).as_posix()
            key = f"{own_memory.GEMINI_PROJECTS_STORE_PATH}/{identity.project_key(project)}"
            return key if rest == "." else f"{key}/{rest}"
    for place in own_memory.user_memory():
        if live == place.live or live.is_relative_to(place.live):
            rest = live.relative_to(place.live).as_posix()
            return place.store_path if rest == "." else f"{place.store_path}/{rest}"
    return _default_store_paths(live, lambda project: (identity.project_key(project),))[0]


def legacy_store_paths_for(live: Path) -> tuple[str, ...]:
    """The store paths earlier memsync versions gave ``live`` by default where they differ from
    ``default_store_path_for(live)``: a project's role keyed by the last name of its ``origin`` URL (else
    its directory name) or by an earlier key of its project (``identity.legacy_keys``), a Claude Code
    project memory folder by its home-relative path or its folder name. memsync folds their content into
    the current store path (``memsync.cycle.legacy``). Never raises."""
    live = _absolute(live)
    if live.suffix != ".jsonl" and claude_code.is_project_memory(live):
        return claude_folders.project_memory(live).legacy
    current = default_store_path_for(live)
    olds = _default_store_paths(live, _legacy_keys)
    return tuple(old for old in dict.fromkeys(olds) if old != current)


def untaken(current: Sequence[str], legacy: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Per track, its ``legacy`` store paths without those that overlap a ``current`` store path (of
    any track) or another legacy path: content a track maps now is never folded into another one, nor
    one legacy path into two tracks."""
    now = [PurePosixPath(path) for path in current]
    counts = Counter(PurePosixPath(old) for olds in legacy for old in olds)

    def free(old: str) -> bool:
        mine = PurePosixPath(old)
        if any(mine.is_relative_to(p) or p.is_relative_to(mine) for p in now):
            return False
        return not any(
            (mine.is_relative_to(o) or o.is_relative_to(mine)) and (o != mine or n > 1)
            for o, n in counts.items()
        )

    return [tuple(old for old in olds if free(old)) for olds in legacy]


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def _default_store_paths(live: Path, project_keys: Callable[[Path], Sequence[str]]) -> list[str]:
    """The default store path of ``live``, one per key ``project_keys`` gives a project's role (one
    path for anything else)."""
    home = _absolute(Path.home())
    if live.suffix == ".jsonl":
        return [f"memory/{live.name}"]
    if live == home / ".agent-memory":  # the folder of memory files: its files keep their per-file paths
        return ["memory"]
    parts = live.parts
    for i in range(len(parts) - 1, 0, -1):
        owner = Path(*parts[: i - 1])
        rest = "/".join(parts[i + 1 :])
        host_prefix = own_memory.PROJECT_FOLDERS.get(parts[i - 1 : i + 1])
        if host_prefix is not None and owner != home:
            prefixes = [f"{host_prefix}/{key}" for key in project_keys(owner)]
        elif parts[i - 1 : i + 1] == (".agents", "memory"):
            prefixes = ["roles"] if owner == home else [f"projects/{key}" for key in project_keys(owner)]
        else:
            continue
        return [f"{prefix}/{rest}" if rest else prefix for prefix in prefixes]
    if live != home and live.is_relative_to(home):
        return ["/".join(part.lstrip(".") or part for part in live.relative_to(home).parts)]
    return [f"paths/{live.name}"]


def _legacy_keys(project: Path) -> tuple[str, ...]:
    """The keys earlier versions gave ``project``: ``_project_name`` for a project with a remote (one
    without shared its name with every other machine's project of that name: not folded), and
    ``identity.legacy_keys``."""
    named = (_project_name(project),) if identity.remote_identity(project) is not None else ()
    return (*named, *identity.legacy_keys(project))


def _project_name(project: Path) -> str:
    """The project name earlier versions keyed a project's roles by: the name of ``project``'s ``origin``
    remote repository (``.../name.git`` -> ``name``), else the directory's name."""
    # The ceiling keeps git from reading the config of a repository that merely encloses the project.
    env = {"GIT_CEILING_DIRECTORIES": str(project.parent)}
    result = git.attempt(["-C", str(project), "config", "--get", "remote.origin.url"], env=env, timeout=10)
    url = result.out.strip() if result is not None and result.ok else ""
    name = re.split(r"[/:\\]", url.rstrip("/"))[-1] if url else ""
    name = name.removesuffix(".git")
    return name if name and PLAIN_NAME.match(name) else project.name

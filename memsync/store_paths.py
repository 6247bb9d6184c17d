"""Default store paths: where a tracked live path lands in a store when the config gives no ``as``, so
the same memory meets on every machine (DESIGN "Vocabulary")."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from memsync.remote_url import PLAIN_NAME


def default_store_path_for(live: Path) -> str:
    """The store path a tracked ``live`` path maps to when the config gives none (DESIGN "Vocabulary").

    ``~/.agents/memory/<role>`` -> ``roles/<role>``; ``<project>/.agents/memory/<role>`` ->
    ``projects/<project>/<role>`` (project = the name in the project's ``origin`` URL, else its directory
    name); ``<name>.jsonl`` -> ``memory/<name>.jsonl`` and the folder ``~/.agent-memory`` -> ``memory``;
    any other path under the home directory -> its path relative to home without leading dots
    (``~/.claude/memory`` -> ``claude/memory``); anything else -> ``paths/<name>``. Pure apart from
    reading the project's git config; never raises.
    """
    live = Path(os.path.abspath(live.expanduser()))
    home = Path(os.path.abspath(Path.home()))
    if live.suffix == ".jsonl":
        return f"memory/{live.name}"
    if live == home / ".agent-memory":  # the folder of memory files: its files keep their per-file paths
        return "memory"
    parts = live.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1 : i + 1] != (".agents", "memory"):
            continue
        owner = Path(*parts[: i - 1])
        rest = "/".join(parts[i + 1 :])
        prefix = "roles" if owner == home else f"projects/{_project_name(owner)}"
        return f"{prefix}/{rest}" if rest else prefix
    if live != home and live.is_relative_to(home):
        return "/".join(part.lstrip(".") or part for part in live.relative_to(home).parts)
    return f"paths/{live.name}"


def _project_name(project: Path) -> str:
    """The name of ``project``'s ``origin`` remote repository (``.../name.git`` -> ``name``), else the
    directory's name."""
    try:
        # The ceiling keeps git from reading the config of a repository that merely encloses the project.
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(project.parent)}
        result = subprocess.run(
            ["git", "-C", str(project), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        result = None
    url = result.stdout.strip() if result is not None and result.returncode == 0 else ""
    name = re.split(r"[/:\\]", url.rstrip("/"))[-1] if url else ""
    name = name.removesuffix(".git")
    return name if name and PLAIN_NAME.match(name) else project.name

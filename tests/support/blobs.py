"""Every blob in a repository's history, and whether an append-only file's blob is whole lines (DESIGN
I2, I3): what the chaos run and the bad-input tests check in every store and remote."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

from memsync.base.layout import is_append_only
from memsync.formats.jsonl.canonical import parse_record


def blobs(repo: Path) -> Iterator[tuple[str, bytes]]:
    """(path, content) of every blob reachable from any ref of the repository at ``repo`` (worktree or
    bare), once per path it is reachable at."""
    listing = subprocess.run(
        ["git", "rev-list", "--objects", "--all"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    objects = [(sha, path) for sha, _, path in (line.partition(" ") for line in listing) if path]
    batch = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo,
        check=True,
        capture_output=True,
        input="".join(f"{sha}\n" for sha, _ in objects).encode(),
    ).stdout
    pos = 0
    for _sha, path in objects:
        header_end = batch.index(b"\n", pos)
        _, kind, size = batch[pos:header_end].split()
        data = batch[header_end + 1 : header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        if kind == b"blob":
            yield path, data


def whole_lines(path: str, data: bytes) -> bool:
    """True when ``data`` is whole lines that each parse for the file kind of ``path``."""
    if data and not data.endswith(b"\n"):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if path.endswith(".jsonl"):
        return all(not raw.strip() or parse_record(raw) is not None for raw in data.splitlines())
    return True


def torn_blobs(repo: Path) -> list[str]:
    """The paths of append-only files whose blob somewhere in ``repo``'s history is not whole lines."""
    return [path for path, data in blobs(repo) if is_append_only(path) and not whole_lines(path, data)]

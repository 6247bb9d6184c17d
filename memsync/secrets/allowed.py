"""The allow-list of lines a person said are not secrets: each line's SHA-256 (never its text) in a store
record file, :data:`ALLOWED_RECORD`, JSON Lines the jsonl driver merges as a union, so it syncs and every
peer's scanner lets the same line pass. A line is matched by its bytes without the line end."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from memsync.base.layout import STORE_META_DIR

ALLOWED_RECORD = f"{STORE_META_DIR}/allowed.jsonl"
_HEX = frozenset("0123456789abcdef")


def line_hash(line: bytes) -> str:
    """The hex SHA-256 of ``line`` without its line end (``\\n``, ``\\r\\n``)."""
    return hashlib.sha256(line.rstrip(b"\n").rstrip(b"\r")).hexdigest()


def parse_allowed(data: bytes) -> frozenset[str]:
    """The hashes allowed by the record file ``data`` (peer content: any line that is not a JSON object
    with an ``allow`` of 64 lowercase hex digits is skipped). Never raises."""
    found = set()
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        value = record.get("allow") if isinstance(record, dict) else None
        if isinstance(value, str) and len(value) == 64 and set(value) <= _HEX:
            found.add(value)
    return frozenset(found)


def allowed_in(worktree: Path) -> frozenset[str]:
    """The hashes the store at ``worktree`` allows (none when it has no record file). Never raises."""
    try:
        return parse_allowed((worktree / ALLOWED_RECORD).read_bytes())
    except OSError:
        return frozenset()

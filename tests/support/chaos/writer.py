"""One agent writing memory at random intervals, as a separate process (the chaos test's writer).

Run as ``python -m tests.support.chaos.writer SPEC_JSON``. SPEC keys: ``memory_file``, ``role_dir``, ``tag``
(unique
per writer), ``seed``, ``skew_s`` (created_at is shifted by a random amount in [-skew_s, +skew_s]),
``pause_s`` ([low, high] seconds between actions), ``stop_file`` (the writer exits once it exists),
``record`` (file the writer appends every line it wrote to, as JSON ``{"file": ..., "line": ...}``),
``day`` (the daily log's date) and ``shared_slug`` (a curated entry every writer rewrites).

Memory entries, tombstones and supersedes go through ``MemoryFile.append`` (the writer lock, one O_APPEND
write); daily-log lines are raw O_APPEND writes; curated entries are atomic rewrites.
"""

from __future__ import annotations

import json
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memsync.base.fsio import append_once, atomic_write
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.records import Entry, Record, Tombstone
from memsync.formats.jsonl.timestamps import format_timestamp
from memsync.memoryfile.file import MemoryFile


def _record(out: Path, file: str, line: bytes) -> None:
    append_once(out, json.dumps({"file": file, "line": line.decode("utf-8")}).encode() + b"\n", create=True)


def run(spec: dict[str, Any]) -> int:
    """Write until ``spec["stop_file"]`` exists; return the number of actions taken."""
    rng = random.Random(spec["seed"])
    memory = MemoryFile(Path(spec["memory_file"]))
    role = Path(spec["role_dir"])
    daily = role / "daily" / f"{spec['day']}.md"
    daily.parent.mkdir(parents=True, exist_ok=True)
    record, tag, skew = Path(spec["record"]), spec["tag"], float(spec["skew_s"])
    stop = Path(spec["stop_file"])
    live_ids: list[str] = []
    actions = 0
    while not stop.exists():
        actions += 1
        when = datetime.now(UTC) + timedelta(seconds=rng.uniform(-skew, skew))
        stamp = format_timestamp(when)
        roll = rng.random()
        item: Record | None = None
        if roll < 0.40 or (roll < 0.60 and not live_ids):
            item = Entry(
                id=f"{tag}{actions:06d}",
                kind=rng.choice(("lesson", "fact", "preference")),
                text=f"{tag} learned thing {actions}",
                created_at=stamp,
                source="session:chaos",
                confidence=0.8,
            )
            live_ids.append(item.id)
        elif roll < 0.50:
            item = Tombstone(id=live_ids.pop(rng.randrange(len(live_ids))), created_at=stamp)
        elif roll < 0.60:
            old = live_ids.pop(rng.randrange(len(live_ids)))
            item = Entry(
                id=f"{tag}{actions:06d}",
                kind="lesson",
                text=f"{tag} revised {old} at {actions}",
                created_at=stamp,
                source="session:chaos",
                confidence=0.9,
                supersedes=old,
            )
            live_ids.append(item.id)
        elif roll < 0.92:
            line = f"- [{when:%H:%M}] {tag} step {actions}\n".encode()
            append_once(daily, line, create=True)
            _record(record, "daily", line)
        else:
            slug = spec["shared_slug"] if rng.random() < 0.3 else f"{tag}-notes"
            body = "".join(f"- {tag} point {actions}.{i}\n" for i in range(rng.randint(1, 4)))
            atomic_write(
                role / f"{slug}.md",
                (
                    f"---\nname: {slug}\ndescription: notes kept by {tag}\ntype: project\n---\n\n{body}"
                ).encode(),
            )
        if item is not None:
            memory.append(item)
            _record(record, "memory", canonical_json(item.to_obj()) + b"\n")
        time.sleep(rng.uniform(*spec["pause_s"]))
    return actions


if __name__ == "__main__":
    run(json.loads(sys.argv[1]))

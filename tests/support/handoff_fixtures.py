"""Hand-written agents for the handoff tests: a memory file and a role directory with every case issue 6
names (live, tombstoned, superseded, expired, user entries, a secret, tags, scopes, old and recent logs)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
# Built from parts so no scanner of this repository flags the test source itself.
FAKE_TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"

HEADER = {"format": "agent-memory/0.1", "created_at": "2026-11-01T00:00:00Z"}


def _entry(id: str, text: str, day: int, **fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": id,
        "kind": "lesson",
        "text": text,
        "scope": "global",
        "tags": [],
        "source": "session:2026-11-01-a",
        "confidence": 0.8,
        "expires_at": None,
        "supersedes": None,
        "created_at": f"2026-11-{day:02d}T09:00:00Z",
    }
    obj.update(fields)
    return obj


# id -> text of the entries a handoff must carry (the live view at NOW).
LIVE = {
    "aaaaaaaaaa01": "The harbor site blocks requests without a user agent.",
    "aaaaaaaaaa02": "The person wants answers in plain English.",
    "aaaaaaaaaa03": "Never force-push the shared branch.",
    "aaaaaaaaaa04": "The build runs on Python 3.11.",
    "aaaaaaaaaa05": "Check the runbook at https://runbook.example first.",
    "aaaaaaaaaa07": "Deploys go out on Tuesdays only.",
}
# Entries a handoff must never carry: tombstoned, superseded, expired, holding a secret.
DEAD = {
    "aaaaaaaaaa06": "Deploys go out on Mondays.",
    "aaaaaaaaaa08": "An entry that was deleted.",
    "aaaaaaaaaa09": "The staging banner stays up until the release.",
}
SECRET_ID = "aaaaaaaaaa10"

RECORDS: list[dict[str, Any]] = [
    _entry(
        "aaaaaaaaaa01", LIVE["aaaaaaaaaa01"], 2, scope="harbor.example", tags=["fetching"], confidence=0.9
    ),
    _entry("aaaaaaaaaa02", LIVE["aaaaaaaaaa02"], 3, kind="preference", source="user", confidence=1.0),
    _entry("aaaaaaaaaa03", LIVE["aaaaaaaaaa03"], 4, kind="avoid", scope="project:memsync", tags=["git"]),
    _entry("aaaaaaaaaa04", LIVE["aaaaaaaaaa04"], 5, kind="fact", scope="project:memsync", confidence=0.95),
    _entry("aaaaaaaaaa05", LIVE["aaaaaaaaaa05"], 6, kind="source", confidence=0.6),
    _entry("aaaaaaaaaa06", DEAD["aaaaaaaaaa06"], 7, kind="fact"),
    _entry("aaaaaaaaaa07", LIVE["aaaaaaaaaa07"], 8, kind="fact", supersedes="aaaaaaaaaa06"),
    _entry("aaaaaaaaaa08", DEAD["aaaaaaaaaa08"], 9),
    {"id": "aaaaaaaaaa08", "deleted": True, "created_at": "2026-11-10T09:00:00Z"},
    _entry("aaaaaaaaaa09", DEAD["aaaaaaaaaa09"], 11, kind="fact", expires_at="2026-11-20T00:00:00Z"),
    _entry(SECRET_ID, f"The CI token is {FAKE_TOKEN}.", 12, kind="fact"),
]


def write_memory(path: Path, records: list[dict[str, Any]] | None = None) -> Path:
    """A memory file at ``path`` holding the header and ``records`` (default :data:`RECORDS`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [HEADER, *(RECORDS if records is None else records)]
    path.write_bytes(b"".join(json.dumps(o, ensure_ascii=False).encode() + b"\n" for o in lines))
    return path


# slug -> (description, type) of the curated entries of the role directory.
CURATED = {
    "user_timezone": ("The user works in Europe/Berlin and reads mail at 8.", "user"),
    "testing_strategy": (
        "Integration tests must hit a real database, never mocks — a mocked run hid a broken migration.",
        "feedback",
    ),
    "release_freeze": ("Merge freeze starts on 2026-12-01 for the mobile release cut.", "project"),
    "bug_tracker": ("Pipeline bugs are tracked in the INGEST project in Linear.", "reference"),
    "ci_checks": ("CI runs ruff and mypy before the tests; keep both clean.", "feedback"),
}
# Log items of the 3 most recent daily logs (what a role's live view holds), and one of an older log.
RECENT_LOG_TEXTS = (
    "User pushed back on adding a new flag.",
    "The nightly job failed on disk space.",
    "Reran the nightly job; green.",
)
OLD_LOG_TEXT = "An old note from a log older than the latest three."
# A curated entry whose body holds a secret: its description may go to a memory file, the file may not
# be copied to a role directory.
SECRET_BODY_DESCRIPTION = "How CI deploys."


def write_role(path: Path) -> Path:
    """A role directory at ``path``: index, 5 curated entries (one with tags and an ``updated`` date, one
    under ``metadata:``), a secret-bearing entry, 4 daily logs (one free-form) and a receipt line."""
    path.mkdir(parents=True)
    index = ["# Memory index — scout\n", "\n", "> Curated entries only.\n", "\n"]
    for slug, (description, type_) in CURATED.items():
        name = slug.replace("_", " ").capitalize()
        extra = ""
        if slug == "ci_checks":
            extra = "tags: [ci, python]\nupdated: 2026-11-20\n"
        if slug == "bug_tracker":
            head = f"---\nname: {name}\ndescription: {description}\nmetadata: \n  type: {type_}\n---\n"
        else:
            head = f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n{extra}---\n"
        (path / f"{slug}.md").write_text(f"{head}\n**Why:** body of {slug}.\n", encoding="utf-8")
        index.append(f"- [{name}]({slug}.md) — {description[:30]}\n")
    (path / "deploy_token.md").write_text(
        f"---\nname: Deploy token\ndescription: {SECRET_BODY_DESCRIPTION}\ntype: reference\n---\n\n"
        f"Token: {FAKE_TOKEN}\n",
        encoding="utf-8",
    )
    (path / "MEMORY.md").write_text("".join(index), encoding="utf-8")
    daily = path / "daily"
    daily.mkdir()
    (daily / "2026-11-01.md").write_text(f"# Daily log — 2026-11-01\n\n- [08:00] {OLD_LOG_TEXT}\n")
    (daily / "2026-11-20.md").write_text(f"# Daily log — 2026-11-20\n\n- [09:15] {RECENT_LOG_TEXTS[0]}\n")
    (daily / "2026-11-21.md").write_text("# 2026-11-21 — free-form\n\n## Findings\n\n| a | b |\n|---|---|\n")
    (daily / "2026-11-22.md").write_text(
        f"# Daily log — 2026-11-22\n\n- [07:00] {RECENT_LOG_TEXTS[1]}\n- [07:30] {RECENT_LOG_TEXTS[2]}\n"
        "- [08:00] Received 2 entries from qa (memsync handoff): a, b\n"
    )
    old = datetime(2026, 10, 1, tzinfo=UTC).timestamp()
    for file in path.rglob("*.md"):
        os.utime(file, (old, old))
    return path


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (or the file itself) by relative path -> bytes, to compare whole agents."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}

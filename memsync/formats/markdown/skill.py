"""The names the markdown memory skill fixes (seeds/002): the index, snapshot and daily log names, the
four curated types, and the slug of an entry's name; and the one-line rule of its fields.
"""

from __future__ import annotations

import re
import unicodedata

from memsync.errors import MemsyncError

CURATED_TYPES = ("user", "feedback", "project", "reference")
# The JSONL kind a curated type reads as (handoff and recall); feedback that forbids reads as ``avoid``.
TYPE_TO_KIND = {"user": "preference", "feedback": "lesson", "project": "fact", "reference": "source"}
_AVOID_WORDS = re.compile(r"\b(?:never|don'?t|do not|avoid|must not)\b", re.IGNORECASE)
INDEX_NAME = "MEMORY.md"
SNAPSHOT_NAME = "snapshot.md"
DAILY_DIR = "daily"
BRIEFING_NAME = "Project briefing"
# What the readers of an index or a daily log read at most (bytes): the skill keeps both short (an index
# line per entry, terse log lines), and a peer's 1 GB log must not be loaded whole for a snapshot.
MAX_READ_BYTES = 8 << 20
DAILY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


def is_role_name(name: str) -> bool:
    """True for a name a role directory may have inside a folder of roles: a plain name, not hidden, not
    a markdown file's (``*.md``) nor a memory file's (``*.jsonl``), not the skill's own ``daily``."""
    lower = name.lower()
    return (
        bool(name.strip())
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and not lower.endswith((".md", ".jsonl"))
        and lower != DAILY_DIR
    )


def slugify(name: str) -> str:
    """The skill's slug of an entry ``name``: lowercase, each run of non-alphanumerics -> ``_``, trimmed.

    ASCII letters and digits only, so slugs are safe file names on every OS; accents are dropped first
    ("User Timezone" -> "user_timezone", "Café notes" -> "cafe_notes"). Raises ``MemsyncError`` when
    nothing is left (e.g. a name written only in Arabic script).
    """
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    slug = re.sub(r"[^a-z0-9]+", "_", bare.lower()).strip("_")
    if not slug:
        raise MemsyncError(
            f"cannot name the entry {name!r}: it has no ASCII letter or digit to make a file name from. "
            "Use a name with at least one."
        )
    return slug


def one_line(what: str, value: str) -> str:
    value = value.strip()
    if not value:
        raise MemsyncError(f"{what} is empty: give some text")
    if "\n" in value or "\r" in value:
        raise MemsyncError(f"{what} spans several lines: the skill keeps it on one line. Join the lines")
    return value


def kind_for_type(curated_type: str | None, description: str) -> str:
    """The JSONL kind of a curated entry of ``curated_type``: ``TYPE_TO_KIND``, ``avoid`` for feedback whose
    ``description`` forbids something, ``lesson`` for an unknown type."""
    if curated_type == "feedback" and _AVOID_WORDS.search(description):
        return "avoid"
    return TYPE_TO_KIND.get(curated_type or "", "lesson")

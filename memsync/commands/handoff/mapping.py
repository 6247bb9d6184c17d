"""The records of a handoff (agents, filters, items, skips, the report) and the mapping of kinds and
types between the two formats (the table in ``handoff``'s docstring; DESIGN "Agent hosts")."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from memsync.base.wording import plural
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import KINDS, Entry
from memsync.formats.jsonl.view import scope_matches
from memsync.formats.markdown.reading import CuratedEntry
from memsync.formats.markdown.skill import TYPE_TO_KIND as TYPE_TO_KIND  # re-exported: handoff maps by it
from memsync.formats.markdown.skill import kind_for_type as kind_for_type

HANDOFF_TAG = "handoff:"
LOG_TAG = "daily-log"
# Ends the daily-log line a receiver gets; such receipts are not knowledge and are never handed on.
RECEIPT_MARK = "(memsync handoff)"
KIND_TO_TYPE = {
    "preference": "user",
    "lesson": "feedback",
    "avoid": "feedback",
    "fact": "project",
    "source": "reference",
}
# A curated entry was written on purpose, so it ranks above an agent's first guess but below the user's
# word; a daily-log item is an episodic note.
CURATED_CONFIDENCE = 0.9
LOG_CONFIDENCE = 0.5
# How many words, and at most how many characters, of a JSONL text name the curated entry it becomes (the
# slug, a file name, comes from the name).
NAME_WORDS = 8
NAME_CHARS = 60
# At most this many characters of a curated entry's description and body make the text it is handed as:
# a few paragraphs of knowledge, well under what a reader accepts of one memory-file line.
TEXT_CHARS = 4000
SLUG_CHARS = 120  # well under the 255-byte file-name limit, whatever NFKD makes of odd characters
# Slugs listed by name in TO's daily-log line before "and N more".
LOGGED_SLUGS = 10

# The Source line a JSONL entry handed to a role directory carries (see ``to_role``): it lets the entry
# go back to a memory file as itself (same id, kind, scope, source, confidence, created_at).
SOURCE_PREFIX = "Source: handoff from "

AgentFormat = Literal["jsonl", "role"]
Origin = Literal["entry", "curated", "log"]


@dataclass(frozen=True)
class Agent:
    """A resolved FROM or TO: its ``name`` (used in tags and slugs), live ``path`` and ``format``."""

    name: str
    path: Path
    format: AgentFormat


@dataclass(frozen=True)
class Filters:
    """What to hand over; empty tuples and ``None`` keep everything (see the module doc for the mapping).

    ``since`` is an aware datetime; ``min_confidence`` is in [0, 1].
    """

    scopes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    min_confidence: float | None = None

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown:
            raise MemsyncError(f"handoff: --kind {unknown[0]!r} is not a kind. Use one of {', '.join(KINDS)}")
        if self.min_confidence is not None and not 0 <= self.min_confidence <= 1:
            raise MemsyncError(
                f"handoff: --min-confidence {self.min_confidence} is outside [0, 1]. "
                "Give a number such as 0.8"
            )

    def keeps(self, item: Item) -> bool:
        """Whether ``item`` passes every filter (a field the item's format lacks passes)."""
        if self.kinds and item.kind not in self.kinds:
            return False
        if (
            self.scopes
            and item.scope is not None
            and not any(scope_matches(item.scope, scope) for scope in self.scopes)
        ):
            return False
        if self.tags and item.origin != "log" and not set(self.tags) & set(item.tags):
            return False
        if self.since is not None and item.created < self.since:
            return False
        confidence = item.confidence
        if confidence is None and item.origin == "entry":
            confidence = 1.0  # as to_prompt ranks an entry without one
        return self.min_confidence is None or confidence is None or confidence >= self.min_confidence


@dataclass(frozen=True)
class Item:
    """One thing FROM knows, before it is written in TO's format.

    ``label`` names it in reports; ``text`` is the JSONL text, a curated entry's description and body
    (``curated_text``; its description alone for one a handoff wrote from an entry) or the log text.
    """

    origin: Origin
    label: str
    kind: str
    text: str
    created: datetime
    tags: tuple[str, ...] = ()
    scope: str | None = None
    confidence: float | None = None
    entry: Entry | None = None
    curated: CuratedEntry | None = None
    log_date: str = ""
    log_time: str = ""


@dataclass(frozen=True)
class Skip:
    """An item not handed over: ``reason`` is a short category (the summary counts them), ``detail`` the
    specifics; ``listed`` says whether the CLI names the item (secrets, deletions) or only counts it."""

    item: str
    reason: str
    detail: str = ""
    listed: bool = True


@dataclass(frozen=True)
class HandoffReport:
    """What a handoff did (or, with ``dry_run``, would do).

    ``handed``/``present``/``proposed`` (for a store set to review) are item labels; ``prompt`` is the
    block for ``--format prompt``; ``written`` lists the files written or appended to; ``receivers``: the
    store and remotes beyond the giver's that receive what TO got (``crossing.Crossing.receivers``), None
    when TO syncs with no new remote.
    """

    source: str
    target: str
    handed: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    proposed: tuple[str, ...] = ()
    skipped: tuple[Skip, ...] = ()
    dry_run: bool = False
    prompt: str | None = None
    written: tuple[Path, ...] = ()
    receivers: str | None = None

    def summary(self) -> str:
        """``N handed, M already present, K skipped (why)``; prefixed ``dry run:`` for a dry run; for
        ``--format prompt`` (which writes nothing) ``N entries printed, K skipped (why); nothing written``."""
        reasons = Counter(skip.reason for skip in self.skipped)
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        skipped = f"{len(self.skipped)} skipped" + (f" ({why})" if why else "")
        if self.prompt is not None:
            return f"{plural(len(self.handed), 'entry', 'entries')} printed, {skipped}; nothing written"
        text = f"{len(self.handed)} handed, {len(self.present)} already present, {skipped}"
        if self.proposed:
            text += f", {len(self.proposed)} proposed for review (`memsync review`)"
        return f"dry run: {text}; nothing written" if self.dry_run else text


def type_for_kind(kind: str) -> str:
    """The curated type a JSONL ``kind`` becomes: preference->user, lesson/avoid->feedback, fact->project,
    source->reference."""
    return KIND_TO_TYPE[kind]


def derived_id(from_name: str, key: str) -> str:
    """A stable 12-hex entry id for something FROM holds without an id (a curated slug, a log item), so
    handing it again finds it already present: the id is derived from (FROM, slug)."""
    return hashlib.sha256(f"memsync-handoff\0{from_name}\0{key}".encode()).hexdigest()[:12]


def log_id(from_name: str, day: str, hhmm: str, text: str) -> str:
    """The derived id of the daily-log item ``- [hhmm] text`` of ``daily/<day>.md``."""
    return derived_id(from_name, f"daily/{day}.md\0{hhmm}\0{text}")

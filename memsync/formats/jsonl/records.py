"""The records of an agent-memory/0.1 file (spec ``seeds/000_*.txt`` "Entry"): the header, entries and
tombstones as values, their canonical JSON bytes, and one line read as a JSON object within the bounds
of :mod:`memsync.formats.bounded_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.timestamps import parse_timestamp

FORMAT = "agent-memory/0.1"
KINDS = ("preference", "lesson", "fact", "source", "avoid")
KIND_TITLES = {
    "preference": "Preferences",
    "lesson": "Lessons",
    "fact": "Facts",
    "source": "Sources",
    "avoid": "Avoid",
}
USER_SOURCE = "user"


@dataclass(frozen=True)
class Header:
    """The first line of a memory file. ``extra`` keeps unknown fields for round trip."""

    format: str = FORMAT
    created_at: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_obj(self) -> dict[str, Any]:
        """The JSON object of this header, unknown fields included."""
        obj: dict[str, Any] = {**self.extra, "format": self.format}
        if self.created_at is not None:
            obj["created_at"] = self.created_at
        return obj


@dataclass(frozen=True)
class Entry:
    """One memory entry. Timestamps stay strings as written; ``extra`` keeps unknown fields."""

    id: str
    kind: str
    text: str
    created_at: str
    scope: str = "global"
    tags: tuple[str, ...] = ()
    source: str | None = None
    confidence: float | None = None
    expires_at: str | None = None
    supersedes: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_obj(self) -> dict[str, Any]:
        """The JSON object of this entry: every spec field (``null`` when unset) plus unknown fields."""
        return {
            **self.extra,
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "scope": self.scope,
            "tags": list(self.tags),
            "source": self.source,
            "confidence": self.confidence,
            "expires_at": self.expires_at,
            "supersedes": self.supersedes,
            "created_at": self.created_at,
        }

    @property
    def is_user(self) -> bool:
        """True when the person said it (``source: user``): it outranks inferred entries."""
        return self.source == USER_SOURCE

    @cached_property
    def created(self) -> datetime:
        """``created_at`` parsed (validated when the entry was read or built)."""
        return parse_timestamp(self.created_at)

    @cached_property
    def canonical(self) -> bytes:
        """canonical_json of :meth:`to_obj`: the tie-break between entries with equal ``created_at``."""
        return canonical_json(self.to_obj())

    def expired(self, now: datetime) -> bool:
        """True when ``expires_at`` is set and not after ``now``."""
        return self.expires_at is not None and parse_timestamp(self.expires_at) <= now


@dataclass(frozen=True)
class Tombstone:
    """Deletes the entry ``id`` for good. ``extra`` keeps unknown fields."""

    id: str
    created_at: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_obj(self) -> dict[str, Any]:
        """The JSON object of this tombstone, unknown fields included."""
        obj: dict[str, Any] = {**self.extra, "id": self.id, "deleted": True}
        if self.created_at is not None:
            obj["created_at"] = self.created_at
        return obj


Record = Entry | Tombstone

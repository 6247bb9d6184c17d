"""The records of an agent-memory/0.1 file (spec ``seeds/000_*.txt`` "Entry"): the header, entries and
tombstones as values, their canonical JSON bytes, and one line read as a JSON object within the bounds
of :mod:`memsync.formats.bounded_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from memsync.formats.bounded_json import decode_object
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


def canonical_json(obj: Mapping[str, Any]) -> bytes:
    """The canonical UTF-8 bytes of a JSON object: sorted keys, no spaces, unicode kept as characters.

    Two lines are the same line when their canonical bytes are equal (used by the view's tie-break and
    by the jsonl merge driver). Raises ``TypeError``/``ValueError`` for values JSON cannot hold.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def parse_record(raw: bytes) -> dict[str, Any] | None:
    """The JSON object held by one line ``raw`` (without its line end), or ``None`` when the line is not
    UTF-8, not JSON (NaN/Infinity included), not an object, or not readable within the bounds of
    :mod:`memsync.formats.bounded_json` (depth, length, number size, surrogates, duplicate keys).
    Never raises."""
    return decode_object(raw)[0]


def is_header(obj: Mapping[str, Any]) -> bool:
    """True for the header record: it has a ``format`` key and no ``id``."""
    return "format" in obj and "id" not in obj


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

"""Validation of one JSON object as an entry or a tombstone: which spec fields are missing or of the
wrong type (spec ``seeds/000_*.txt`` "Entry"); unknown fields are kept, never refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memsync.formats.jsonl.records import KINDS, Entry, Record, Tombstone
from memsync.formats.jsonl.timestamps import parse_timestamp

_ENTRY_FIELDS = (
    "id",
    "kind",
    "text",
    "scope",
    "tags",
    "source",
    "confidence",
    "expires_at",
    "supersedes",
    "created_at",
)
_TOMBSTONE_FIELDS = ("id", "deleted", "created_at")


def check_timestamp(obj: Mapping[str, Any], key: str, required: bool, errors: list[tuple[str, str]]) -> None:
    """Append ``(key, message)`` to ``errors`` unless ``obj[key]`` is an ISO-8601 UTC timestamp string (or
    absent, when not ``required``)."""
    value = obj.get(key)
    if value is None:
        if required:
            errors.append((key, "missing (an ISO-8601 UTC timestamp is required)"))
        return
    if not isinstance(value, str):
        errors.append((key, f"must be a timestamp string, not {type(value).__name__}"))
        return
    try:
        parse_timestamp(value)
    except ValueError as exc:
        errors.append((key, str(exc)))


def _check_str(obj: Mapping[str, Any], key: str, required: bool, errors: list[tuple[str, str]]) -> None:
    value = obj.get(key)
    if value is None:
        if required:
            errors.append((key, "missing"))
    elif not isinstance(value, str) or (required and not value):
        errors.append((key, f"must be a non-empty string, not {value!r}"[:120]))


def record_from_obj(obj: Mapping[str, Any]) -> tuple[Record | None, list[tuple[str, str]]]:
    """Validate one JSON object as an entry or a tombstone (not a header).

    Returns ``(record, [])`` or ``(None, [(field, message), ...])`` naming every bad field: ``id`` present,
    ``kind`` in KINDS, ``confidence`` a number in [0, 1], ISO-8601 UTC timestamps, types of the other
    spec fields. Unknown fields go to ``extra``. Spec: ``seeds/000`` "Entry".
    """
    errors: list[tuple[str, str]] = []
    _check_str(obj, "id", True, errors)
    if "deleted" in obj:
        if obj["deleted"] is not True:
            errors.append(("deleted", f"must be true in a tombstone, not {obj['deleted']!r}"))
        check_timestamp(obj, "created_at", False, errors)
        if errors:
            return None, errors
        extra = {k: v for k, v in obj.items() if k not in _TOMBSTONE_FIELDS}
        return Tombstone(id=obj["id"], created_at=obj.get("created_at"), extra=extra), []
    kind = obj.get("kind")
    if kind not in KINDS:
        errors.append(("kind", f"{kind!r} is not one of {', '.join(KINDS)}"[:160]))
    _check_str(obj, "text", True, errors)
    _check_str(obj, "scope", False, errors)
    _check_str(obj, "source", False, errors)
    _check_str(obj, "supersedes", False, errors)
    tags = obj.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        errors.append(("tags", "must be a list of strings"))
    confidence = obj.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1
    ):
        errors.append(("confidence", f"{confidence!r} is not a number in [0, 1]"[:120]))
    check_timestamp(obj, "created_at", True, errors)
    check_timestamp(obj, "expires_at", False, errors)
    if errors:
        return None, errors
    return Entry(
        id=obj["id"],
        kind=obj["kind"],
        text=obj["text"],
        created_at=obj["created_at"],
        scope=obj.get("scope") or "global",
        tags=tuple(tags or ()),
        source=obj.get("source"),
        confidence=confidence,
        expires_at=obj.get("expires_at"),
        supersedes=obj.get("supersedes"),
        extra={k: v for k, v in obj.items() if k not in _ENTRY_FIELDS},
    ), []

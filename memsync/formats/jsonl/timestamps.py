"""The timestamps of an agent-memory/0.1 file: ISO-8601 UTC, written in whole seconds with ``Z``, and
expiries given as a timestamp or a duration (spec ``seeds/000_*.txt`` "Entry").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memsync.errors import MemsyncError

_DURATION = re.compile(r"^(\d+)\s*([smhdw])$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_timestamp(value: str) -> datetime:
    """Parse an ISO-8601 UTC timestamp (``Z`` or ``+00:00``; fractional seconds allowed) to an aware
    datetime. Raises ``ValueError`` for anything else, including other offsets and dates without a time."""
    parsed = datetime.fromisoformat(value)
    if "T" not in value.upper() or parsed.tzinfo is None or parsed.utcoffset() != timedelta(0):
        raise ValueError(f"{value!r} is not an ISO-8601 UTC timestamp such as 2026-11-09T07:50:00Z")
    return parsed


def format_timestamp(moment: datetime) -> str:
    """An aware datetime as the file's timestamp form, e.g. ``2026-11-09T07:50:00Z`` (whole seconds, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_expiry(value: str, now: datetime) -> str:
    """An expiry given as a timestamp or as a duration from ``now`` (``30d``, ``12h``, ``2w``, ``90m``,
    ``45s``) -> the file's timestamp form. Raises MemsyncError for anything else."""
    match = _DURATION.match(value.strip())
    if match:
        seconds = int(match.group(1)) * _DURATION_UNITS[match.group(2)]
        return format_timestamp(now + timedelta(seconds=seconds))
    try:
        return format_timestamp(parse_timestamp(value))
    except ValueError as exc:
        raise MemsyncError(
            f"expiry {value!r}: {exc}. Give a UTC timestamp (2026-12-31T00:00:00Z) or a duration (30d, 12h)"
        ) from None

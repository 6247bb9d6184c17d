"""One line of an agent-memory/0.1 file as data (spec ``seeds/000_*.txt``): the line read as a JSON object
within the bounds of :mod:`memsync.formats.bounded_json`, its canonical JSON bytes (a line's identity),
and whether it is the header. Light on purpose: the jsonl merge driver, which git starts once per merged
file, imports this module and not the record model (:mod:`.records`).
"""

from __future__ import annotations

import json

from memsync.formats.bounded_json import decode_object

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


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

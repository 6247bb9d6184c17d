"""One agent-memory/0.1 file on disk and the operations of the spec on it (``seeds/000_*.txt``):
create, remember, forget, supersede, view, prompt, compact; every write goes through here.
"""

from __future__ import annotations

import secrets as token_source
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memsync.errors import MemsyncError
from memsync.formats.jsonl.compact import CompactReport, compact_file
from memsync.formats.jsonl.parse import ParsedMemory, read_memory
from memsync.formats.jsonl.prompt import DEFAULT_PROMPT_BYTES, render_prompt
from memsync.formats.jsonl.records import USER_SOURCE, Entry, Record, Tombstone
from memsync.formats.jsonl.timestamps import format_timestamp, parse_expiry
from memsync.formats.jsonl.view import winner_key
from memsync.memoryfile import append

# The longest text an entry may hold. JSON escapes a character into at most 6 bytes (``\u0001``), so
# the entry's line stays far under the 1 MiB every reader accepts (``bounded_json.MAX_LINE_BYTES``).
TEXT_MAX_CHARS = 100_000


@dataclass(frozen=True)
class NewEntry:
    """What a person or an agent asks to remember, before memsync gives it an id and a time: the same
    from the CLI, the MCP tools, a proposal kept for review and its approval.

    ``kind``, ``scope`` and ``tags`` None: those of the entry it ``supersedes``, else ``fact``, ``global``
    and none. ``expires``: a UTC time or a duration (``30d``), read when the entry is written.
    """

    text: str
    kind: str | None = None
    scope: str | None = None
    tags: tuple[str, ...] | None = None
    source: str = USER_SOURCE
    confidence: float = 1.0
    expires: str | None = None
    supersedes: str | None = None

    def record(self) -> dict[str, Any]:
        """The fields that are set, as JSON values (how a proposal keeps them in the store)."""
        fields = {
            "text": self.text,
            "kind": self.kind,
            "scope": self.scope,
            "tags": list(self.tags) if self.tags else None,
            "source": self.source,
            "confidence": self.confidence,
            "expires": self.expires,
            "supersedes": self.supersedes,
        }
        return {key: value for key, value in fields.items() if value is not None}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> NewEntry | None:
        """The entry a proposal of peer content describes (see :meth:`record`); None without a text. A
        field of the wrong type is left out; an agent proposed it, so source and confidence default to
        ``agent`` and 0.8. Never raises: the writer checks the fields when a person approves it."""
        text = record.get("text")
        if not isinstance(text, str):
            return None

        def string(key: str) -> str | None:
            value = record.get(key)
            return value if isinstance(value, str) else None

        tags = record.get("tags")
        confidence = record.get("confidence")
        return cls(
            text,
            kind=string("kind"),
            scope=string("scope"),
            tags=tuple(tag for tag in tags if isinstance(tag, str)) or None
            if isinstance(tags, list)
            else None,
            source=string("source") or "agent",
            confidence=(
                float(confidence)
                if isinstance(confidence, int | float) and not isinstance(confidence, bool)
                else 0.8
            ),
            expires=string("expires"),
            supersedes=string("supersedes"),
        )


class MemoryFile:
    """One agent-memory/0.1 file on disk: every write goes through here.

    Writers take ``fsio.writer_lock(path)``; appends are one O_APPEND write of one whole line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def create(self, now: datetime | None = None) -> None:
        """Create the file (and its directory) with a header line; does nothing if it already has content.

        ``now`` (aware) defaults to the current time. Raises MemsyncError on OS errors."""
        with append.locked(self.path, "create"):
            append.ensure_header(self.path, now or datetime.now(UTC))

    def read(self) -> ParsedMemory:
        """read_memory of this file (MemsyncError if it cannot be read)."""
        return read_memory(self.path)

    def append(self, record: Record, now: datetime | None = None) -> None:
        """Append one entry or tombstone as one line (see :func:`append.append_record`).

        Raises MemsyncError for an invalid record, a secret in an entry, an unsupported file format, an
        OS error, or this machine's clock running ahead of its remotes'. DESIGN I5, "Hostile input".
        """
        append.append_record(self.path, record, now)

    def _new_id(self) -> str:
        """12 random lowercase hex chars that occur nowhere in the file yet (ids are never reused).

        A byte search instead of a parse keeps ``remember`` cheap on large files."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as exc:
            raise MemsyncError(f"read {self.path}: {exc.strerror or exc}. Check its permissions") from None
        while True:
            candidate = token_source.token_hex(6)
            if candidate.encode() not in data:
                return candidate

    def remember(
        self,
        text: str,
        kind: str,
        *,
        scope: str = "global",
        tags: Iterable[str] = (),
        source: str = USER_SOURCE,
        confidence: float = 1.0,
        expires_at: str | None = None,
        supersedes: str | None = None,
        now: datetime | None = None,
    ) -> Entry:
        """Append a new entry with a fresh 12-hex id and ``created_at`` = ``now`` (aware; default the
        current time) and return it. ``expires_at`` is a UTC timestamp string (see :func:`parse_expiry`).

        Raises MemsyncError for invalid fields, a text over ``TEXT_MAX_CHARS`` characters, a secret in the
        entry, or an OS error.
        """
        if len(text) > TEXT_MAX_CHARS:
            raise MemsyncError(
                f"remember in {self.path}: the text is {len(text):,} characters, over the limit of "
                f"{TEXT_MAX_CHARS:,} that keeps an entry readable on every machine. Shorten it, or split it "
                "into several entries"
            )
        moment = now or datetime.now(UTC)
        entry = Entry(
            id=self._new_id(),
            kind=kind,
            text=text,
            created_at=format_timestamp(moment),
            scope=scope,
            tags=tuple(tags),
            source=source,
            confidence=confidence,
            expires_at=expires_at,
            supersedes=supersedes,
        )
        self.append(entry, now=moment)
        return entry

    def _entry_versions(self, parsed: ParsedMemory, entry_id: str) -> list[Entry]:
        return [r.record for r in parsed.records if isinstance(r.record, Entry) and r.record.id == entry_id]

    def is_forgotten(self, entry_id: str) -> bool:
        """True when the file holds a tombstone for ``entry_id`` (``forget`` then has nothing to do)."""
        return any(isinstance(r.record, Tombstone) and r.record.id == entry_id for r in self.read().records)

    def forget(self, entry_id: str, now: datetime | None = None) -> Tombstone:
        """Append a tombstone for ``entry_id`` (final: the id never comes back) and return it.

        Raises MemsyncError when the file has no entry with that id or it is already deleted."""
        parsed = self.read()
        if not self._entry_versions(parsed, entry_id):
            raise MemsyncError(
                f"forget {entry_id}: {self.path} has no entry with that id. "
                f"List ids with `memsync show {self.path}`"
            )
        if any(isinstance(r.record, Tombstone) and r.record.id == entry_id for r in parsed.records):
            raise MemsyncError(f"forget {entry_id}: it is already deleted in {self.path}. Nothing to do")
        moment = now or datetime.now(UTC)
        tombstone = Tombstone(id=entry_id, created_at=format_timestamp(moment))
        self.append(tombstone, now=moment)
        return tombstone

    def write(self, new: NewEntry, now: datetime | None = None) -> Entry:
        """Append ``new`` at ``now`` (aware; default the current time) and return the entry written: a
        fresh one, or with ``new.supersedes`` one that replaces that entry (its kind, scope and tags the
        defaults).

        Raises MemsyncError as :meth:`remember` does, for an ``expires`` that is neither a UTC time nor
        a duration, when ``supersedes`` names no entry here, and when an inferred entry (source not
        ``user``) would replace a user entry (the view would ignore it: DESIGN "View semantics")."""
        moment = now or datetime.now(UTC)
        expires_at = None if new.expires is None else parse_expiry(new.expires, moment)
        if new.supersedes is None:
            return self.remember(
                new.text,
                new.kind or "fact",
                scope=new.scope or "global",
                tags=new.tags or (),
                source=new.source,
                confidence=new.confidence,
                expires_at=expires_at,
                now=moment,
            )
        versions = self._entry_versions(self.read(), new.supersedes)
        if not versions:
            raise MemsyncError(
                f"supersede {new.supersedes}: {self.path} has no entry with that id. "
                f"List ids with `memsync show {self.path}`"
            )
        old = max(versions, key=winner_key)
        if old.is_user and new.source != USER_SOURCE:
            raise MemsyncError(
                f"supersede {new.supersedes}: it came from the user and an inferred entry "
                f"(source {new.source!r}) cannot replace it. Ask the user, or use source 'user'"
            )
        return self.remember(
            new.text,
            new.kind or old.kind,
            scope=old.scope if new.scope is None else new.scope,
            tags=old.tags if new.tags is None else new.tags,
            source=new.source,
            confidence=new.confidence,
            expires_at=expires_at,
            supersedes=new.supersedes,
            now=moment,
        )

    def view(self, now: datetime | None = None) -> list[Entry]:
        """The live entries at ``now`` (aware; default the current time); see :func:`build_view`."""
        return self.read().view(now or datetime.now(UTC))

    def to_prompt(
        self,
        scope: str | None = None,
        kinds: Iterable[str] | None = None,
        max_bytes: int = DEFAULT_PROMPT_BYTES,
        now: datetime | None = None,
    ) -> str:
        """The prompt block of this file's view (see :func:`render_prompt`; ``max_bytes`` in bytes)."""
        return render_prompt(self.view(now), scope, kinds, max_bytes)

    def compact(self, now: datetime | None = None) -> CompactReport:
        """Rewrite the file atomically (temp + rename) with the header, the live entries and every
        tombstone (so a stale copy can never bring a deleted entry back), each line's original bytes in
        file order; malformed lines are kept verbatim at their place too.

        Refuses (MemsyncError) while another memsync process holds the writer lock, when the file ends in
        an unfinished line, or when it changed while being compacted. DESIGN I5.
        """
        return compact_file(self.path, now)

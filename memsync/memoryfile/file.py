"""One agent-memory/0.1 file on disk and the operations of the spec on it (``seeds/000_*.txt``):
create, remember, forget, supersede, view, prompt, compact; every write goes through here.
"""

from __future__ import annotations

import errno
import logging
import secrets as token_source
import shlex
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock

from memsync.base.defaults import DEFAULT_PROMPT_BYTES
from memsync.base.fsio import append_once, atomic_write, read_range, writer_lock
from memsync.errors import MemsyncError
from memsync.formats.bounded_json import MAX_LINE_BYTES
from memsync.formats.jsonl.canonical import canonical_json, is_header, parse_record
from memsync.formats.jsonl.compact import compacted, ensure_compactable
from memsync.formats.jsonl.parse import ParsedMemory, parse_memory, read_bytes, read_memory
from memsync.formats.jsonl.prompt import render_prompt
from memsync.formats.jsonl.records import FORMAT, USER_SOURCE, Entry, Header, Record, Tombstone
from memsync.formats.jsonl.timestamps import format_timestamp, parse_expiry, parse_timestamp
from memsync.formats.jsonl.validate import record_from_obj
from memsync.formats.jsonl.view import winner_key
from memsync.secrets import scan_text
from memsync.secrets.text import SPLIT, scan_units

log = logging.getLogger(__name__)

# The longest text an entry may hold. JSON escapes a character into at most 6 bytes (``\u0001``), so
# the entry's line stays far under the 1 MiB every reader accepts (``bounded_json.MAX_LINE_BYTES``).
TEXT_MAX_CHARS = 100_000
# How long an append waits for another memsync writer of the same file (seconds).
APPEND_LOCK_TIMEOUT_S = 30.0
APPEND_LOCK_POLL_S = 0.002


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


@dataclass(frozen=True)
class CompactReport:
    """What :meth:`MemoryFile.compact` did: line counts before and after (header included)."""

    lines_before: int
    lines_after: int


class MemoryFile:
    """One agent-memory/0.1 file on disk: every write goes through here.

    Writers take ``fsio.writer_lock(path)``; appends are one O_APPEND write of one whole line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def create(self, now: datetime | None = None) -> None:
        """Create the file (and its directory) with a header line; does nothing if it already has content.

        ``now`` (aware) defaults to the current time. Raises MemsyncError on OS errors."""
        with locked(self.path, "create"):
            ensure_header(self.path, now or datetime.now(UTC))

    def append(self, record: Record, now: datetime | None = None) -> None:
        """Append one entry or tombstone as one line: validated, scanned for secrets (entries), written with
        one O_APPEND write under the writer lock, creating the file with a header if needed.

        Raises MemsyncError for an invalid record, a line over ``MAX_LINE_BYTES``, a secret in an entry, an
        unsupported file format, an OS error, or this machine's clock running ahead of its remotes'
        (``clock.refuse_if_ahead``: the record's date would outrank later corrections everywhere).
        DESIGN I5, "Hostile input".
        """
        from memsync.memoryfile.clock import (
            refuse_if_ahead,  # reads the config and git: only a write needs them
        )

        obj = record.to_obj()
        _, errors = record_from_obj(obj)
        if errors:
            key, message = errors[0]
            raise MemsyncError(f"append to {self.path}: field {key!r}: {message}. Fix the value and retry")
        line = canonical_json(obj) + b"\n"
        if len(line) > MAX_LINE_BYTES:
            # No reader would see it: the entry would be in the file and in no view, on any machine.
            raise MemsyncError(
                f"append to {self.path}: the entry is a line of {len(line):,} bytes, over the "
                f"{MAX_LINE_BYTES:,} every reader accepts. Shorten its text or its tags"
            )
        if isinstance(record, Entry):
            _refuse_secrets(self.path, record)
        moment = now or datetime.now(UTC)
        dated = parse_timestamp(record.created_at) if record.created_at else moment
        refuse_if_ahead(
            f"{'remember' if isinstance(record, Entry) else 'forget'} in {self.path}", dated.timestamp()
        )
        with locked(self.path, "append"):
            ensure_header(self.path, moment)
            fmt = _header_format(self.path)
            if fmt is not None and fmt != FORMAT:
                raise MemsyncError(
                    f"append to {self.path}: the file is {fmt!r}, not {FORMAT!r}. "
                    "Use a tool that writes that format"
                )
            _write(self.path, line)

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

    def _entry_versions(self, parsed: ParsedMemory, entry_id: str) -> list[Entry]:
        return [r.record for r in parsed.records if isinstance(r.record, Entry) and r.record.id == entry_id]

    def is_forgotten(self, entry_id: str) -> bool:
        """True when the file holds a tombstone for ``entry_id`` (``forget`` then has nothing to do)."""
        return any(
            isinstance(r.record, Tombstone) and r.record.id == entry_id
            for r in read_memory(self.path).records
        )

    def forget(self, entry_id: str, now: datetime | None = None) -> Tombstone:
        """Append a tombstone for ``entry_id`` (final: the id never comes back) and return it.

        Raises MemsyncError when the file has no entry with that id or it is already deleted."""
        parsed = read_memory(self.path)
        if not self._entry_versions(parsed, entry_id):
            raise MemsyncError(
                f"forget {entry_id}: {self.path} has no entry with that id. "
                f"List ids with `memsync show {shlex.quote(str(self.path))}`"
            )
        if any(isinstance(r.record, Tombstone) and r.record.id == entry_id for r in parsed.records):
            raise MemsyncError(f"forget {entry_id}: it is already deleted in {self.path}. Nothing to do")
        moment = now or datetime.now(UTC)
        tombstone = Tombstone(id=entry_id, created_at=format_timestamp(moment))
        self.append(tombstone, now=moment)
        return tombstone

    def remember(self, new: NewEntry, now: datetime | None = None, *, reinstated: bool = False) -> Entry:
        """Append ``new`` at ``now`` (aware; default the current time) with a fresh 12-hex id and
        ``created_at`` = ``now``, and return the entry written: a fresh one, or with ``new.supersedes`` one
        that replaces that entry (its kind, scope and tags the defaults). ``reinstated``: ``new`` is an
        entry this file held (an undo), written with its ``supersedes`` unchecked, as it was: a compact
        may have dropped the superseded entry since (not live), and a fork it made must show again.

        Raises MemsyncError for invalid fields, a text over ``TEXT_MAX_CHARS`` characters, a secret in the
        entry, an OS error, an ``expires`` that is neither a UTC time nor a duration, when ``supersedes``
        names no entry here, and when an inferred entry (source not ``user``) would replace a user entry (the
        view would ignore it: DESIGN "View semantics"); neither of those two when ``reinstated``."""
        moment = now or datetime.now(UTC)
        expires_at = None if new.expires is None else parse_expiry(new.expires, moment)
        kind, scope, tags = new.kind or "fact", new.scope or "global", new.tags or ()
        if new.supersedes is not None and not reinstated:
            versions = self._entry_versions(read_memory(self.path), new.supersedes)
            if not versions:
                raise MemsyncError(
                    f"supersede {new.supersedes}: {self.path} has no entry with that id. "
                    f"List ids with `memsync show {shlex.quote(str(self.path))}`"
                )
            old = max(versions, key=winner_key)
            if old.is_user and new.source != USER_SOURCE:
                raise MemsyncError(
                    f"supersede {new.supersedes}: it came from the user and an inferred entry "
                    f"(source {new.source!r}) cannot replace it. Ask the user, or use source 'user'"
                )
            kind = new.kind or old.kind
            scope = old.scope if new.scope is None else new.scope
            tags = old.tags if new.tags is None else new.tags
        if len(new.text) > TEXT_MAX_CHARS:
            raise MemsyncError(
                f"remember in {self.path}: the text is {len(new.text):,} characters, over the limit of "
                f"{TEXT_MAX_CHARS:,} that keeps an entry readable on every machine. Shorten it, or split it "
                "into several entries"
            )
        entry = Entry(
            id=self._new_id(),
            kind=kind,
            text=new.text,
            created_at=format_timestamp(moment),
            scope=scope,
            tags=tuple(tags),
            source=new.source,
            confidence=new.confidence,
            expires_at=expires_at,
            supersedes=new.supersedes,
        )
        self.append(entry, now=moment)
        return entry

    def view(self, now: datetime | None = None) -> list[Entry]:
        """The live entries at ``now`` (aware; default the current time); see :func:`build_view`."""
        return read_memory(self.path).view(now or datetime.now(UTC))

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
        """Rewrite the file atomically (temp + rename) in its ``compacted`` form at ``now``
        (aware; default the current time): the header, the live entries and every
        tombstone (so a stale copy can never bring a deleted entry back), each line's original bytes in
        file order; malformed lines are kept verbatim at their place too.

        Refuses (MemsyncError) while another memsync process holds the writer lock, when the file ends in
        an unfinished line, or when it changed while being compacted. DESIGN I5.
        """
        lock = writer_lock(self.path)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            raise MemsyncError(
                f"compact {self.path}: another memsync process is writing it. Retry when it is done"
            ) from None
        try:
            before = read_bytes(self.path)
            parsed = parse_memory(before)
            ensure_compactable(f"compact {self.path}: the file", parsed)
            out = compacted(parsed, before, now or datetime.now(UTC))
            if read_bytes(self.path) != before:
                raise MemsyncError(
                    f"compact {self.path}: the file changed while it was being compacted. "
                    "Retry when no agent is writing"
                )
            try:
                atomic_write(self.path, out)
            except OSError as exc:
                raise MemsyncError(
                    f"compact {self.path}: {exc.strerror or exc}. The file is unchanged"
                ) from None
            report = CompactReport(lines_before=before.count(b"\n"), lines_after=out.count(b"\n"))
            log.debug("compacted %s: %d -> %d lines", self.path, report.lines_before, report.lines_after)
            return report
        finally:
            lock.release()


@contextmanager
def locked(path: Path, action: str) -> Iterator[None]:
    """Hold the writer lock of ``path``, waiting at most APPEND_LOCK_TIMEOUT_S seconds for another writer.

    Raises MemsyncError("<action> <path>: ...") when it is not free in time."""
    lock = writer_lock(path)
    try:
        # Another writer holds it for about a millisecond (one append): poll often, not every 50 ms.
        lock.acquire(timeout=APPEND_LOCK_TIMEOUT_S, poll_interval=APPEND_LOCK_POLL_S)
    except filelock.Timeout:
        raise MemsyncError(
            f"{action} {path}: another memsync process held its lock for "
            f"{APPEND_LOCK_TIMEOUT_S:.0f} s. Retry, or stop the stuck process"
        ) from None
    try:
        yield
    finally:
        lock.release()


def ensure_header(path: Path, now: datetime) -> None:
    """Create the file ``path`` with its header line dated ``now`` if it is missing or empty (the caller
    holds the lock)."""
    try:
        if path.stat().st_size > 0:
            return
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
    header = Header(created_at=format_timestamp(now))
    append_once(path, canonical_json(header.to_obj()) + b"\n", create=True)


def _header_format(path: Path) -> str | None:
    """The ``format`` of the first line when it is a header (reads only that line)."""
    try:
        with path.open("rb") as stream:
            obj = parse_record(stream.readline().rstrip(b"\n"))
    except OSError as exc:
        raise MemsyncError(f"read {path}: {exc.strerror or exc}. Check its permissions") from None
    if obj is None or not is_header(obj):
        return None
    fmt = obj.get("format")
    return fmt if isinstance(fmt, str) else None


def _write(path: Path, line: bytes) -> None:
    try:
        append_once(path, line)
    except OSError as exc:
        reason = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        raise MemsyncError(f"append to {path}: {reason}. Free space or fix permissions, then retry") from None


def _refuse_secrets(path: Path, entry: Entry) -> None:
    """Raise MemsyncError when the entry holds a secret: its text as written (multi-line text scans line
    by line), then every other field as one JSON line (``"api_key":"..."`` reads as an assignment), then
    its text after the last entry's text in ``path`` (a token remembered in two halves)."""
    others = {key: value for key, value in entry.to_obj().items() if key != "text"}
    findings = scan_text(entry.text + "\n" + canonical_json(others).decode("utf-8"))
    if findings:
        detectors = ", ".join(sorted({f.detector for f in findings}))
        raise MemsyncError(
            f"remember in {path}: the entry looks like it holds a secret ({detectors}). "
            "Memory must never store secrets: remove it, or describe where the secret lives"
        )
    # A token remembered in two halves: the previous entry's text ends where this one's begins.
    across = scan_units([_last_text(path), entry.text]).get(1)
    if across:
        detectors = ", ".join(sorted(name.removesuffix(SPLIT) for name in across))
        raise MemsyncError(
            f"remember in {path}: with the end of the entry before it, the entry completes what looks like "
            f"a secret split over two entries ({detectors}). Memory must never store secrets: remove it, "
            "and forget the entry before it if it holds the other half"
        )


def _last_text(path: Path) -> str:
    """The ``text`` of the last entry of memory file ``path`` ("" when there is none), read from at most
    the last ``MAX_LINE_BYTES`` of the file (a longer line no reader takes anyway)."""
    try:
        size = path.stat().st_size
        tail = read_range(path, max(0, size - MAX_LINE_BYTES - 1), size)
    except OSError:
        return ""
    lines = tail.split(b"\n")[:-1]  # complete lines only
    if len(tail) > MAX_LINE_BYTES:
        lines = lines[1:]  # the first may be cut
    for raw in reversed(lines):
        obj = parse_record(raw)
        if obj is not None and isinstance(obj.get("text"), str):
            return str(obj["text"])
    return ""

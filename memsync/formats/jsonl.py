"""agent-memory/0.1 memory files (JSON Lines): records, validation, safe appends, the view, compaction,
and the prompt block.

Spec: ``seeds/000_*.txt``. Semantics: DESIGN "View semantics (agent-memory/0.1)" and issue 2. Appends are
one ``O_APPEND`` write of one whole line under the writer lock; compaction is temp + rename under the
same lock (DESIGN invariant I5). Lines that are not valid records are reported, never fatal, and never
removed from the file.
"""

from __future__ import annotations

import errno
import getpass
import json
import logging
import re
import secrets as token_source
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

import filelock

from memsync.errors import MemsyncError
from memsync.fsio import append_once, atomic_write, writer_lock
from memsync.secrets import scan_text

log = logging.getLogger(__name__)

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
DEFAULT_PROMPT_BYTES = 4000
# How long an append waits for another memsync writer of the same file (seconds).
APPEND_LOCK_TIMEOUT_S = 30.0
APPEND_LOCK_POLL_S = 0.002

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
_DURATION = re.compile(r"^(\d+)\s*([smhdw])$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def canonical_json(obj: Mapping[str, Any]) -> bytes:
    """The canonical UTF-8 bytes of a JSON object: sorted keys, no spaces, unicode kept as characters.

    Two lines are the same line when their canonical bytes are equal (used by the view's tie-break and
    by the jsonl merge driver). Raises ``TypeError``/``ValueError`` for values JSON cannot hold.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _decode(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON object of one line, or ``None`` and the reason it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start + 1})"
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a {type(obj).__name__})"
    return obj, ""


def parse_record(raw: bytes) -> dict[str, Any] | None:
    """The JSON object held by one line ``raw`` (without its line end), or ``None`` when the line is not
    UTF-8, not JSON (NaN/Infinity included), or not an object. Never raises."""
    return _decode(raw)[0]


def is_header(obj: Mapping[str, Any]) -> bool:
    """True for the header record: it has a ``format`` key and no ``id``."""
    return "format" in obj and "id" not in obj


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


@dataclass(frozen=True)
class Problem:
    """A line that is not a valid record (or a file-level issue at line 0). ``field`` is None when the
    whole line is at fault."""

    line: int
    message: str
    field: str | None = None

    def format(self, path: Path | str) -> str:
        """``path:line: message`` (the form ``memsync check`` prints)."""
        where = f"field {self.field!r}: " if self.field else ""
        return f"{path}:{self.line}: {where}{self.message}"


@dataclass(frozen=True)
class NumberedRecord:
    """A valid record, the 1-based line it came from and that line's exact bytes (without line end)."""

    line: int
    raw: bytes
    record: Record


@dataclass(frozen=True)
class ParsedMemory:
    """Everything read from a memory file. ``partial_tail`` is a last line without its newline (still
    being written), which is not part of the view; ``malformed`` holds the raw lines behind problems."""

    header: Header | None
    records: tuple[NumberedRecord, ...]
    problems: tuple[Problem, ...]
    partial_tail: bytes
    malformed: tuple[tuple[int, bytes], ...] = ()

    def view(self, now: datetime) -> list[Entry]:
        """build_view of this file's records at ``now``."""
        return build_view((r.record for r in self.records), now)


def _check_timestamp(obj: Mapping[str, Any], key: str, required: bool, errors: list[tuple[str, str]]) -> None:
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
    spec fields. Unknown fields go to ``extra``. Spec: ``seeds/000`` "Entry"; issue 2.
    """
    errors: list[tuple[str, str]] = []
    _check_str(obj, "id", True, errors)
    if "deleted" in obj:
        if obj["deleted"] is not True:
            errors.append(("deleted", f"must be true in a tombstone, not {obj['deleted']!r}"))
        _check_timestamp(obj, "created_at", False, errors)
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
    _check_timestamp(obj, "created_at", True, errors)
    _check_timestamp(obj, "expires_at", False, errors)
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


def _header_from_obj(obj: Mapping[str, Any], line: int) -> tuple[Header, list[Problem]]:
    problems: list[Problem] = []
    fmt = obj.get("format")
    if fmt != FORMAT:
        problems.append(
            Problem(
                line,
                f"{fmt!r} is not {FORMAT!r}: memsync reads it as {FORMAT} but will not write to it",
                "format",
            )
        )
    errors: list[tuple[str, str]] = []
    _check_timestamp(obj, "created_at", False, errors)
    problems.extend(Problem(line, message, key) for key, message in errors)
    created = obj.get("created_at")
    header = Header(
        format=fmt if isinstance(fmt, str) else FORMAT,
        created_at=created if isinstance(created, str) else None,
        extra={k: v for k, v in obj.items() if k not in ("format", "created_at")},
    )
    return header, problems


def parse_memory(data: bytes) -> ParsedMemory:
    """Parse the bytes of a memory file into a ParsedMemory (see :func:`read_memory`). Never raises.

    Line 1 is the header when it is one; blank lines are ignored; a later header of the same format is
    ignored (merges of files created on two machines), one of another format is a problem.
    """
    lines = data.split(b"\n")
    partial_tail = lines.pop()  # b"" when the data ends with a newline
    header: Header | None = None
    records: list[NumberedRecord] = []
    problems: list[Problem] = []
    malformed: list[tuple[int, bytes]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue  # blank lines carry nothing; they stay in the file untouched
        obj, reason = _decode(raw)
        if obj is None:
            problems.append(Problem(number, reason))
            malformed.append((number, raw))
        elif is_header(obj):
            if header is None and number == 1:
                header, header_problems = _header_from_obj(obj, number)
                problems.extend(header_problems)
            elif obj.get("format") != FORMAT:
                problems.append(Problem(number, f"another header ({obj.get('format')!r}); ignored", "format"))
        else:
            record, errors = record_from_obj(obj)
            if record is None:
                problems.extend(Problem(number, message, key) for key, message in errors)
                malformed.append((number, raw))
            else:
                records.append(NumberedRecord(number, raw, record))
    if header is None and (lines or partial_tail):
        problems.insert(0, Problem(1, f'missing header line {{"format": "{FORMAT}", "created_at": ...}}'))
    if partial_tail:
        problems.append(
            Problem(
                len(lines) + 1,
                "last line has no newline: it is still being written or was "
                "cut short, and is not part of the view",
            )
        )
    return ParsedMemory(header, tuple(records), tuple(problems), partial_tail, tuple(malformed))


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise MemsyncError(f"read {path}: no such memory file. Create it with `memsync remember`") from None
    except OSError as exc:
        raise MemsyncError(f"read {path}: {exc.strerror or exc}. Check the path and permissions") from None


def read_memory(path: Path) -> ParsedMemory:
    """Read and parse the memory file at ``path``: its header, valid records with their line numbers and
    bytes, problems with line numbers and fields, and a partial last line (excluded from the view).

    Raises MemsyncError when the file cannot be read. Issue 2 "agent-memory/0.1"; DESIGN "View semantics".
    """
    return parse_memory(_read_bytes(path))


def _winner_key(entry: Entry) -> tuple[bool, datetime, bytes]:
    # Among versions of one id, the person's word outranks an inferred rewrite; then later wins.
    return entry.is_user, entry.created, entry.canonical


def _strongly_connected(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion (supersede chains can be long)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _superseded_ids(entries: Sequence[Entry], winners: Mapping[str, Entry]) -> set[str]:
    """Ids that some entry's ``supersedes`` removes from the view.

    Every entry line counts, whatever later happened to it (tombstone, expiry, a newer version), except:
    self-references; an inferred entry naming a user entry; and, in a cycle, the edges into the cycle's
    latest member by (created_at, id), which therefore survives.
    """
    edges: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        target = entry.supersedes
        if target is None or target == entry.id:
            continue
        victim = winners.get(target)
        if victim is not None and victim.is_user and not entry.is_user:
            continue
        edges[entry.id].add(target)

    def order(node: str) -> tuple[datetime, str]:
        # Every member of a cycle has an outgoing edge, so it is an entry id with a winner.
        return winners[node].created, node

    while True:
        cycles = [
            c
            for c in _strongly_connected(set(edges) | {t for ts in edges.values() for t in ts}, edges)
            if len(c) > 1
        ]
        if not cycles:
            break
        for cycle in cycles:
            latest = max(cycle, key=order)
            for member in cycle:
                edges[member].discard(latest)
    return {target for targets in edges.values() for target in targets}


def build_view(records: Iterable[Record], now: datetime) -> list[Entry]:
    """The current entries of a memory file at ``now`` (an aware datetime), sorted by (created_at, id).

    A tombstone is final for its id. Among versions of one id, a ``user`` version outranks an inferred one,
    then later (created_at, canonical bytes) wins: file position never matters, so every permutation of
    the records gives the same view. Superseded entries drop out (see :func:`_superseded_ids`); expired
    entries are skipped. DESIGN "View semantics (agent-memory/0.1)".
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)  # a naive clock is taken as UTC, like the file's timestamps
    tombstoned: set[str] = set()
    entries: list[Entry] = []
    for record in records:
        if isinstance(record, Tombstone):
            tombstoned.add(record.id)
        else:
            entries.append(record)
    winners: dict[str, Entry] = {}
    for entry in entries:
        current = winners.get(entry.id)
        if current is None or _winner_key(entry) > _winner_key(current):
            winners[entry.id] = entry
    superseded = _superseded_ids(entries, winners)
    live = [
        e
        for e in winners.values()
        if e.id not in tombstoned and e.id not in superseded and not e.expired(now)
    ]
    return sorted(live, key=lambda e: (e.created, e.id))


def scope_matches(entry_scope: str, scope: str | None) -> bool:
    """Whether an entry with ``entry_scope`` applies to a task in ``scope``.

    ``None`` matches everything; ``global`` entries always apply; ``project:<name>`` matches that project
    exactly; a domain entry applies to that domain and its subdomains (``github.com`` applies to
    ``api.github.com``), compared case-insensitively. Spec ``seeds/000`` "Putting it in context".
    """
    if scope is None or entry_scope == "global":
        return True
    if entry_scope.startswith("project:") or scope.startswith("project:"):
        return entry_scope == scope
    domain, wanted = entry_scope.lower().rstrip("."), scope.lower().rstrip(".")
    return wanted == domain or wanted.endswith("." + domain)


def _prompt_rank(entry: Entry) -> tuple[bool, float, float, str]:
    confidence = 1.0 if entry.confidence is None else entry.confidence
    # Sorted ascending: user first, then higher confidence, then newer, then id.
    return (not entry.is_user, -confidence, -entry.created.timestamp(), entry.id)


def render_prompt(
    entries: Iterable[Entry],
    scope: str | None = None,
    kinds: Iterable[str] | None = None,
    max_bytes: int = DEFAULT_PROMPT_BYTES,
) -> str:
    """The prompt block for ``entries`` (a view): entries whose scope applies to ``scope`` and whose kind
    is in ``kinds`` (default all), grouped by kind in KINDS order, user entries first, then by confidence,
    newest first, id. Cut at whole entries so the UTF-8 result is at most ``max_bytes`` bytes, with a
    note saying how many were left out. Returns "" when nothing applies; when entries apply but not even
    the title and the note fit, the note alone (over ``max_bytes``: the agent must learn that memory was
    left out, not read an empty block). Spec "Putting it in context".
    """
    wanted = set(KINDS if kinds is None else kinds)
    unknown = wanted - set(KINDS)
    if unknown:
        raise MemsyncError(f"prompt: unknown kind {sorted(unknown)[0]!r}. Use one of {', '.join(KINDS)}")
    applicable = (e for e in entries if e.kind in wanted and scope_matches(e.scope, scope))
    chosen = sorted(applicable, key=_prompt_rank)
    title = "# Memory" + (f" ({scope})" if scope else "")
    # Size of the block holding the first k ranked entries, without the note: title, headings, lines.
    size = _utf8_len(title) + 1
    sizes = [size]
    kinds_seen: set[str] = set()
    for entry in chosen:
        if entry.kind not in kinds_seen:
            kinds_seen.add(entry.kind)
            size += _utf8_len(_heading(entry.kind)) + 1
        size += _utf8_len(prompt_line(entry)) + 1
        if size > max_bytes:
            break
        sizes.append(size)
    for count in range(len(sizes) - 1, -1, -1):
        left_out = len(chosen) - count
        if sizes[count] + (_utf8_len(_note(left_out)) + 1 if left_out else 0) <= max_bytes:
            return _render(title, chosen[:count], left_out)
    return _note(len(chosen)) + "\n"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _heading(kind: str) -> str:
    return f"## {KIND_TITLES[kind]}"


def prompt_line(entry: Entry) -> str:
    """The one line ``render_prompt`` writes for ``entry``: ``- text``, plus `` (user)`` for a user entry."""
    return f"- {' '.join(entry.text.split())}" + (" (user)" if entry.is_user else "")


def _note(left_out: int) -> str:
    return f"({left_out} more {'entry' if left_out == 1 else 'entries'} left out to fit the size limit)"


def _render(title: str, entries: Sequence[Entry], left_out: int) -> str:
    if not entries and not left_out:
        return ""
    lines = [title]
    for kind in KINDS:
        group = [e for e in entries if e.kind == kind]
        if group:
            lines.append(_heading(kind))
            lines.extend(prompt_line(e) for e in group)
    if left_out:
        lines.append(_note(left_out))
    return "\n".join(lines) + "\n"


def default_memory_path() -> Path:
    """``~/.agent-memory/<user>.jsonl``: the memory file used when none is given."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "memory"
    return Path.home() / ".agent-memory" / f"{user}.jsonl"


def compacted(parsed: ParsedMemory, data: bytes, now: datetime) -> bytes:
    """The compacted form of a memory file's bytes ``data`` (parsed as ``parsed``) at ``now``: its header
    line (a new one if it had none), then in file order the live entries, every tombstone, every entry
    that supersedes another, and the malformed lines, each line's original bytes, identical lines once.
    Issue 2 "compact". Superseding entries are kept, dead or not, like tombstones: each says its target
    is gone, and without it a copy that holds the target but not the superseder would bring it back."""
    live = {entry.canonical for entry in parsed.view(now)}
    keep: dict[int, bytes] = dict(parsed.malformed)
    seen: set[bytes] = set()
    for numbered in parsed.records:
        record = numbered.record
        canonical = canonical_json(record.to_obj())
        marker = isinstance(record, Tombstone) or record.supersedes not in (None, record.id)
        if (marker or canonical in live) and canonical not in seen:
            seen.add(canonical)
            keep[numbered.line] = numbered.raw
    if parsed.header is not None:
        header = data.split(b"\n", 1)[0]
        keep.pop(1, None)
    else:
        header = canonical_json(Header(created_at=format_timestamp(now)).to_obj())
    return b"".join(line + b"\n" for line in [header, *(keep[n] for n in sorted(keep))])


def ensure_compactable(what: str, parsed: ParsedMemory) -> None:
    """Raise MemsyncError("<what> ...") unless ``parsed`` is agent-memory/0.1 (or has no header) and
    does not end in an unfinished line (a writer may be busy): what compaction refuses."""
    if parsed.header is not None and parsed.header.format != FORMAT:
        raise MemsyncError(
            f"{what} is {parsed.header.format!r}, not {FORMAT!r}. Use a tool that knows that format"
        )
    if parsed.partial_tail:
        raise MemsyncError(
            f"{what} ends in an unfinished line (a writer may be busy). Retry when no agent is writing"
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

    @contextmanager
    def _locked(self, action: str) -> Iterator[None]:
        """Hold the writer lock, waiting at most APPEND_LOCK_TIMEOUT_S seconds for another writer."""
        lock = writer_lock(self.path)
        try:
            # Another writer holds it for about a millisecond (one append): poll often, not every 50 ms.
            lock.acquire(timeout=APPEND_LOCK_TIMEOUT_S, poll_interval=APPEND_LOCK_POLL_S)
        except filelock.Timeout:
            raise MemsyncError(
                f"{action} {self.path}: another memsync process held its lock for "
                f"{APPEND_LOCK_TIMEOUT_S:.0f} s. Retry, or stop the stuck process"
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _ensure_header(self, now: datetime) -> None:
        """Create the file with its header line if it is missing or empty (caller holds the lock)."""
        try:
            if self.path.stat().st_size > 0:
                return
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        header = Header(created_at=format_timestamp(now))
        append_once(self.path, canonical_json(header.to_obj()) + b"\n", create=True)

    def create(self, now: datetime | None = None) -> None:
        """Create the file (and its directory) with a header line; does nothing if it already has content.

        ``now`` (aware) defaults to the current time. Raises MemsyncError on OS errors."""
        with self._locked("create"):
            self._ensure_header(now or datetime.now(UTC))

    def read(self) -> ParsedMemory:
        """read_memory of this file (MemsyncError if it cannot be read)."""
        return read_memory(self.path)

    def append(self, record: Record, now: datetime | None = None) -> None:
        """Append one entry or tombstone as one line: validated, scanned for secrets (entries), written with
        one O_APPEND write under the writer lock, creating the file with a header if needed.

        Raises MemsyncError for an invalid record, a secret in an entry, an unsupported file format,
        or an OS error. Issue 2 "Create a file ... append"; DESIGN I5.
        """
        obj = record.to_obj()
        _, errors = record_from_obj(obj)
        if errors:
            key, message = errors[0]
            raise MemsyncError(f"append to {self.path}: field {key!r}: {message}. Fix the value and retry")
        line = canonical_json(obj) + b"\n"
        if isinstance(record, Entry):
            _refuse_secrets(self.path, record)
        with self._locked("append"):
            self._ensure_header(now or datetime.now(UTC))
            fmt = self._header_format()
            if fmt is not None and fmt != FORMAT:
                raise MemsyncError(
                    f"append to {self.path}: the file is {fmt!r}, not {FORMAT!r}. "
                    "Use a tool that writes that format"
                )
            self._write(line)

    def _header_format(self) -> str | None:
        """The ``format`` of the first line when it is a header (reads only that line)."""
        try:
            with self.path.open("rb") as stream:
                obj = parse_record(stream.readline().rstrip(b"\n"))
        except OSError as exc:
            raise MemsyncError(f"read {self.path}: {exc.strerror or exc}. Check its permissions") from None
        if obj is None or not is_header(obj):
            return None
        fmt = obj.get("format")
        return fmt if isinstance(fmt, str) else None

    def _write(self, line: bytes) -> None:
        try:
            append_once(self.path, line)
        except OSError as exc:
            reason = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
            raise MemsyncError(
                f"append to {self.path}: {reason}. Free space or fix permissions, then retry"
            ) from None

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

        Raises MemsyncError for invalid fields, a secret in the entry, or an OS error.
        """
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

    def supersede(
        self,
        old_id: str,
        text: str,
        *,
        kind: str | None = None,
        scope: str | None = None,
        tags: Iterable[str] | None = None,
        source: str = USER_SOURCE,
        confidence: float = 1.0,
        expires_at: str | None = None,
        now: datetime | None = None,
    ) -> Entry:
        """Append an entry that replaces ``old_id``; kind, scope and tags default to the old entry's.

        Raises MemsyncError when ``old_id`` is unknown, or when an inferred entry (source not ``user``)
        would replace a user entry (the view would ignore it: DESIGN "View semantics")."""
        versions = self._entry_versions(self.read(), old_id)
        if not versions:
            raise MemsyncError(
                f"supersede {old_id}: {self.path} has no entry with that id. "
                f"List ids with `memsync show {self.path}`"
            )
        old = max(versions, key=_winner_key)
        if old.is_user and source != USER_SOURCE:
            raise MemsyncError(
                f"supersede {old_id}: it came from the user and an inferred entry "
                f"(source {source!r}) cannot replace it. Ask the user, or use source 'user'"
            )
        return self.remember(
            text,
            kind or old.kind,
            scope=old.scope if scope is None else scope,
            tags=old.tags if tags is None else tags,
            source=source,
            confidence=confidence,
            expires_at=expires_at,
            supersedes=old_id,
            now=now,
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
        an unfinished line, or when it changed while being compacted. Issue 2 "compact"; DESIGN I5.
        """
        lock = writer_lock(self.path)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            raise MemsyncError(
                f"compact {self.path}: another memsync process is writing it. Retry when it is done"
            ) from None
        try:
            before = _read_bytes(self.path)
            parsed = parse_memory(before)
            ensure_compactable(f"compact {self.path}: the file", parsed)
            out = compacted(parsed, before, now or datetime.now(UTC))
            if _read_bytes(self.path) != before:
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


def _refuse_secrets(path: Path, entry: Entry) -> None:
    """Raise MemsyncError when the entry holds a secret: its text as written (multi-line text scans line
    by line), then every other field as one JSON line (``"api_key":"..."`` reads as an assignment)."""
    others = {key: value for key, value in entry.to_obj().items() if key != "text"}
    findings = scan_text(entry.text + "\n" + canonical_json(others).decode("utf-8"))
    if findings:
        detectors = ", ".join(sorted({f.detector for f in findings}))
        raise MemsyncError(
            f"remember in {path}: the entry looks like it holds a secret ({detectors}). "
            "Memory must never store secrets: remove it, or describe where the secret lives"
        )


def check_memory_file(path: Path) -> list[str]:
    """Validate a memory file: one ``path:line: message`` string per problem (malformed line, bad field,
    missing header, partial last line, an id used by entries with different content), sorted by line.

    Raises MemsyncError when the file cannot be read. Issue 2 "memsync check".
    """
    parsed = read_memory(path)
    problems = list(parsed.problems)
    first_line: dict[str, tuple[int, bytes]] = {}
    for numbered in parsed.records:
        rec = numbered.record
        if not isinstance(rec, Entry):
            continue
        seen = first_line.setdefault(rec.id, (numbered.line, rec.canonical))
        if seen[1] != rec.canonical:
            problems.append(
                Problem(
                    numbered.line,
                    f"duplicate id {rec.id!r} with different content "
                    f"(first at line {seen[0]}); the view keeps one",
                    "id",
                )
            )
    return [p.format(path) for p in sorted(problems, key=lambda p: p.line)]

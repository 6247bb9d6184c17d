"""Hand one agent's memory to another agent, in the receiver's format, with provenance (issue 6).

An *agent* is a memory file (agent-memory/0.1, ``seeds/000``) or a role directory (the markdown skill,
``seeds/002``). FROM's live view is read (JSONL: :func:`build_view`, so no tombstoned, superseded or
expired entry; role directory: curated entries and the ``- [HH:MM]`` items of the 3 most recent daily
logs), filtered, scanned for secrets and written to TO with TO's own writers (one ``O_APPEND`` line per
JSONL entry, whole curated files replaced atomically, one daily-log line), so a running daemon publishes
the handoff like any other write.

Mapping between the formats (documented in the README's handoff section):

======================  =====================================  =====================================
what                    JSONL entry -> curated entry           curated entry / log item -> JSONL entry
======================  =====================================  =====================================
kind / type             preference->user, lesson->feedback,    user->preference, project->fact,
                        avoid->feedback, fact->project,        reference->source, feedback->avoid when
                        source->reference                      its description says never/don't/do not/
                                                               avoid/must not, else lesson; other or no
                                                               type->lesson; a daily-log item->lesson
text                    description (whitespace joined); the   text = description (else name, else
                        body keeps a multi-line text whole     slug); a log item's text as written
id                      -                                      derived from (FROM, slug) or
                                                               (FROM, log date, time, text)
provenance              a ``Source:`` line ending the body     tag ``handoff:<FROM>``; source
                        (id, kind, scope, source, confidence)  ``role:<FROM>/<file>`` (``user`` for
                        + one line in TO's daily log           type user); confidence 1.0 for user,
                                                               0.9 curated, 0.5 log item
======================  =====================================  =====================================

Round trips add nothing: a curated entry whose body carries the ``Source:`` line of a memory-file entry
goes back to a memory file as that entry (same id, kind, scope, source, confidence, created_at); a
memory-file entry whose id a role directory derived itself (from one of its slugs or daily-log items) is
already present there; a copied curated file is compared without the ``Source:`` lines handoffs added.

Filters: ``--kind`` matches the (mapped) kind; ``--tag`` JSONL ``tags`` or frontmatter ``tags``;
``--since`` JSONL ``created_at``, frontmatter ``updated``/``created``/``modified`` (else the file's
mtime) or a log item's date and time; ``--scope`` JSONL ``scope`` (as ``to_prompt``: global entries
always match); ``--min-confidence`` JSONL ``confidence`` (none = 1.0). A filter on a field a format
lacks keeps everything: ``--scope`` and ``--min-confidence`` on curated entries and log items, ``--tag``
on log items.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, Literal

from memsync.argcheck import existing_parent
from memsync.clock import refuse_if_ahead
from memsync.config import config_path, load_config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.memoryfile import MemoryFile
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.prompt import prompt_line, render_prompt
from memsync.formats.jsonl.records import (
    FORMAT,
    KINDS,
    USER_SOURCE,
    Entry,
    Header,
    Tombstone,
    canonical_json,
    is_header,
    parse_record,
)
from memsync.formats.jsonl.timestamps import format_timestamp
from memsync.formats.jsonl.validate import record_from_obj
from memsync.formats.jsonl.view import scope_matches
from memsync.formats.markdown.fields import entry_head
from memsync.formats.markdown.index import IndexBlock
from memsync.formats.markdown.index_items import put_index_item
from memsync.formats.markdown.reading import CuratedEntry, read_daily_log
from memsync.formats.markdown.roledir import RoleDir
from memsync.formats.markdown.skill import DAILY_DIR, INDEX_NAME, slugify
from memsync.formats.markdown.snapshot import RECENT_LOGS
from memsync.fsio import atomic_write
from memsync.secrets import scan_text

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 32_000
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
TYPE_TO_KIND = {"user": "preference", "feedback": "lesson", "project": "fact", "reference": "source"}
# A curated entry was written on purpose, so it ranks above an agent's first guess but below the user's
# word; a daily-log item is an episodic note.
CURATED_CONFIDENCE = 0.9
LOG_CONFIDENCE = 0.5
# How many words, and at most how many characters, of a JSONL text name the curated entry it becomes (the
# slug, a file name, comes from the name).
NAME_WORDS = 8
NAME_CHARS = 60
SLUG_CHARS = 120  # well under the 255-byte file-name limit, whatever NFKD makes of odd characters
# Slugs listed by name in TO's daily-log line before "and N more".
LOGGED_SLUGS = 10

_AVOID_WORDS = re.compile(r"\b(?:never|don'?t|do not|avoid|must not)\b", re.IGNORECASE)
_DATE_KEYS = ("updated", "modified", "created")
# The Source line a JSONL entry handed to a role directory carries (see _source_line): it lets the entry
# go back to a memory file as itself (same id, kind, scope, source, confidence, created_at).
_SOURCE_PREFIX = "Source: handoff from "
_ENTRY_SOURCE = re.compile(
    r"Source: handoff from (?P<giver>\S+), entry (?P<id>[0-9a-f]{12}) \(kind (?P<kind>\w+), "
    r"scope (?P<scope>.+?)(?:, source (?P<source>.+?))?(?:, confidence (?P<confidence>[0-9.eE+-]+))?, "
    r"created (?P<created>\S+)\)[ \t]*\r?"
)
# _ENTRY_SOURCE backtracks over its optional parts (cubic in the length of a line of ", source ..."):
# it is only tried on lines this short, longer than any Source line a handoff writes.
_SOURCE_LINE_CHARS = 2000
# The daily log a memory-file entry was handed from: source role:<agent>/daily/<day>.md.
_LOG_SOURCE = re.compile(r"^role:[^/]+/(?P<file>daily/\d{4}-\d{2}-\d{2}\.md)$")

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

    ``label`` names it in reports; ``text`` is the JSONL text, curated description or log text.
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

    ``handed``/``present`` are item labels; ``prompt`` is the block for ``--format prompt``; ``written``
    lists the files written or appended to.
    """

    source: str
    target: str
    handed: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    skipped: tuple[Skip, ...] = ()
    dry_run: bool = False
    prompt: str | None = None
    written: tuple[Path, ...] = ()

    def summary(self) -> str:
        """``N handed, M already present, K skipped (why)``; prefixed ``dry run:`` for a dry run."""
        reasons = Counter(skip.reason for skip in self.skipped)
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        text = (
            f"{len(self.handed)} handed, {len(self.present)} already present, "
            f"{len(self.skipped)} skipped" + (f" ({why})" if why else "")
        )
        return f"dry run: {text}; nothing written" if self.dry_run else text


def kind_for_type(curated_type: str | None, description: str) -> str:
    """The JSONL kind of a curated entry of ``curated_type`` (see the module doc's mapping)."""
    if curated_type == "feedback" and _AVOID_WORDS.search(description):
        return "avoid"
    return TYPE_TO_KIND.get(curated_type or "", "lesson")


def type_for_kind(kind: str) -> str:
    """The curated type a JSONL ``kind`` becomes: preference->user, lesson/avoid->feedback, fact->project,
    source->reference."""
    return KIND_TO_TYPE[kind]


def derived_id(from_name: str, key: str) -> str:
    """A stable 12-hex entry id for something FROM holds without an id (a curated slug, a log item), so
    handing it again finds it already present. Issue 6: the id is derived from (FROM, slug)."""
    return hashlib.sha256(f"memsync-handoff\0{from_name}\0{key}".encode()).hexdigest()[:12]


def _log_id(from_name: str, day: str, hhmm: str, text: str) -> str:
    """The derived id of the daily-log item ``- [hhmm] text`` of ``daily/<day>.md``."""
    return derived_id(from_name, f"daily/{day}.md\0{hhmm}\0{text}")


def agent_name(path: Path, fmt: AgentFormat) -> str:
    """The name of the agent at ``path``: a memory file's stem, a role directory's name (``.claude/memory``
    -> ``claude``)."""
    path = Path(os.path.abspath(path))
    if fmt == "jsonl":
        return path.stem
    if path.name == "memory" and path.parent.name.lstrip("."):
        return path.parent.name.lstrip(".")
    return path.name


def _tracked() -> list[tuple[set[str], Path]]:
    """Every tracked live path with the names it answers to (empty without a config file), and every
    agent directly inside a tracked folder: a role directory in ``~/.agents/memory`` (tracked as
    ``roles``), a ``*.jsonl`` memory file in ``~/.agent-memory``."""
    if not config_path().is_file():
        return []
    result = []
    for store in load_config().stores.values():
        for track in store.tracks:
            fmt: AgentFormat = "jsonl" if track.live.suffix == ".jsonl" else "role"
            names = {
                track.live.name,
                agent_name(track.live, fmt),
                track.store_path,
                track.store_path.rsplit("/", 1)[-1],
            }
            result.append((names, track.live))
            result.extend(_folder_members(track.live, track.store_path))
    return result


def _is_role(folder: Path) -> bool:
    """True for a role directory: it holds the index or daily logs."""
    return (folder / INDEX_NAME).exists() or (folder / DAILY_DIR).is_dir()


def _folder_members(folder: Path, store_path: str) -> list[tuple[set[str], Path]]:
    """The agents directly inside tracked ``folder`` with their names: subdirectories (roles) and
    ``*.jsonl`` files; none when ``folder`` is itself a role directory (its ``daily/`` is no role)."""
    if _is_role(folder) or not folder.is_dir():
        return []
    members = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_dir():
            members.append(({child.name, f"{store_path}/{child.name}"}, child))
        elif child.suffix == ".jsonl" and child.is_file():
            members.append(({child.name, child.stem, f"{store_path}/{child.name}"}, child))
    return members


def _is_memory_file(path: Path) -> bool:
    if path.suffix == ".jsonl":
        return True
    try:
        with path.open("rb") as stream:
            obj = parse_record(stream.readline().rstrip(b"\r\n"))
    except OSError:
        return False
    return obj is not None and is_header(obj)


def resolve_agent(spec: str, *, create: bool = False) -> Agent:
    """Resolve FROM or TO: a tracked role or memory file by name, else a path (``~`` expanded).

    A name without ``/`` is looked up among the tracked paths of the config first. With ``create`` (TO), a
    path that does not exist is accepted: ``*.jsonl`` as a new memory file, anything else as a new role
    directory (nothing is created here). Raises MemsyncError for an unknown name, an ambiguous name, a
    missing FROM, or a file that is not a memory file. Issue 6 "FROM and TO name an agent".
    """
    if not spec.strip():
        raise MemsyncError("handoff: an agent name is empty. Give a tracked role, a memory file or a path")
    if "/" not in spec and not spec.startswith("~"):
        matches = sorted({live for names, live in _tracked() if spec in names})
        if len(matches) > 1:
            listed = ", ".join(str(m) for m in matches)
            raise MemsyncError(f"handoff: {spec!r} names several tracked paths ({listed}). Give the path")
        if matches:
            live = matches[0]
            fmt: AgentFormat = "jsonl" if live.suffix == ".jsonl" else "role"
            return Agent(agent_name(live, fmt), live, fmt)
    path = Path(spec).expanduser()
    if path.is_dir():
        return Agent(agent_name(path, "role"), path, "role")
    if path.is_file():
        if not _is_memory_file(path):
            raise MemsyncError(
                f"handoff: {path} is neither a memory file (*.jsonl) nor a role directory. "
                "Give a memory file, a role directory or a tracked name"
            )
        return Agent(agent_name(path, "jsonl"), path, "jsonl")
    if path.exists() or not create:
        names = sorted(
            agent_name(live, "jsonl") if live.suffix == ".jsonl" else agent_name(live, "role")
            for _, live in _tracked()
            if live.suffix == ".jsonl" or _is_role(live)
        )
        known = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "") if names else "none"
        raise MemsyncError(
            f"handoff: no tracked agent or path {spec!r} (tracked agents here: {known}). "
            "Give one of those names or an existing path"
        )
    if "/" not in spec and path.suffix != ".jsonl":
        raise MemsyncError(
            f"handoff: {spec!r} is not a tracked agent. To create a new role that syncs, "
            f"give its path in a tracked folder, such as ~/.agents/memory/{spec}"
        )
    path = existing_parent(path, "TO")
    fmt = "jsonl" if path.suffix == ".jsonl" else "role"
    return Agent(agent_name(path, fmt), path, fmt)


def parse_since(value: str) -> datetime:
    """``--since``: a date (``2026-11-01``, midnight UTC) or an ISO-8601 time (no offset = UTC) -> aware
    datetime. Raises MemsyncError otherwise."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise MemsyncError(
            f"handoff: --since {value!r} is not a date. Give one such as 2026-11-01 or 2026-11-01T09:00:00Z"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _as_datetime(datetime.fromisoformat(value.strip()))
        except ValueError:
            return None
    return None


def _curated_created(entry: CuratedEntry) -> datetime:
    """``updated``, ``modified`` or ``created`` of the frontmatter (top level or under ``metadata:``),
    else the file's mtime."""
    metadata = entry.fields.get("metadata")
    for fields in (entry.fields, metadata if isinstance(metadata, dict) else {}):
        for key in _DATE_KEYS:
            moment = _as_datetime(fields.get(key))
            if moment is not None:
                return moment
    return datetime.fromtimestamp(entry.path.stat().st_mtime, UTC)


def _curated_tags(entry: CuratedEntry) -> tuple[str, ...]:
    tags = entry.fields.get("tags")
    if isinstance(tags, str):
        return tuple(t.strip() for t in tags.split(",") if t.strip())
    if isinstance(tags, list):
        return tuple(str(t) for t in tags)
    return ()


def _entry_items(path: Path, now: datetime) -> list[Item]:
    if not path.exists():
        return []
    return [
        Item(
            "entry",
            f"entry {e.id}",
            e.kind,
            e.text,
            e.created,
            tags=e.tags,
            scope=e.scope,
            confidence=e.confidence,
            entry=e,
        )
        for e in read_memory(path).view(now)
    ]


def _handed_entry(curated: CuratedEntry, text: str) -> Entry | None:
    """The memory-file entry a curated entry was handed from (its Source line), with its current text;
    ``None`` for an entry written in the role directory itself or a Source line that no longer parses."""
    matches = [
        match
        for line in curated.body.split("\n")
        if line.startswith(_SOURCE_PREFIX) and len(line) <= _SOURCE_LINE_CHARS
        if (match := _ENTRY_SOURCE.fullmatch(line))
    ]
    if not matches:
        return None
    fields = matches[-1].groupdict()  # the last Source line is the one the latest handoff wrote
    obj = {
        "id": fields["id"],
        "kind": fields["kind"],
        "text": text,
        "scope": fields["scope"],
        "tags": [HANDOFF_TAG + fields["giver"]],
        "source": fields["source"],
        "confidence": None if fields["confidence"] is None else float(fields["confidence"]),
        "created_at": fields["created"],
    }
    record, errors = record_from_obj(obj)
    return record if isinstance(record, Entry) and not errors else None


def _role_items(path: Path) -> list[Item]:
    if not path.exists():
        return []
    role = RoleDir(path)
    items = []
    for curated in role.entries():
        text = " ".join((curated.description or curated.name or curated.slug).split())
        entry = _handed_entry(curated, text)
        if entry is not None:
            items.append(
                Item(
                    "curated",
                    curated.path.name,
                    entry.kind,
                    text,
                    entry.created,
                    tags=entry.tags,
                    scope=entry.scope,
                    confidence=entry.confidence,
                    entry=entry,
                    curated=curated,
                )
            )
            continue
        items.append(
            Item(
                "curated",
                curated.path.name,
                kind_for_type(curated.type, text),
                text,
                _curated_created(curated),
                tags=_curated_tags(curated),
                curated=curated,
            )
        )
    for daily in role.daily_logs()[-RECENT_LOGS:]:
        for note in daily.items:
            if RECEIPT_MARK in note.text:
                continue
            moment = datetime.fromisoformat(f"{daily.date}T{note.time}:00+00:00")
            items.append(
                Item(
                    "log",
                    f"daily/{daily.path.name} [{note.time}]",
                    "lesson",
                    note.text,
                    moment,
                    log_date=daily.date,
                    log_time=note.time,
                )
            )
    return items


def read_items(agent: Agent, now: datetime) -> list[Item]:
    """FROM's live view as items: a memory file's view at ``now``; a role directory's curated entries and
    the ``- [HH:MM]`` items of its 3 most recent daily logs, except the receipts handoff itself logged.
    A missing path has none."""
    return _entry_items(agent.path, now) if agent.format == "jsonl" else _role_items(agent.path)


def _provenance_tags(tags: Sequence[str], from_name: str) -> tuple[str, ...]:
    """``tags`` plus ``handoff:<FROM>``, unless an earlier handoff already named the agent it came from."""
    if any(tag.startswith(HANDOFF_TAG) for tag in tags):
        return tuple(tags)
    return (*tags, HANDOFF_TAG + from_name)


def giver(item: Item, from_name: str) -> str:
    """Who first handed ``item`` over: the agent its ``handoff:`` tag names, else ``from_name``."""
    tagged = [tag[len(HANDOFF_TAG) :] for tag in item.tags if tag.startswith(HANDOFF_TAG)]
    return tagged[0] if tagged else from_name


def as_entry(item: Item, from_name: str) -> Entry:
    """The agent-memory/0.1 entry ``item`` becomes in a memory file (see the module doc's mapping)."""
    if item.entry is not None:
        return replace(item.entry, tags=_provenance_tags(item.entry.tags, from_name))
    tags = _provenance_tags(item.tags, from_name)
    if item.curated is not None:
        is_user = item.curated.type == "user"
        return Entry(
            id=derived_id(from_name, item.curated.slug),
            kind=item.kind,
            text=item.text,
            created_at=format_timestamp(item.created),
            tags=tags,
            source=USER_SOURCE if is_user else f"role:{from_name}/{item.curated.path.name}",
            confidence=1.0 if is_user else CURATED_CONFIDENCE,
        )
    return Entry(
        id=_log_id(from_name, item.log_date, item.log_time, item.text),
        kind=item.kind,
        text=item.text,
        created_at=format_timestamp(item.created),
        tags=(*tags, LOG_TAG),
        source=f"role:{from_name}/daily/{item.log_date}.md",
        confidence=LOG_CONFIDENCE,
    )


def _payload(item: Item, from_name: str, whole_files: bool) -> str:
    """What handing ``item`` over writes: a curated file whole (copied to a role directory), else the
    entry line (every field a memory file or a converted curated entry carries)."""
    if whole_files and item.curated is not None:
        return item.curated.head + item.curated.body
    return canonical_json(as_entry(item, from_name).to_obj()).decode("utf-8")


def _secret_skips(items: Iterable[Item], from_name: str, whole_files: bool) -> tuple[list[Item], list[Skip]]:
    """Split ``items`` into the clean ones and skips for those whose payload the scanner flags (DESIGN I6)."""
    clean, skipped = [], []
    for item in items:
        findings = scan_text(_payload(item, from_name, whole_files))
        if findings:
            detectors = ", ".join(sorted({f.detector for f in findings}))
            skipped.append(Skip(item.label, "possible secret", f"{detectors}, line {findings[0].line}"))
        else:
            clean.append(item)
    return clean, skipped


class _Plan:
    """What a handoff does, gathered before anything is written (so a dry run reports the same)."""

    def __init__(self) -> None:
        self.handed: list[str] = []
        self.present: list[str] = []
        self.skipped: list[Skip] = []


def _to_memory_file(
    target: Agent, items: Sequence[Item], from_name: str, plan: _Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Append each item's entry to TO unless TO already has a record with its id (ids are kept)."""
    records = read_memory(target.path).records if target.path.exists() else ()
    deleted = {r.record.id for r in records if isinstance(r.record, Tombstone)}
    known = {r.record.id for r in records}
    entries = []
    for item in items:
        entry = as_entry(item, from_name)
        if entry.id in deleted:
            plan.skipped.append(Skip(item.label, f"deleted in {target.name}", f"entry {entry.id}"))
        elif entry.id in known:
            plan.present.append(item.label)
        else:
            known.add(entry.id)
            plan.handed.append(item.label)
            entries.append(entry)
    if dry_run:
        return []
    memory = MemoryFile(target.path)
    memory.create(now)
    for entry in entries:
        memory.append(entry, now)
    return [target.path]


def _source_line(from_name: str, item: Item) -> str:
    if item.curated is not None:
        return f"Source: handoff from {from_name} ({item.curated.path.name})"
    entry = item.entry
    if entry is None:
        return f"Source: handoff from {from_name} (daily/{item.log_date}.md, {item.log_time})"
    from_name = giver(item, from_name)
    details = [f"kind {entry.kind}", f"scope {entry.scope}"]
    if entry.source is not None:
        details.append(f"source {entry.source}")
    if entry.confidence is not None:
        details.append(f"confidence {entry.confidence}")  # str(float) reads back exactly
    details.append(f"created {entry.created_at}")
    return f"Source: handoff from {from_name}, entry {entry.id} ({', '.join(details)})"


def _core(data: bytes) -> bytes:
    """A curated file's bytes without the Source lines handoffs appended and without trailing blanks."""
    lines = data.rstrip().split(b"\n")
    while len(lines) > 1 and lines[-1].startswith(_SOURCE_PREFIX.encode()):
        lines.pop()
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
    return b"\n".join(lines).rstrip()


def _with_source(data: bytes, line: str) -> bytes:
    """A curated file's bytes with a provenance line appended to its body (frontmatter untouched)."""
    return data.rstrip(b"\n") + b"\n\n" + line.encode("utf-8") + b"\n"


@dataclass(frozen=True)
class _Curated:
    """A curated entry to write into TO: ``(slug, name)`` candidates in order of preference, the index
    line's ``description``, and the file's bytes: FROM's file plus a ``Source:`` line (role -> role;
    ``original`` is FROM's file as is), or the skill's exact frontmatter and ``body`` (from an entry)."""

    item: Item
    candidates: tuple[tuple[str, str], ...]
    description: str
    type: str = ""
    body: str = ""
    data: bytes | None = None
    original: bytes | None = None

    def render(self, name: str) -> bytes:
        """The bytes of the file under the candidate ``name``."""
        if self.data is not None:
            return self.data
        head = entry_head(name, self.description, self.type)
        return (head + self.body.strip("\n") + "\n").encode("utf-8")

    def same_as(self, path: Path, name: str) -> bool:
        """Whether the existing file ``path`` already holds this entry (as handed under ``name``); for a
        copied file, whatever Source lines handoffs appended to either copy do not count."""
        current = path.read_bytes()
        if self.original is not None:
            return _core(current) == _core(self.original)
        return current == self.render(name)


def _short_name(text: str, entry_id: str) -> str:
    """A curated entry name for a JSONL text: its first words (a name slugify can use)."""
    name = " ".join(text.split()[:NAME_WORDS])[:NAME_CHARS].rstrip(".,;:!?—- ")
    try:
        slugify(name)
    except MemsyncError:
        return f"memory {entry_id}"
    return name


def _curated_plan(item: Item, from_name: str) -> _Curated | None:
    """How ``item`` becomes a curated entry of TO; ``None`` for a daily-log item."""
    source = _source_line(from_name, item)
    if item.curated is not None:
        curated = item.curated
        original = curated.path.read_bytes()
        alt = f"{curated.slug}__from_{slugify(from_name)}"
        return _Curated(
            item,
            ((curated.slug, curated.title), (alt, curated.title)),
            item.text,
            data=_with_source(original, source),
            original=original,
        )
    if item.entry is None:
        return None
    entry = item.entry
    from_name = giver(item, from_name)
    name = _short_name(entry.text, entry.id)
    description = " ".join(entry.text.split())
    body = (entry.text.strip() + "\n\n" if entry.text.strip() != description else "") + source
    names = (name, f"{name} from {from_name}", f"{name} {entry.id}")
    slugs = (slugify(n)[:SLUG_CHARS].rstrip("_") for n in names)
    return _Curated(item, tuple(zip(slugs, names, strict=True)), description, type_for_kind(entry.kind), body)


def _write_curated(role: RoleDir, writes: Sequence[tuple[_Curated, str, str]]) -> list[Path]:
    """Write the planned curated entries (each replaced atomically), then all their index lines at once.

    Adapter: RoleDir.write_entry derives the file from the name and re-renders the frontmatter, so it can
    neither copy an entry byte for byte nor write ``<slug>__from_<from>.md``, and it re-reads every entry
    per call; this reuses markdown's own quoting and index edit (writer lock, item model, atomic replace)
    instead of copying them, with one index rewrite for the whole handoff.
    """
    written, lines = [], []
    for curated, slug, name in writes:
        path = role.path / f"{slug}.md"
        atomic_write(path, curated.render(name))
        written.append(path)
        link = name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        lines.append((f"{slug}.md", f"- [{link}]({slug}.md) — {curated.description}\n"))

    def put_all(blocks: list[IndexBlock]) -> list[IndexBlock]:
        for key, line in lines:
            blocks = put_index_item(blocks, line, {key})
        return blocks

    role.edit_index(put_all)
    return written


def _choose_slug(
    curated: _Curated, folder: Path, taken: set[str]
) -> tuple[str, str] | Literal["present"] | None:
    """The first candidate that is free or already holds this entry (``"present"``); the last candidate
    belongs to this entry alone and is replaced. ``None`` when every candidate is taken in this batch."""
    last = curated.candidates[-1][0]
    for slug, name in curated.candidates:
        if slug in taken:
            continue
        path = folder / f"{slug}.md"
        if path.is_file() and curated.same_as(path, name):
            taken.add(slug)
            return "present"
        if not path.exists() or slug == last:
            taken.add(slug)
            return slug, name
    return None


def _own_entry(entry: Entry, target: Agent, curated_ids: set[str]) -> bool:
    """Whether ``entry`` is one TO itself handed out earlier: its id is derived from TO's name and one of
    TO's curated slugs, or from an item of the daily log its source names."""
    if entry.id in curated_ids:
        return True
    match = _LOG_SOURCE.match(entry.source or "")
    path = target.path / match.group("file") if match else None
    if path is None or not path.is_file():
        return False
    daily = read_daily_log(path)
    return any(entry.id == _log_id(target.name, daily.date, note.time, note.text) for note in daily.items)


def _to_role_dir(
    target: Agent, items: Sequence[Item], from_name: str, plan: _Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Write each item as a curated entry of TO under the first free slug (or find it already there),
    then log one line in TO's daily log saying what was received."""
    taken: set[str] = set()
    writes: list[tuple[_Curated, str, str]] = []
    existing = target.path.glob("*.md") if target.path.is_dir() else ()
    curated_ids = {derived_id(target.name, path.stem) for path in existing}
    for item in items:
        if item.curated is None and item.entry is not None and _own_entry(item.entry, target, curated_ids):
            plan.present.append(item.label)
            continue
        if not item.text.strip():
            plan.skipped.append(Skip(item.label, "empty text", "nothing to describe the entry with"))
            continue
        curated = _curated_plan(item, from_name)
        if curated is None:
            plan.skipped.append(
                Skip(
                    item.label,
                    "daily-log item",
                    "a role directory receives curated entries; its daily log stays its own",
                    listed=False,
                )
            )
            continue
        choice = _choose_slug(curated, target.path, taken)
        if choice is None:
            plan.skipped.append(Skip(item.label, "no free slug in the receiver"))
        elif choice == "present":
            plan.present.append(item.label)
        else:
            plan.handed.append(item.label)
            writes.append((curated, *choice))
    if dry_run:
        return []
    if writes:
        # Its daily-log line is dated by this clock, like an entry (a memory file's appends check it).
        refuse_if_ahead(f"handoff to {target.path}", now.timestamp())
    target.path.mkdir(parents=True, exist_ok=True)
    if not writes:
        return []
    role = RoleDir(target.path)
    written = _write_curated(role, writes)
    slugs = [path.stem for path in written]
    listed = ", ".join(slugs[:LOGGED_SLUGS])
    if len(slugs) > LOGGED_SLUGS:
        listed += f" and {len(slugs) - LOGGED_SLUGS} more"
    noun = "entry" if len(slugs) == 1 else "entries"
    line = f"Received {len(slugs)} {noun} from {from_name} {RECEIPT_MARK}: {listed}"
    written.append(role.log(line, now))
    return written


def _write_out(
    out: Path, items: Sequence[Item], from_name: str, plan: _Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Write a new standalone agent-memory/0.1 file holding the items' entries (refuses to replace one)."""
    if out.exists():
        raise MemsyncError(
            f"handoff: --out {out} already exists. Give a new file name, or hand the memory "
            f"to it with `memsync handoff FROM {out}`"
        )
    lines = [canonical_json(Header(format=FORMAT, created_at=format_timestamp(now)).to_obj())]
    for item in items:
        lines.append(canonical_json(as_entry(item, from_name).to_obj()))
        plan.handed.append(item.label)
    if dry_run:
        return []
    atomic_write(out, b"".join(line + b"\n" for line in lines))
    return [out]


def _prompt(items: Sequence[Item], from_name: str, plan: _Plan, max_bytes: int) -> str:
    """The to_prompt block of the items, cut at whole entries to ``max_bytes``; the ones cut are skipped."""
    entries = [as_entry(item, from_name) for item in items]
    text = render_prompt(entries, max_bytes=max_bytes)
    # render_prompt writes each entry it keeps as exactly one line, the one prompt_line makes.
    shown = Counter(text.splitlines())
    for item, entry in zip(items, entries, strict=True):
        line = prompt_line(entry)
        if shown[line] > 0:
            shown[line] -= 1
            plan.handed.append(item.label)
        else:
            plan.skipped.append(Skip(item.label, "over --max-bytes", f"{max_bytes} bytes", listed=False))
    return text


def handoff(
    from_agent: str,
    to_agent: str | None,
    filters: Filters | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    dry_run: bool = False,
    fmt: Literal["write", "prompt"] = "write",
    out: Path | None = None,
    now: datetime | None = None,
) -> HandoffReport:
    """Hand FROM's live view (filtered, secrets skipped) to TO; see the module doc for every rule.

    ``from_agent``/``to_agent`` are tracked names or paths (:func:`resolve_agent`; a missing TO path is
    created). ``fmt="prompt"`` writes nothing and returns the to_prompt block (at most ``max_bytes`` UTF-8
    bytes, cut at whole entries) in ``prompt``; ``out`` writes a new standalone memory file instead of TO;
    TO may be ``None`` in both cases. ``dry_run`` writes nothing. ``now`` (aware, default the current time)
    decides expiry and dates new files and log lines. Raises MemsyncError for bad input (unknown agent,
    FROM and TO the same, ``max_bytes`` < 1, an existing ``out``). Issue 6.
    """
    source = resolve_agent(from_agent)
    target = resolve_agent(to_agent, create=True) if to_agent is not None else None
    if target is None and fmt == "write" and out is None:
        raise MemsyncError("handoff: no TO given. Name the receiving agent, or use --format prompt or --out")
    return _handoff(
        source, target, filters or Filters(), max_bytes, dry_run, fmt, out, now or datetime.now(UTC)
    )


def import_file(
    path: Path, to_agent: str, dry_run: bool = False, now: datetime | None = None
) -> HandoffReport:
    """Receive a memory file (e.g. one written by ``handoff --out``) into TO, with handoff's dedupe rules:
    entry ids kept, entries TO already has counted as present, secrets skipped.

    Provenance: an entry keeps the ``handoff:<agent>`` tag it came with; others get ``handoff:<file stem>``.
    Raises MemsyncError when ``path`` is not a memory file or TO cannot be resolved. Issue 6 ``import``.
    """
    if not path.is_file() or not _is_memory_file(path):
        raise MemsyncError(f"import: {path} is not a memory file. Give an agent-memory/0.1 file (*.jsonl)")
    source = Agent(agent_name(path, "jsonl"), path, "jsonl")
    return _handoff(
        source,
        resolve_agent(to_agent, create=True),
        Filters(),
        DEFAULT_MAX_BYTES,
        dry_run,
        "write",
        None,
        now or datetime.now(UTC),
    )


def _handoff(
    source: Agent,
    target: Agent | None,
    filters: Filters,
    max_bytes: int,
    dry_run: bool,
    fmt: Literal["write", "prompt"],
    out: Path | None,
    now: datetime,
) -> HandoffReport:
    if max_bytes < 1:
        raise MemsyncError(f"handoff: --max-bytes {max_bytes} must be at least 1. Give a size in bytes")
    if target is not None and Path(os.path.abspath(target.path)) == Path(os.path.abspath(source.path)):
        raise MemsyncError(f"handoff: FROM and TO are the same agent ({source.path}). Name two agents")
    plan = _Plan()
    chosen = [item for item in read_items(source, now) if filters.keeps(item)]
    whole_files = fmt == "write" and out is None and target is not None and target.format == "role"
    items, plan.skipped = _secret_skips(chosen, source.name, whole_files)
    prompt = None
    written: list[Path] = []
    if fmt == "prompt":
        prompt = _prompt(items, source.name, plan, max_bytes)
    elif out is not None:
        written = _write_out(out, items, source.name, plan, dry_run, now)
    else:
        assert target is not None  # handoff() refuses a write without TO
        writer = _to_memory_file if target.format == "jsonl" else _to_role_dir
        written = writer(target, items, source.name, plan, dry_run, now)
    report = HandoffReport(
        source=source.name,
        target=str(out) if out is not None else (target.name if target else "prompt"),
        handed=tuple(plan.handed),
        present=tuple(plan.present),
        skipped=tuple(plan.skipped),
        dry_run=dry_run and fmt == "write",
        prompt=prompt,
        written=tuple(written),
    )
    log.debug("handoff %s -> %s: %s", report.source, report.target, report.summary())
    return report

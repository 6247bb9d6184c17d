"""Items handed to a memory file: each as an agent-memory/0.1 entry with provenance, the ones whose text
the secret scanner flags left out (DESIGN I6)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from memsync.base.paths import config_path
from memsync.commands.handoff.mapping import (
    CURATED_CONFIDENCE,
    HANDOFF_TAG,
    LOG_CONFIDENCE,
    LOG_TAG,
    Agent,
    Item,
    Skip,
    derived_id,
    log_id,
)
from memsync.commands.proposals import gated, propose, reviews_of
from memsync.config.file import Config, StoreConfig
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import USER_SOURCE, Entry, Tombstone
from memsync.formats.jsonl.timestamps import format_timestamp
from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.secrets import scan_text
from memsync.tracks.resolve import load_tracks


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
        id=log_id(from_name, item.log_date, item.log_time, item.text),
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


def secret_skips(items: Iterable[Item], from_name: str, whole_files: bool) -> tuple[list[Item], list[Skip]]:
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


class Plan:
    """What a handoff does, gathered before anything is written (so a dry run reports the same)."""

    def __init__(self) -> None:
        self.handed: list[str] = []
        self.proposed: list[str] = []
        self.present: list[str] = []
        self.skipped: list[Skip] = []


def to_memory_file(
    target: Agent, items: Sequence[Item], from_name: str, plan: Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Append each item's entry to TO unless TO already has a record with its id (ids are kept). A TO that
    a store set to review syncs gets no entry: each is proposed there instead (unless a proposal with its
    text waits or was approved), like an agent's ``remember``."""
    config = load_tracks() if config_path().is_file() else None
    gate = gated(config, target.path)
    if gate is not None and config is not None:
        return _propose(config, gate, target, items, from_name, plan, dry_run)
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


def _propose(
    config: Config,
    gate: StoreConfig,
    target: Agent,
    items: Sequence[Item],
    from_name: str,
    plan: Plan,
    dry_run: bool,
) -> list[Path]:
    """Propose each item's entry for TO in the gated store ``gate`` (see :func:`to_memory_file`)."""
    known = {
        r.proposal.entry.text
        for r in reviews_of(gate)
        if r.outcome is None or r.outcome.verdict == "approved"
    }
    for item in items:
        entry = as_entry(item, from_name)
        if entry.text in known:
            plan.present.append(item.label)
            continue
        known.add(entry.text)
        plan.proposed.append(item.label)
        if not dry_run:
            new = NewEntry(
                entry.text,
                entry.kind,
                entry.scope,
                entry.tags,
                entry.source or USER_SOURCE,
                1.0 if entry.confidence is None else entry.confidence,
                entry.expires_at,
            )
            propose(config, gate, target.path, new)
    return []

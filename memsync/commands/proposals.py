"""Proposals and decisions of the review gate (a store set to ``review = true``): what agents write into
its memory files is a proposal, kept in the store (so it syncs to every member) but in no live file,
hence in no session-start context and no recall, until a person approves it (`memsync review`,
:mod:`memsync.commands.review`).

They are JSON lines appended to :data:`REVIEW_RECORD`, a ``.jsonl`` store path the jsonl driver merges as
a union: two reviewers deciding at once lose nothing. The outcome of a proposal is its earliest decision
by (time, host, id), which every machine computes alike from the same set.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memsync.base.layout import STORE_META_DIR
from memsync.commands.store_records import append_record
from memsync.config.file import Config, StoreConfig
from memsync.errors import MemsyncError
from memsync.memoryfile.file import NewEntry
from memsync.secrets import scan_text
from memsync.tracks.tracked import locate

REVIEW_RECORD = f"{STORE_META_DIR}/review.jsonl"
_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"  # fixed width: the text order is the time order


@dataclass(frozen=True)
class Proposal:
    """The ``entry`` an agent proposed for the memory file at store path ``file``, the host that
    proposed it and when (UTC, ``_TIME``)."""

    id: str
    at: str
    host: str
    file: str
    entry: NewEntry


@dataclass(frozen=True)
class Decision:
    """A person's verdict (``approved`` or ``rejected``) on proposal ``proposal``: who (``by``, on
    ``host``), when, why (a rejection), and the entry id an approval wrote into its live file; or
    ``withdrawn``: the decision ``withdraws`` names is taken back (an undo), as if never made."""

    id: str
    proposal: str
    at: str
    host: str
    by: str
    verdict: str
    why: str = ""
    entry: str = ""
    withdraws: str = ""

    def order(self) -> tuple[str, str, str]:
        """The key that decides between decisions: earliest (time, host, id) wins."""
        return (self.at, self.host, self.id)


@dataclass(frozen=True)
class Review:
    """One proposal, its store, and every decision on it, earliest first."""

    store: str
    proposal: Proposal
    decisions: tuple[Decision, ...] = ()

    @property
    def outcome(self) -> Decision | None:
        """The decision that counts (the earliest), None while the proposal waits."""
        return self.decisions[0] if self.decisions else None


def gated(config: Config | None, live: Path) -> StoreConfig | None:
    """The store set to ``review = true`` whose track holds the live path ``live``, else None (personal
    memory and every store without review are never gated)."""
    found = locate(config, live)
    if config is None or found is None:
        return None
    store = config.stores[found[0]]
    return store if store.review else None


def _str(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key, "")
    return value if isinstance(value, str) else ""


def parse_records(data: bytes) -> tuple[list[Proposal], list[Decision]]:
    """The proposals and decisions in ``data`` (a review record file, peer content): lines that are not
    JSON objects of a known shape are skipped. Never raises."""
    proposals: dict[str, Proposal] = {}
    decisions: dict[str, Decision] = {}
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or not _str(record, "id"):
            continue
        kind, ident = record.get("review"), _str(record, "id")
        if kind == "proposal" and isinstance(record.get("entry"), dict):
            entry = NewEntry.from_record(record["entry"])
            if entry is not None and _str(record, "file"):
                proposals.setdefault(
                    ident,
                    Proposal(ident, _str(record, "at"), _str(record, "host"), _str(record, "file"), entry),
                )
        elif kind == "decision" and record.get("verdict") in ("approved", "rejected", "withdrawn"):
            decisions.setdefault(
                ident,
                Decision(
                    ident,
                    _str(record, "proposal"),
                    _str(record, "at"),
                    _str(record, "host"),
                    _str(record, "by"),
                    str(record["verdict"]),
                    _str(record, "why"),
                    _str(record, "entry"),
                    _str(record, "withdraws"),
                ),
            )
    return list(proposals.values()), list(decisions.values())


def reviews_of(store: StoreConfig) -> list[Review]:
    """Every proposal of ``store`` with its decisions (those withdrawn left out), oldest proposal first
    (none for a store never gated or not created yet)."""
    try:
        data = (store.path / REVIEW_RECORD).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return []
    proposals, decisions = parse_records(data)
    withdrawn = {d.withdraws for d in decisions if d.verdict == "withdrawn"}
    counted = [d for d in decisions if d.verdict != "withdrawn" and d.id not in withdrawn]
    out = []
    for proposal in sorted(proposals, key=lambda p: (p.at, p.host, p.id)):
        mine = sorted((d for d in counted if d.proposal == proposal.id), key=Decision.order)
        out.append(Review(store.name, proposal, tuple(mine)))
    return out


def now_text() -> str:
    return datetime.now(UTC).strftime(_TIME)


def propose(config: Config, store_cfg: StoreConfig, live: Path, new: NewEntry) -> Proposal:
    """Record an agent's entry ``new`` for the live memory file ``live`` of the gated store ``store_cfg`` as a
    proposal (committed in the store, nothing written to ``live``) and return it. Raises
    ``MemsyncError`` (a secret in the text, git failing)."""
    found = locate(config, live)
    assert found is not None and found[0] == store_cfg.name  # ``gated`` chose the store from it
    fields = new.record()
    others = json.dumps({k: v for k, v in fields.items() if k != "text"}, sort_keys=True)
    findings = scan_text(new.text + "\n" + others)
    if findings:
        detectors = ", ".join(sorted({finding.detector for finding in findings}))
        raise MemsyncError(
            f"remember in {live}: the entry looks like it holds a secret ({detectors}). "
            "Memory must never store secrets: remove it, or describe where the secret lives"
        )
    proposal = Proposal("p" + secrets.token_hex(4), now_text(), config.host, found[1], new)
    record = {
        "review": "proposal",
        "id": proposal.id,
        "at": proposal.at,
        "host": proposal.host,
        "file": proposal.file,
        "entry": fields,
    }
    append_record(
        config,
        store_cfg,
        REVIEW_RECORD,
        record,
        f"memsync: proposal {proposal.id} for {proposal.file} (review)",
    )
    return proposal

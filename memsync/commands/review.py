"""`memsync review`: a person approves or rejects the proposals of gated stores
(:mod:`memsync.commands.proposals`).

The approver writes the entry into its live file through the one writer, and that edit syncs like any
other; a machine holding an entry whose approval lost (a concurrent decision came first) forgets it
when it next reviews (:func:`settle`), so every machine ends with the one outcome.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from memsync.commands.memory import write_entry
from memsync.commands.proposals import REVIEW_RECORD, Review, now_text, reviews_of
from memsync.commands.store_records import append_record
from memsync.config.file import Config, StoreConfig
from memsync.errors import MemsyncError
from memsync.formats.quoted import neutralise
from memsync.memoryfile.file import MemoryFile
from memsync.recall.search import written
from memsync.tracks.resolve import load_stores

_SHOWN = 200  # characters of a proposal's text per line of `memsync review`


def _live_of(store_cfg: StoreConfig, store_path: str) -> Path | None:
    """This machine's live path of the store path ``store_path``, from the most specific track mapping
    it; None when no track here maps it."""
    best: tuple[int, Path] | None = None
    for track in store_cfg.tracks:
        root = track.store_path.strip("/")
        if store_path == root:
            live = track.live
        elif store_path.startswith(root + "/"):
            live = track.live / store_path[len(root) + 1 :]
        else:
            continue
        if best is None or len(root) > best[0]:
            best = (len(root), live)
    return None if best is None else best[1]


def _find(config: Config, proposal_id: str) -> tuple[StoreConfig, Review]:
    for store in config.stores.values():
        for review in reviews_of(store):
            if review.proposal.id == proposal_id:
                return store, review
    raise MemsyncError(f"review: no proposal {proposal_id!r} here. List them with `memsync review`")


def _reviewer(config: Config) -> str:
    who = config.identity()
    return f"{who.name} <{who.email}>"


def decide(config_file: Path | None, proposal_id: str, verdict: str, why: str = "") -> str:
    """`memsync review approve|reject ID`: record this person's ``verdict`` on the proposal (a rejection
    with ``why``) and, for an approval that is the outcome, write its entry into this machine's live
    memory file through the one writer. Returns the line to print. Raises ``MemsyncError`` (an unknown
    id, one decided already, no track here for its file, a rejection without a reason, git failing)."""
    config = load_stores(config_file)
    store_cfg, review = _find(config, proposal_id)
    if review.outcome is not None:
        done = review.outcome
        raise MemsyncError(
            f"review {verdict[:-1]} {proposal_id}: it was {done.verdict} by {done.by} on {done.host} at "
            f"{done.at}. Nothing to do"
        )
    if verdict == "rejected" and not why.strip():
        raise MemsyncError(f"review reject {proposal_id}: give the reason with --why TEXT")
    entry_id = ""
    if verdict == "approved":
        live = _live_of(store_cfg, review.proposal.file)
        if live is None:
            raise MemsyncError(
                f"review approve {proposal_id}: store {store_cfg.name} has no track here for "
                f"{review.proposal.file}. Track it (`memsync track PATH --store {store_cfg.name}`), "
                "then approve"
            )
        memory = MemoryFile(live)
        if not live.exists():
            memory.create()
        entry_id = write_entry(memory, review.proposal.entry).id
    record = {
        "review": "decision",
        "id": "d" + secrets.token_hex(6),
        "proposal": proposal_id,
        "at": now_text(),
        "host": config.host,
        "by": _reviewer(config),
        "verdict": verdict,
        "why": why.strip(),
        "entry": entry_id,
    }
    append_record(
        config, store_cfg, REVIEW_RECORD, record, f"memsync: proposal {proposal_id} {verdict} (review)"
    )
    if verdict == "approved":
        return (
            f"approved {proposal_id}: entry {entry_id} written to {_live_of(store_cfg, review.proposal.file)}"
        )
    return f"rejected {proposal_id}: {why.strip()}"


def withdraw(config_file: Path | None, proposal_id: str, decision_id: str) -> str:
    """Take back decision ``decision_id`` on proposal ``proposal_id`` (the UI's undo): the entry an
    approval wrote is forgotten in this machine's live file, and a ``withdrawn`` record makes every machine
    count the proposal as if that decision was never made (it waits again, or a later decision counts).
    Returns the line to show. Raises ``MemsyncError`` (an unknown proposal or decision, git failing)."""
    config = load_stores(config_file)
    store_cfg, review = _find(config, proposal_id)
    decision = next((d for d in review.decisions if d.id == decision_id), None)
    if decision is None:
        raise MemsyncError(f"review: proposal {proposal_id} has no decision {decision_id} to take back")
    live = _live_of(store_cfg, review.proposal.file)
    if decision.entry and live is not None and live.exists():
        memory = MemoryFile(live)
        if not memory.is_forgotten(decision.entry):
            memory.forget(decision.entry)
            written(config, live)
    record = {
        "review": "decision",
        "id": "d" + secrets.token_hex(6),
        "proposal": proposal_id,
        "at": now_text(),
        "host": config.host,
        "by": _reviewer(config),
        "verdict": "withdrawn",
        "withdraws": decision_id,
    }
    append_record(
        config, store_cfg, REVIEW_RECORD, record, f"memsync: decision {decision_id} withdrawn (review)"
    )
    return f"took back the decision '{decision.verdict}' on {proposal_id}"


def my_decision(config_file: Path | None, proposal_id: str) -> str:
    """The id of the latest decision this machine recorded on ``proposal_id``. Raises ``MemsyncError``
    when it has none."""
    config = load_stores(config_file)
    _, review = _find(config, proposal_id)
    mine = [d for d in review.decisions if d.host == config.host]
    if not mine:
        raise MemsyncError(f"review: this machine made no decision on {proposal_id}")
    return max(mine, key=lambda d: d.at).id


def settle(config: Config) -> list[str]:
    """Forget, in this machine's live files, each entry an approval wrote whose decision is not its
    proposal's outcome (a concurrent decision came first): every machine then holds the one outcome.
    Returns a line per entry forgotten. Raises ``MemsyncError`` (a failed write)."""
    lines = []
    for store in config.stores.values():
        for review in reviews_of(store):
            for decision in review.decisions:
                if not decision.entry or decision is review.outcome:
                    continue
                live = _live_of(store, review.proposal.file)
                if live is None or not live.exists():
                    continue
                memory = MemoryFile(live)
                held = any(entry.id == decision.entry for entry in memory.view())
                if held and not memory.is_forgotten(decision.entry):
                    memory.forget(decision.entry)
                    written(config, live)
                    lines.append(
                        f"forgot {decision.entry} in {live}: proposal {review.proposal.id} was "
                        f"{review.outcome.verdict if review.outcome else 'undecided'} first"
                    )
    return lines


def _peer(text: str) -> str:
    """A field a peer wrote (host, reviewer, reason, path), fit to print on one line."""
    return neutralise(text, _SHOWN)


def review_lines(config_file: Path | None, *, every: bool = False) -> list[str]:
    """`memsync review`: settle concurrent decisions (:func:`settle`), then one line per proposal that
    waits (with ``every``, decided ones too, with their outcome and every decision). Peer content is
    printed neutralised. Raises ``MemsyncError`` (no store, a failed write while settling)."""
    config = load_stores(config_file)
    lines = settle(config)
    waiting = 0
    for store in config.stores.values():
        for review in reviews_of(store):
            proposal, outcome = review.proposal, review.outcome
            text = _peer(proposal.entry.text)
            if outcome is None:
                waiting += 1
                lines.append(
                    f"{_peer(proposal.id)}  {store.name}:{_peer(proposal.file)}  from {_peer(proposal.host)} "
                    f"at {_peer(proposal.at)}: {text}"
                )
            elif every:
                decided = [
                    f"{_peer(d.verdict)} by {_peer(d.by)} on {_peer(d.host)} at {_peer(d.at)}"
                    + (f" ({_peer(d.why)})" if d.why else "")
                    for d in review.decisions
                ]
                lines.append(f"{_peer(proposal.id)}  {decided[0]}: {text}")
                lines.extend(f"    also {line} (later: not counted)" for line in decided[1:])
    if not waiting:
        lines.append("no proposal waits for review")
    return lines

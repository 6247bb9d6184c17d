"""Hand one agent's memory to another agent, in the receiver's format, with provenance.

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
text                    description (whitespace joined); the   text = description, then the body
                        body keeps a multi-line text whole     (``curated_text``: at most 4000 chars,
                                                               flagged lines out; no body: name, else
                                                               slug); a log item's text as written
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

import logging
import os
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from memsync.base.defaults import DEFAULT_HANDOFF_BYTES
from memsync.base.fsio import atomic_write
from memsync.base.paths import config_path
from memsync.commands.crossing import handed_crossing
from memsync.commands.handoff.agents import agent_name, is_memory_file, resolve_agent
from memsync.commands.handoff.mapping import Agent, Filters, HandoffReport, Item, Skip
from memsync.commands.handoff.reading import read_items
from memsync.commands.handoff.to_jsonl import Plan, as_entry, secret_skips, to_memory_file
from memsync.commands.handoff.to_role import to_role_dir
from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.prompt import prompt_line, render_prompt
from memsync.formats.jsonl.records import FORMAT, Header
from memsync.formats.jsonl.timestamps import format_timestamp
from memsync.tracks.resolve import load_tracks

log = logging.getLogger(__name__)


def _write_out(
    out: Path, items: Sequence[Item], from_name: str, plan: Plan, dry_run: bool, now: datetime
) -> list[Path]:
    """Write a new standalone agent-memory/0.1 file holding the items' entries (refuses to replace one)."""
    if out.exists():
        raise MemsyncError(
            f"handoff: --out {out} already exists. Give a new file name, or hand the memory "
            f"to it with `memsync handoff FROM {shlex.quote(str(out))}`"
        )
    lines = [canonical_json(Header(format=FORMAT, created_at=format_timestamp(now)).to_obj())]
    for item in items:
        lines.append(canonical_json(as_entry(item, from_name).to_obj()))
        plan.handed.append(item.label)
    if dry_run:
        return []
    atomic_write(out, b"".join(line + b"\n" for line in lines))
    return [out]


def _prompt(items: Sequence[Item], from_name: str, plan: Plan, max_bytes: int) -> str:
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
    max_bytes: int = DEFAULT_HANDOFF_BYTES,
    dry_run: bool = False,
    fmt: Literal["write", "prompt"] = "write",
    out: Path | None = None,
    now: datetime | None = None,
    yes: bool | str = False,
    consent: str = "--yes",
) -> HandoffReport:
    """Hand FROM's live view (filtered, secrets skipped) to TO; see the module doc for every rule.

    ``from_agent``/``to_agent`` are tracked names or paths (:func:`resolve_agent`; a missing TO path is
    created). ``fmt="prompt"`` writes nothing and returns the to_prompt block (at most ``max_bytes`` UTF-8
    bytes, cut at whole entries) in ``prompt``; ``out`` writes a new standalone memory file instead of TO;
    TO may be ``None`` in both cases. ``dry_run`` writes nothing. ``now`` (aware, default the current time)
    decides expiry and dates new files and log lines. When TO is in a store that syncs with a remote
    FROM's store does not, the write needs ``yes``: True, or that store's name (the user's say, asked
    for as ``consent``); the report
    names who receives it. Raises MemsyncError for bad input (unknown agent, FROM and TO the same,
    ``max_bytes`` < 1, an existing ``out``) and, before writing anything, for such a write without ``yes``.
    """
    source = resolve_agent(from_agent)
    target = resolve_agent(to_agent, create=True) if to_agent is not None else None
    if target is None and fmt == "write" and out is None:
        raise MemsyncError("handoff: no TO given. Name the receiving agent, or use --format prompt or --out")
    moved = None
    if target is not None and fmt == "write" and out is None:
        config = load_tracks() if config_path().is_file() else None
        what = f"handoff {source.name} -> {target.name}"
        moved = handed_crossing(config, source.path, target.path, what, consent, dry_run or yes)
    report = _handoff(
        source, target, filters or Filters(), max_bytes, dry_run, fmt, out, now or datetime.now(UTC)
    )
    return report if moved is None else replace(report, receivers=moved.receivers())


def import_file(
    path: Path, to_agent: str, dry_run: bool = False, now: datetime | None = None
) -> HandoffReport:
    """Receive a memory file (e.g. one written by ``handoff --out``) into TO, with handoff's dedupe rules:
    entry ids kept, entries TO already has counted as present, secrets skipped.

    Provenance: an entry keeps the ``handoff:<agent>`` tag it came with; others get ``handoff:<file stem>``.
    Raises MemsyncError when ``path`` is not a memory file or TO cannot be resolved.
    """
    if not path.is_file() or not is_memory_file(path):
        raise MemsyncError(f"import: {path} is not a memory file. Give an agent-memory/0.1 file (*.jsonl)")
    source = Agent(agent_name(path, "jsonl"), path, "jsonl")
    return _handoff(
        source,
        resolve_agent(to_agent, create=True),
        Filters(),
        DEFAULT_HANDOFF_BYTES,
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
    plan = Plan()
    chosen = [item for item in read_items(source, now) if filters.keeps(item)]
    whole_files = fmt == "write" and out is None and target is not None and target.format == "role"
    items, plan.skipped = secret_skips(chosen, source.name, whole_files)
    prompt = None
    written: list[Path] = []
    if fmt == "prompt":
        prompt = _prompt(items, source.name, plan, max_bytes)
    elif out is not None:
        written = _write_out(out, items, source.name, plan, dry_run, now)
    else:
        assert target is not None  # handoff() refuses a write without TO
        writer = to_memory_file if target.format == "jsonl" else to_role_dir
        written = writer(target, items, source.name, plan, dry_run, now)
    report = HandoffReport(
        source=source.name,
        target=str(out) if out is not None else (target.name if target else "prompt"),
        handed=tuple(plan.handed),
        present=tuple(plan.present),
        proposed=tuple(plan.proposed),
        skipped=tuple(plan.skipped),
        dry_run=dry_run and fmt == "write",
        prompt=prompt,
        written=tuple(written),
    )
    log.debug("handoff %s -> %s: %s", report.source, report.target, report.summary())
    return report

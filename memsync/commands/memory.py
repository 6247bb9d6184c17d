"""`memsync remember`, `forget`, `show`, `compact`, `check`: one memory file (agent-memory/0.1), or for
`check` a role directory too; each returns the lines the command prints."""

from __future__ import annotations

import os
import shlex
from datetime import UTC, datetime
from pathlib import Path

from memsync.base.argcheck import existing_parent
from memsync.base.wording import plural
from memsync.commands.proposals import gated
from memsync.commands.proposals import propose as propose_entry
from memsync.config.file import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.parse import NO_MEMORY_FILE, check_memory_file, read_memory
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.view import scope_matches, supersede_forks
from memsync.formats.markdown.roledir import check_role_dir
from memsync.formats.quoted import MAX_PATH_CHARS, json_text, neutralise
from memsync.memoryfile.file import TEXT_MAX_CHARS, MemoryFile, NewEntry
from memsync.recall.dupes import near_duplicates, similar_entry
from memsync.recall.search import written
from memsync.tracks.resolve import current_config
from memsync.tracks.tracked import tracked_memory

# A duplicate's text is shown up to this many characters (the file has it all).
TEXT_CHARS = 200


def _memory_file(path: Path | None) -> MemoryFile:
    return MemoryFile(path if path is not None else default_memory_path())


def _synced_with_remotes(path: Path) -> bool:
    """Whether ``path`` lies in a track of a store with a remote (a sync may bring it there)."""
    config = current_config()
    live = Path(os.path.abspath(path))
    return config is not None and any(
        store.remotes and any(live.is_relative_to(track.live) for track in store.tracks)
        for store in config.stores.values()
    )


def remember_line(new: NewEntry, file: Path | None, propose: bool = False) -> str:
    """`memsync remember`: append ``new`` to memory file ``file`` (default: ``default_memory_path``;
    with ``new.supersedes`` and no ``file``, the tracked memory file holding that entry) and say so.
    Raises ``MemsyncError`` (a secret in the text, this clock ahead of the remotes', an unknown entry
    to supersede, a bad field). With ``propose`` the entry is recorded as a proposal for the file's
    store set to review, the file unchanged (``proposals.propose``; refused for a file no such store
    syncs)."""
    if file is None and new.supersedes is not None:
        # The tracked memory file that holds the entry, as the MCP tool finds it.
        memory = MemoryFile(holder(current_config(), new.supersedes, "supersede"))
    else:
        memory = _memory_file(None if file is None else existing_parent(file, "--file"))
    if propose:
        config = current_config()
        gate = gated(config, memory.path)
        if gate is None or config is None:
            raise MemsyncError(
                f"remember --propose: {memory.path} is in no store set to review, so nothing would hold "
                "it. Drop --propose, or `memsync config set stores.NAME.review true` for its store"
            )
        proposal = propose_entry(config, gate, memory.path, new)
        return (
            f"proposed {proposal.id} for {memory.path}: it waits for a person's approval (`memsync review`)"
        )
    entry = write_entry(memory, new)
    replaced = f" (supersedes {new.supersedes})" if new.supersedes is not None else ""
    return f"remembered {entry.id} in {memory.path}{replaced}{similar_hint(memory.path, new.text, entry.id)}"


def write_entry(memory: MemoryFile, new: NewEntry) -> Entry:
    """Append ``new`` to ``memory`` now (``MemoryFile.remember``) and tell the recall index. Raises
    MemsyncError (see ``MemoryFile.remember``)."""
    entry = memory.remember(new)
    written(current_config(), memory.path)
    return entry


def holder(config: Config | None, entry_id: str, action: str) -> Path:
    """The one tracked memory file (or the default one) with an entry ``entry_id``. Raises MemsyncError
    ("<action> <id>: ...") when none or several have it."""
    holders = [
        item.live for item in tracked_memory(config) if item.format == "jsonl" and _holds(item.live, entry_id)
    ]
    if not holders:
        raise MemsyncError(
            f"{action} {entry_id}: no tracked memory file has an entry with that id. "
            "Take the id from a recall hit of type entry"
        )
    if len(holders) > 1:
        listed = ", ".join(str(p) for p in holders)
        raise MemsyncError(f"{action} {entry_id}: several memory files hold it ({listed}). Name the file")
    return holders[0]


def _holds(path: Path, entry_id: str) -> bool:
    """Whether the memory file at ``path`` has an entry with ``entry_id`` (a byte search first: cheap)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if entry_id.encode() not in data:
        return False
    return any(r.record.id == entry_id for r in read_memory(path).records)


def similar_hint(path: Path, text: str, written: str) -> str:
    """What remember adds when an entry of ``path`` already says ``text`` in other words (``dupes``;
    with the semantic extra): its id and how to supersede it. The entry is written all the same: only
    the person or agent can tell a rewording from a new fact. Empty when there is none."""
    similar = similar_entry(path, text, written)
    if similar is None:
        return ""
    other, score = similar
    return (
        f"; similar to {other} ({score:.2f}): if both say the same, forget {other}, "
        f"or write with --supersedes {other} next time"
    )


def dupes_lines(store: str | None) -> list[str]:
    """`memsync dupes`: each pair of live entries (of store ``store``, default every store's and the
    default memory file's) that say the same thing in other words, most similar first, as
    ``<similarity> <id> <id>`` and the two texts quoted. Never writes. Raises MemsyncError without the
    semantic extra, for an unknown store or an unreadable file."""
    config = current_config()
    sources = tracked_memory(config)
    if store is not None:
        if config is None or store not in config.stores:
            known = ", ".join(config.stores) if config is not None else "none"
            raise MemsyncError(f"dupes: no store is called {store!r} (stores: {known}). Give one of those")
        sources = [source for source in sources if source.store == store]
    lines = []
    for pair in near_duplicates(sources):
        lines.append(
            f"{pair.similarity:.2f}  {neutralise(pair.first.id, MAX_PATH_CHARS)}  "
            f"{neutralise(pair.second.id, MAX_PATH_CHARS)}"
        )
        lines += [f"      {neutralise(doc.body, TEXT_CHARS)}" for doc in (pair.first, pair.second)]
    if not lines:
        return ["no near-duplicates"]
    return [
        *lines,
        f"{plural(len(lines) // 3, 'pair')}; supersede one of each: memsync remember TEXT --supersedes ID",
    ]


def forget_line(entry_id: str, file: Path | None) -> str:
    """`memsync forget`: append a tombstone for ``entry_id`` to memory file ``file`` (default as
    :func:`remember_line`) unless it is forgotten already, and say which. Raises ``MemsyncError``."""
    memory = _memory_file(file)
    if memory.is_forgotten(entry_id):
        return f"{entry_id} is already forgotten in {memory.path}; nothing changed"
    memory.forget(entry_id)
    written(current_config(), memory.path)
    return f"forgot {entry_id} in {memory.path}"


def show_lines(file: Path | None, scope: str | None, *, as_json: bool) -> tuple[list[str], str | None]:
    """`memsync show`: one line per live entry of memory file ``file`` that applies to ``scope`` (JSON
    as stored with ``as_json``), and the warnings (None when there are none): each entry two machines
    superseded at once (``supersede_forks``), and skipped problem lines. A JSON line escapes what
    ``quoted.json_text`` escapes (the same data to a JSON reader). Raises ``MemsyncError``."""
    memory = _memory_file(file)
    if not memory.path.exists() and _synced_with_remotes(memory.path):
        raise MemsyncError(
            f"read {memory.path}: {NO_MEMORY_FILE}, or run `memsync sync` to fetch what your other "
            "machines wrote"
        )
    parsed = read_memory(memory.path)
    view = parsed.view(datetime.now(UTC))
    entries = [e for e in view if scope_matches(e.scope, scope)]
    lines: list[str] = []
    for entry in entries:
        if as_json:
            lines.append(json_text(entry.to_obj()))  # as stored, bidi and control characters escaped
        else:
            who = "user" if entry.is_user else f"{'-' if entry.confidence is None else entry.confidence}"
            text = neutralise(entry.text, TEXT_MAX_CHARS)  # one line, no control or bidi characters
            lines.append(f"{entry.id}  {entry.kind:<10}  {entry.scope}  [{who}]  {text}")
    warnings = [
        f"memsync: {neutralise(superseded, MAX_PATH_CHARS)} was superseded on two machines at once, by "
        f"{', '.join(neutralise(e.id, MAX_PATH_CHARS) for e in by)}: all stay live until you forget the "
        "wrong ones; see `memsync conflicts`"
        for superseded, by in sorted(supersede_forks(view, (r.record for r in parsed.records)).items())
    ]
    if parsed.problems:
        warnings.append(
            f"memsync: {plural(len(parsed.problems), 'problem')} in {memory.path} skipped; "
            f"see `memsync check {shlex.quote(str(memory.path))}`"
        )
    return lines, "\n".join(warnings) if warnings else None


def compact_line(file: Path | None) -> str:
    """`memsync compact`: rewrite memory file ``file`` (default as :func:`remember_line`) with its live
    entries and deletions, in its store too when tracked (``compact.compact``), and say what it
    removed. Raises ``MemsyncError``."""
    from memsync.commands.compact import compact  # imports the sync engine: only this command needs it

    memory = _memory_file(file)
    report = compact(memory.path)
    store = (
        f"; store {report.store}: {plural(report.store_lines_removed, 'line')} removed"
        if report.store and report.store_lines_removed
        else f"; store {report.store}: unchanged"
        if report.store
        else ""
    )
    after = plural(report.lines_after, "line")
    return f"compacted {memory.path}: {report.lines_before} -> {after}{store}"


def check_lines(path: Path) -> list[str]:
    """`memsync check`: one ``path:line: message`` per problem of the role directory or memory file
    ``path`` (a memory file's entries dated in this clock's future included), [] when there is none."""
    if path.is_dir():
        return [str(p) for p in check_role_dir(path)]
    from memsync.memoryfile.clock import future_problems  # reads the config and the store's history

    return check_memory_file(path, future_problems)

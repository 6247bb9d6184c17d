"""What the commits since an agent's last session added to its memory, read from ``git log -p`` output:
one ``Item`` per memory-file entry, curated entry, index line or daily-log line (DESIGN "Agent hosts":
the session-start hook)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

from memsync.base.layout import DAILY_LOG, HOST_TRAILER, is_append_only
from memsync.formats.bounded_json import decode_object
from memsync.formats.jsonl.timestamps import parse_timestamp
from memsync.formats.markdown.frontmatter import split_frontmatter
from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX, BOTH_KEPT_VERSION_PREFIX

# At most ``session_context.MAX_CHARS`` / ~80 items fit: of a long append, the newest lines are enough.
LINES_PER_FILE = 300
# An item's rank: entries first, then index lines, then daily-log lines.
ENTRY, INDEX, DAILY = 0, 1, 2
KIND_NAMES = {ENTRY: "entry", INDEX: "index", DAILY: "daily log"}


@dataclass(frozen=True)
class Item:
    """One thing a peer added: ``project`` (this project's memory, else the user's), ``rank`` (entry,
    index line, daily-log line), ``at`` (commit time, UTC), ``host`` (the commit's trailer), store
    ``path`` and ``text``, all as written, and ``claimed``: the commit names this machine's host but
    this machine did not make it."""

    project: bool
    rank: int
    at: datetime
    host: str
    path: str
    text: str
    claimed: bool = False


@dataclass(frozen=True)
class Scope:
    """The store paths of one store a session cares about: ``project``'s and ``user``'s, and ``own``,
    the agent's own folder (its commits from this machine are left out)."""

    project: tuple[str, ...]
    user: tuple[str, ...]
    own: tuple[str, ...]


def log_format(mark: str) -> str:
    """The ``git log --format`` whose output ``parse_log`` reads: each commit as ``mark`` sha ``\\x1f``
    date ``\\x1f`` message ``mark``, then its diff. ``mark`` must be unguessable (a fresh random token
    per call): a commit message or a line of a file may hold any other byte, and would otherwise start
    a commit of its own in the output."""
    return f"--format={mark}%H%x1f%aI%x1f%B{mark}"


def parse_log(
    out: str,
    mark: str,
    scope: Scope,
    me: str,
    written_here: Callable[[str], bool],
    current: Callable[[str], frozenset[str]],
) -> tuple[list[Item], int]:
    """The items of ``out`` (``git log -p --unified=0`` in ``log_format(mark)``) under ``scope``,
    leaving out what this machine (host ``me``, commits for which ``written_here`` is true) wrote to
    the agent's own folder, the added lines no longer in their file (``current``: a store path's lines
    now) and the lines of a both-kept conflict note, and marking as ``claimed`` the items whose commit
    names host ``me`` but was not written here; and how many added lines were not read (of an
    append-only file or index, a commit's last ``LINES_PER_FILE`` lines are read: newest last)."""
    items: list[Item] = []
    unread = 0
    chunks = out.split(mark)[1:]
    for meta, diff in zip(chunks[0::2], chunks[1::2], strict=False):
        sha, date, body = [*meta.split("\x1f", 2), "", ""][:3]
        host = next(
            (
                line.split(":", 1)[1].strip()
                for line in reversed(body.splitlines())
                if line.startswith(f"{HOST_TRAILER}:")
            ),
            "?",
        )
        try:
            at = datetime.fromisoformat(date.strip()).astimezone(UTC)
        except (ValueError, OverflowError):  # a crafted commit's date, out of datetime's range in UTC
            continue
        mine = host == me and written_here(sha.strip())
        claimed = host == me and not mine
        for path, added, new, skipped in _files(diff):
            if mine and _under(path, scope.own):
                continue
            unread += skipped
            # a line since replaced (a resolved conflict's versions, an edited entry) is outdated memory
            now = current(path)
            added = [line for line in added if line in now and not _conflict_note(line)]
            project = _under(path, scope.project)
            items.extend(
                Item(project, rank, when or at, host, path, text, claimed)
                for rank, text, when in _items(path, added, new)
            )
    return items, unread


def _files(diff: str) -> list[tuple[str, list[str], bool, int]]:
    """Per file of one commit's ``git log -p --unified=0`` output: (store path, added lines, whether the
    commit created the file, how many added lines were not kept). Of an append-only file or an index
    only the last ``LINES_PER_FILE`` added lines are kept (newest last; the cut shows far fewer), found
    from the end, so a commit that added thousands of lines costs little more than one that added a few."""
    files: list[tuple[str, list[str], bool, int]] = []
    for section in ("\n" + diff).split("\ndiff --git ")[1:]:
        header, hunk, body = section.partition("\n@@")
        plus = next((line for line in header.splitlines() if line.startswith("+++ ")), None)
        name = plus[4:].rstrip("\t") if plus is not None else "/dev/null"
        if name == "/dev/null" or not hunk:
            continue  # a deletion, a mode change or a binary file: nothing added to read
        path = name.removeprefix("b/")
        total = body.count("\n+")
        tail = is_append_only(path) or path.endswith("/MEMORY.md") or path == "MEMORY.md"
        lines = (
            body.rsplit("\n", 2 * LINES_PER_FILE + 1)[1:]
            if tail and total > LINES_PER_FILE
            else body.split("\n")
        )
        added = [line[1:] for line in lines if line.startswith("+")]
        if tail:
            added = added[-LINES_PER_FILE:]
        files.append((path, added, "\n--- /dev/null" in "\n" + header, total - len(added)))
    return files


def _items(path: str, added: list[str], new: bool) -> list[tuple[int, str, datetime | None]]:
    """What the added lines of store file ``path`` say, as (rank, text, when: a memory-file entry's own
    ``created_at``, else None for the commit's time)."""
    name = PurePosixPath(path).name
    if name.endswith(".jsonl"):
        return [(ENTRY, text, when) for line in added for text, when in [_entry(line)] if text]
    if DAILY_LOG.search(path):
        return [(DAILY, line.strip(), None) for line in added if line.strip() and not line.startswith("#")]
    if name == "MEMORY.md":
        return [(INDEX, line.strip(), None) for line in added if line.lstrip().startswith(("- ", "* "))]
    if not name.endswith(".md"):
        return []
    text = "\n".join(added)
    head, body = split_frontmatter(text + "\n") if new else ("", text)
    fields = dict(_field(line) for line in head.splitlines() if ":" in line)
    described = ": ".join(v for v in (fields.get("name"), fields.get("description")) if v)
    # The body is the knowledge; the name and description only title it (the render cuts long items).
    said = " ".join(line.strip() for line in body.splitlines() if line.strip() and line.strip() != "---")
    summary = " — ".join(part for part in (described, said) if part)
    return [(ENTRY, summary, None)] if summary else []


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip().strip("'\"")


def _entry(line: str) -> tuple[str, datetime | None]:
    """A memory-file line as (``kind: text``, its ``created_at``); ("", None) for anything but a live
    entry (a header, a tombstone, a malformed line)."""
    record, _ = decode_object(line.encode("utf-8", "replace"))
    if record is None or record.get("deleted") or not isinstance(record.get("text"), str):
        return "", None
    kind = record.get("kind")
    try:
        when: datetime | None = parse_timestamp(str(record.get("created_at")))
    except ValueError:
        when = None
    return (f"{kind}: {record['text']}" if isinstance(kind, str) else record["text"]), when


def _conflict_note(line: str) -> bool:
    return line.startswith((BOTH_KEPT_NOTE_PREFIX, BOTH_KEPT_VERSION_PREFIX))


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(
        path == p or path.startswith(p.rstrip("/") + "/") or path.startswith(p + "@") for p in prefixes
    )

"""The prompt block of a view (spec ``seeds/000_*.txt`` "Putting it in context"): the entries a scope and
kinds select, grouped by kind, the user's first, cut at whole entries to a byte limit with a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memsync.base.defaults import DEFAULT_PROMPT_BYTES
from memsync.errors import MemsyncError
from memsync.formats.jsonl.records import KIND_TITLES, KINDS, Entry
from memsync.formats.jsonl.view import scope_matches
from memsync.formats.quoted import neutralise

# An entry is a sentence or a few; past this its line is cut (the file keeps it whole).
ENTRY_CHARS = 2000
# After a user entry: quoted as what its JSON says, since any peer can write `source: "user"` (the
# entry is not known to be this machine's user's own statement).
USER_MARK = ' (source: "user")'


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
    """The one line ``render_prompt`` writes for ``entry``: ``- text``, plus ``USER_MARK`` for a user
    entry. The text may be a peer's: it is neutralised (one line, no markup posing as the host's, at
    most ``ENTRY_CHARS`` characters)."""
    return f"- {neutralise(entry.text, ENTRY_CHARS)}" + (USER_MARK if entry.is_user else "")


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

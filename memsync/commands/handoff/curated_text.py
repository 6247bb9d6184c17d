"""The text a curated entry becomes when handed to a memory file or a prompt: what it teaches, not only
its title (DESIGN "Agent hosts": handoff carries knowledge between agents)."""

from __future__ import annotations

from memsync.commands.handoff.mapping import SOURCE_PREFIX, TEXT_CHARS
from memsync.formats.markdown.reading import CuratedEntry
from memsync.secrets import scan_text


def curated_title(curated: CuratedEntry) -> str:
    """The entry's description, else its name, else its slug, on one line: what an index line shows."""
    return " ".join((curated.description or curated.name or curated.slug).split())


def curated_text(curated: CuratedEntry) -> str:
    """The entry's description (on one line) as the first line, then its body: trailing spaces and
    blank-line runs trimmed, ``Source:`` provenance lines and the lines the secret scanner flags left
    out (DESIGN I6). At most ``TEXT_CHARS`` characters, cut after a whole line with a last line naming
    the file that holds the rest. Without a description or body, the entry's name, else its slug."""
    lines = [
        line.rstrip()
        for line in curated.body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if not line.startswith(SOURCE_PREFIX)
    ]
    flagged = {finding.line for finding in scan_text("\n".join(lines))}
    kept: list[str] = []
    for number, line in enumerate(lines, 1):
        if number not in flagged and (line or (kept and kept[-1])):
            kept.append(line)
    description = " ".join((curated.description or "").split())
    text = "\n".join(([description] if description else []) + kept).strip()
    if not text:
        return curated_title(curated)
    if len(text) <= TEXT_CHARS:
        return text
    rest = f"(cut: the rest is in {curated.path.name})"
    head = text[: TEXT_CHARS - len(rest) - 1]
    return (head.rsplit("\n", 1)[0] if "\n" in head else head) + "\n" + rest

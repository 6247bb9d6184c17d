"""The skill's writes of whole entries and log lines into a role directory (seeds/002 "Log", "Write",
"Rename"; DESIGN I5: append with one ``O_APPEND`` write, replace whole files atomically).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memsync.base.fsio import append_once, atomic_write, create_exclusive, writer_lock
from memsync.errors import MemsyncError
from memsync.formats.markdown.fields import entry_head, with_name
from memsync.formats.markdown.frontmatter import split_frontmatter
from memsync.formats.markdown.index import IndexBlock, item_key, links_part
from memsync.formats.markdown.index_items import link_text, put_index_item, relink_item
from memsync.formats.markdown.reading import read_bytes, read_entry
from memsync.formats.markdown.skill import CURATED_TYPES, DAILY_DIR, one_line, slugify

if TYPE_CHECKING:
    from memsync.formats.markdown.roledir import RoleDir


def append_log(role: RoleDir, text: str, now: datetime | None = None) -> Path:
    """Append ``- [HH:MM] text`` to today's daily log, creating it with its title; returns its path.

    ``now`` defaults to the current UTC time (the skill's ``date -u``). The line is one ``O_APPEND``
    write under memsync's writer lock; a new log is created whole or not at all, never overwriting one
    another writer made first. A last line without its line end gets one first. Raises ``MemsyncError``
    for empty or multi-line text, ``OSError`` from the file system.
    """
    text = one_line("log text", text)
    moment = now if now is not None else datetime.now(UTC)
    day = moment.strftime("%Y-%m-%d")
    line = f"- [{moment:%H:%M}] {text}\n"
    path = role.path / DAILY_DIR / f"{day}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    # A reader can see half of another process's append (the kernel grows the file page by page), so
    # memsync's own writers take turns between reading the last byte and appending.
    with writer_lock(path):
        if not create_exclusive(path, f"# Daily log — {day}\n\n{line}".encode()):
            append_once(path, (line if _ends_a_line(path) else "\n" + line).encode())
    return path


def write_entry(role: RoleDir, name: str, type: str, description: str, content: str) -> Path:
    """Create or replace the curated entry ``<slugify(name)>.md`` and its index line; returns its path.

    An existing entry whose frontmatter name is exactly ``name`` is replaced in its own file (a Claude
    Code folder names files ``a-b.md``, not ``a_b.md``). The frontmatter is exactly ``name``,
    ``description``, ``type`` (each one line; a value YAML would misread is written double-quoted).
    ``MEMORY.md`` is created with its title if missing; a line already naming the file is replaced,
    others are appended. Raises ``MemsyncError`` for a type
    outside user|feedback|project|reference or an empty or multi-line name or description.
    """
    name = one_line("name", name)
    description = one_line("description", description)
    if type not in CURATED_TYPES:
        raise MemsyncError(
            f"cannot write entry {name!r}: type {type!r} is not one of {', '.join(CURATED_TYPES)}"
        )
    path = next(
        (entry.path for entry in role.entries() if entry.name == name), role.path / f"{slugify(name)}.md"
    )
    head = entry_head(name, description, type)
    body = content.strip("\n")
    atomic_write(path, (head + body + "\n" if body else head).encode("utf-8"))
    new_item = f"- [{link_text(name)}]({path.name}) — {description}\n"
    role.edit_index(lambda blocks: put_index_item(blocks, new_item, {item_key(new_item)}))
    return path


def rename_entry(role: RoleDir, entry: str, new_name: str) -> Path:
    """Rename the curated entry ``entry`` (slug, file name or name) to ``new_name``; returns the new path.

    Writes ``<slugify(new_name)>.md`` with the same frontmatter and body except ``name``, removes the old
    file, and rewrites the entry's index item in place with the new link (its description is kept).
    Raises ``MemsyncError`` when the entry does not exist or another entry already has the new slug.
    """
    old = role.find_entry(entry)
    new_name = one_line("name", new_name)
    slug = slugify(new_name)
    new = role.path / f"{slug}.md"
    if new != old and new.exists():
        raise MemsyncError(
            f"cannot rename {old.name} to {new.name}: {new.name} already exists. Remove that one first"
        )
    current = read_entry(old)
    text = read_bytes(old).decode("utf-8", errors="surrogateescape")
    head, body = split_frontmatter(text)
    data = (with_name(head, new_name) + body) if head else text
    atomic_write(new, data.encode("utf-8", errors="surrogateescape"))
    if new != old:
        old.unlink()
    old_key = old.name  # index keys are link targets: index.item_key
    fallback = f"- [{link_text(new_name)}]({slug}.md) — {current.description or new_name}\n"

    def relink(blocks: list[IndexBlock]) -> list[IndexBlock]:
        # Items linking parts of the file follow it in place; the file's own item is put anew.
        own: str | None = None
        result: list[IndexBlock] = []
        for block in blocks:
            if block.key == old_key and links_part(block.text):
                text = relink_item(block.text, new_name, slug)
                block = IndexBlock(item_key(text), text)
            elif block.key == old_key and own is None:
                own = relink_item(block.text, new_name, slug)
            result.append(block)
        return put_index_item(result, own or fallback, {old_key, item_key(own or fallback)})

    role.edit_index(relink)
    return new


def _ends_a_line(path: Path) -> bool:
    """True when ``path`` is empty or its last byte is a line end."""
    with path.open("rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return True
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"

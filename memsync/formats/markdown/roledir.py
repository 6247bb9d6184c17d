"""A role directory of the markdown memory skill (seeds/002; DESIGN "Vocabulary": ``.agents/memory/<role>/``
or a Claude-Code-style folder, ``MEMORY.md`` plus topic files, no ``daily/``): live reads of its index,
entries and daily logs, and the skill's write operations (log, write, rename, delete).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memsync.errors import MemsyncError
from memsync.formats.markdown.check import check
from memsync.formats.markdown.fields import entry_head, with_name
from memsync.formats.markdown.frontmatter import split_frontmatter
from memsync.formats.markdown.index import IndexBlock, item_key, parse_index, render
from memsync.formats.markdown.index_items import IndexItem, index_item, link_text, put_index_item, relink_item
from memsync.formats.markdown.reading import (
    CuratedEntry,
    DailyLog,
    Problem,
    read_bytes,
    read_daily_log,
    read_entry,
    read_text,
)
from memsync.formats.markdown.skill import (
    CURATED_TYPES,
    DAILY_DIR,
    DAILY_NAME,
    INDEX_NAME,
    MAX_READ_BYTES,
    SNAPSHOT_NAME,
    one_line,
    slugify,
)
from memsync.formats.markdown.snapshot import (
    DEFAULT_SNAPSHOT_BYTES,
    Snapshot,
    render_snapshot,
    write_snapshot,
)
from memsync.fsio import append_once, atomic_write, create_exclusive, writer_lock
from memsync.layout import is_ignored


class RoleDir:
    """A role directory: ``.agents/memory/<role>/`` or a Claude-Code-style memory folder.

    Reads are live (every call reads the files); writes follow the skill's operations and DESIGN I5
    (append with one ``O_APPEND`` write, replace whole files atomically). Raises ``MemsyncError`` when
    ``path`` is not a directory.
    """

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise MemsyncError(
                f"role directory {path}: not a directory. Pass a directory such as .agents/memory/<role> "
                "or ~/.claude/memory"
            )
        if not os.access(path, os.R_OK | os.X_OK):
            raise MemsyncError(f"role directory {path}: not readable. Check its permissions")
        self.path = path

    @property
    def role(self) -> str:
        """The role's name: the directory's name."""
        return self.path.resolve().name

    @property
    def index_path(self) -> Path:
        """``MEMORY.md`` of this role (it may not exist yet)."""
        return self.path / INDEX_NAME

    def index_items(self) -> list[IndexItem]:
        """The items of ``MEMORY.md`` in file order (``[]`` without one); other lines are skipped."""
        if not self.index_path.is_file():
            return []
        text, _ = read_text(self.index_path, MAX_READ_BYTES)
        items: list[IndexItem] = []
        line = 1
        for block in parse_index(text):
            if block.key is not None:
                items.append(index_item(line, block.key, block.text))
            line += block.text.count("\n")
        return items

    def entries(self) -> list[CuratedEntry]:
        """The curated entries by file name: top-level ``.md`` files with frontmatter or named by the index.

        Other top-level markdown (a role's own operational notes) is not an entry; ``MEMORY.md``,
        ``snapshot.md``, dotfiles and editor temp files never are.
        """
        indexed = {self.local_target(item) for item in self.index_items()}
        result = []
        for path in self._markdown_files():
            entry = read_entry(path)
            if entry.head or path.name in indexed:
                result.append(entry)
        return result

    def daily_logs(self) -> list[DailyLog]:
        """The daily logs ``daily/YYYY-MM-DD.md``, oldest first."""
        folder = self.path / DAILY_DIR
        if not folder.is_dir():
            return []
        paths = sorted(
            p for p in folder.iterdir() if DAILY_NAME.match(p.name) and p.is_file() and not p.is_symlink()
        )
        return [read_daily_log(path) for path in paths]

    def log(self, text: str, now: datetime | None = None) -> Path:
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
        path = self.path / DAILY_DIR / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        # A reader can see half of another process's append (the kernel grows the file page by page), so
        # memsync's own writers take turns between reading the last byte and appending.
        with writer_lock(path):
            if not create_exclusive(path, f"# Daily log — {day}\n\n{line}".encode()):
                append_once(path, (line if _ends_a_line(path) else "\n" + line).encode())
        return path

    def write_entry(self, name: str, type: str, description: str, content: str) -> Path:
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
            (entry.path for entry in self.entries() if entry.name == name), self.path / f"{slugify(name)}.md"
        )
        head = entry_head(name, description, type)
        body = content.strip("\n")
        atomic_write(path, (head + body + "\n" if body else head).encode("utf-8"))
        new_item = f"- [{link_text(name)}]({path.name}) — {description}\n"
        self.edit_index(lambda blocks: put_index_item(blocks, new_item, {item_key(new_item)}))
        return path

    def rename(self, entry: str, new_name: str) -> Path:
        """Rename the curated entry ``entry`` (slug, file name or name) to ``new_name``; returns the new path.

        Writes ``<slugify(new_name)>.md`` with the same frontmatter and body except ``name``, removes the old
        file, and rewrites the entry's index item in place with the new link (its description is kept).
        Raises ``MemsyncError`` when the entry does not exist or another entry already has the new slug.
        """
        old = self._find(entry)
        new_name = one_line("name", new_name)
        slug = slugify(new_name)
        new = self.path / f"{slug}.md"
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
            for block in blocks:
                if block.key == old_key:
                    return put_index_item(blocks, relink_item(block.text, new_name, slug), {old_key})
            return put_index_item(blocks, fallback, {item_key(fallback)})

        self.edit_index(relink)
        return new

    def delete(self, entry: str) -> None:
        """Delete the curated entry ``entry`` (a slug, file name or name) and drop its index item(s).

        Raises ``MemsyncError`` when the entry does not exist.
        """
        path = self._find(entry)
        path.unlink()
        key = path.name
        if self.index_path.is_file():
            self.edit_index(lambda blocks: [block for block in blocks if block.key != key])

    def render_snapshot(self, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> Snapshot:
        """The snapshot text (see :func:`snapshot.render_snapshot`); ``max_bytes`` caps it in UTF-8 bytes.

        Raises ``MemsyncError`` when ``max_bytes`` is below 512.
        """
        return render_snapshot(self, max_bytes)

    def snapshot(self, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> Snapshot:
        """Write :meth:`render_snapshot` to ``snapshot.md`` atomically (untouched when already equal).

        Only local files are read and written; it never syncs. Returns the snapshot with its ``path``.
        Raises ``MemsyncError`` for a cap below 512 bytes, ``OSError`` from the file system.
        """
        return write_snapshot(self, max_bytes)

    def check(self) -> list[Problem]:
        """Every problem in the role directory, ordered by path and line (see :func:`check.check`)."""
        return check(self)

    def _markdown_files(self) -> list[Path]:
        # Symlinks are skipped: an entry's content must come from this directory (DESIGN I8).
        return sorted(
            path
            for path in self.path.iterdir()
            if path.suffix == ".md"
            and path.is_file()
            and not path.is_symlink()
            and path.name not in (INDEX_NAME, SNAPSHOT_NAME)
            and not path.name.startswith(".")
            and not is_ignored(path.name)
        )

    def local_target(self, item: IndexItem) -> str | None:
        """The file name an index item links to when the link is to a file directly in this directory."""
        if item.target is None or "://" in item.target:
            return None
        target = item.target.removeprefix("./")
        return None if "/" in target else target

    def entries_by_index(self) -> tuple[list[CuratedEntry], list[CuratedEntry]]:
        """The entries the index links to, in its order, and the others, by file name."""
        entries = {entry.path.name: entry for entry in self.entries()}
        ordered = []
        for item in self.index_items():
            target = self.local_target(item)
            if target in entries:
                ordered.append(entries.pop(target))
        return ordered, list(entries.values())

    def _find(self, entry: str) -> Path:
        """The path of an existing entry named by slug, file name or name (slugified as a last resort)."""
        candidates = [entry if entry.endswith(".md") else f"{entry}.md"]
        if re.search(r"[a-z0-9]", entry.lower()):
            candidates.append(f"{slugify(entry)}.md")
        for name in candidates:
            path = self.path / name
            if "/" not in name and name not in (INDEX_NAME, SNAPSHOT_NAME) and path.is_file():
                return path
        raise MemsyncError(
            f"no curated entry {entry!r} in {self.path}: name it by its slug (the file name without .md)"
        )

    def edit_index(self, edit: Callable[[list[IndexBlock]], list[IndexBlock]]) -> None:
        """Read-modify-write ``MEMORY.md``: ``edit`` maps its item blocks (:mod:`.index`) to new ones;
        done under memsync's writer lock, replacing the file atomically (written only if it changed).
        Raises ``OSError`` from the file system."""
        with writer_lock(self.index_path):
            if self.index_path.is_file():
                text = read_bytes(self.index_path).decode("utf-8", errors="surrogateescape")
            else:
                text = f"# Memory index — {self.role}\n\n"
            result = render(edit(parse_index(text)))
            if result != text or not self.index_path.is_file():
                atomic_write(self.index_path, result.encode("utf-8", errors="surrogateescape"))


def _ends_a_line(path: Path) -> bool:
    """True when ``path`` is empty or its last byte is a line end."""
    with path.open("rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return True
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


def role_prompt(path: Path, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> str:
    """The prompt block of the role directory ``path`` for ``memsync prompt``: the snapshot text, not written.

    ``max_bytes`` caps it (UTF-8 bytes, cut at whole lines with a note). Raises ``MemsyncError`` when
    ``path`` is not a directory or the cap is below 512 bytes.
    """
    return RoleDir(path).render_snapshot(max_bytes).text


def check_role_dir(path: Path) -> list[Problem]:
    """The problems of the role directory ``path`` for ``memsync check`` (see :meth:`RoleDir.check`).

    Raises ``MemsyncError`` when ``path`` is not a directory.
    """
    return RoleDir(path).check()

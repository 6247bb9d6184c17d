"""A role directory of the markdown memory skill (seeds/002; DESIGN "Vocabulary": ``.agents/memory/<role>/``
or a Claude-Code-style folder, ``MEMORY.md`` plus topic files, no ``daily/``): live reads of its index,
entries and daily logs, and the skill's write operations (log, write, rename, delete).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from memsync.base.fsio import atomic_write, writer_lock
from memsync.base.layout import is_ignored
from memsync.errors import MemsyncError
from memsync.formats.markdown.check import check
from memsync.formats.markdown.index import IndexBlock, parse_index, render
from memsync.formats.markdown.index_items import IndexItem, index_item
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
    DAILY_DIR,
    DAILY_NAME,
    INDEX_NAME,
    MAX_READ_BYTES,
    SNAPSHOT_NAME,
    slugify,
)
from memsync.formats.markdown.snapshot import (
    DEFAULT_SNAPSHOT_BYTES,
    Snapshot,
    render_snapshot,
    write_snapshot,
)
from memsync.formats.markdown.writes import append_log, rename_entry, write_entry


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
        """Append ``- [HH:MM] text`` to today's daily log (see :func:`writes.append_log`); returns its path.

        Raises ``MemsyncError`` for empty or multi-line text, ``OSError`` from the file system.
        """
        return append_log(self, text, now)

    def write_entry(self, name: str, type: str, description: str, content: str) -> Path:
        """Create or replace the curated entry named ``name`` and its index line (see
        :func:`writes.write_entry`); returns its path. Raises ``MemsyncError`` for a type outside
        user|feedback|project|reference or an empty or multi-line name or description.
        """
        return write_entry(self, name, type, description, content)

    def rename(self, entry: str, new_name: str) -> Path:
        """Rename the curated entry ``entry`` (slug, file name or name) to ``new_name`` (see
        :func:`writes.rename_entry`); returns the new path. Raises ``MemsyncError`` when the entry does
        not exist or another entry already has the new slug.
        """
        return rename_entry(self, entry, new_name)

    def delete(self, entry: str) -> None:
        """Delete the curated entry ``entry`` (a slug, file name or name) and drop its index item(s).

        Raises ``MemsyncError`` when the entry does not exist.
        """
        path = self.find_entry(entry)
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

    def find_entry(self, entry: str) -> Path:
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


def role_prompt(path: Path, max_bytes: int = DEFAULT_SNAPSHOT_BYTES) -> str:
    """The prompt block of the role directory ``path`` for ``memsync prompt``: the snapshot text, not
    written, quoted (its lines may be peers': neutralised for an agent's context).

    ``max_bytes`` caps it (UTF-8 bytes, cut at whole lines with a note). Raises ``MemsyncError`` when
    ``path`` is not a directory or the cap is below 512 bytes.
    """
    return render_snapshot(RoleDir(path), max_bytes, quoted=True).text


def check_role_dir(path: Path) -> list[Problem]:
    """The problems of the role directory ``path`` for ``memsync check`` (see :meth:`RoleDir.check`).

    Raises ``MemsyncError`` when ``path`` is not a directory.
    """
    return RoleDir(path).check()

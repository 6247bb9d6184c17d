"""What a pass did, for the cycle's report and the commit message (DESIGN "One sync cycle", step 3)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Literal

from memsync.base.layout import Kind
from memsync.config.file import Track
from memsync.sync.clashes import Clash

Action = Literal["appended", "added", "changed", "deleted", "created", "replaced"]


@dataclass(frozen=True)
class FileChange:
    """One file changed by publish or deliver.

    ``path`` is the store path, ``label`` the path within the tracked directory ("" for a tracked file).
    Appends count ``lines``; for memory files also ``entries`` and ``tombstones`` among them.
    """

    path: str
    label: str
    kind: Kind
    action: Action
    lines: int = 0
    entries: int = 0
    tombstones: int = 0


@dataclass(frozen=True)
class HeldBack:
    """A line (append-only file) or version (whole file, ``line`` of the first finding) held back."""

    path: str
    line: int
    detector: str


@dataclass(frozen=True)
class PublishReport:
    """What publish (or reconcile) put into the store for one track: changes, held-back secrets, warnings.

    ``name`` is the track's short name (role or memory file stem) used in commit messages.
    """

    name: str
    changes: tuple[FileChange, ...] = ()
    held: tuple[HeldBack, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeliverReport:
    """What deliver wrote into the live files of one track, the files left waiting (path, reason), and the
    clashes of a file with a directory that keep paths from syncing here."""

    name: str
    changes: tuple[FileChange, ...] = ()
    waiting: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    clashes: tuple[Clash, ...] = ()


def track_name(track: Track) -> str:
    """The short name of ``track`` for commit messages: the role directory name or the file's stem."""
    name = PurePosixPath(track.store_path.rstrip("/")).name
    return name.removesuffix(".jsonl")


def describe_changes(reports: Iterable[PublishReport]) -> str:
    """A commit message for the published ``reports``, "" when nothing changed (DESIGN "One sync cycle").

    One group per role or memory file, e.g. ``qa-engineer: +3 entries, 1 tombstone; scout:
    daily/2026-11-30.md +2 lines``. When the subject would pass 150 characters it names the groups only
    and the body lists every group.
    """
    groups: dict[str, list[str]] = {}
    for report in reports:
        for change in report.changes:
            name, label = _subject(report.name, change)
            groups.setdefault(name, []).append(_describe(replace(change, label=label)))
    lines = [f"{name}: {', '.join(parts)}" for name, parts in groups.items()]
    subject = "; ".join(lines)
    if len(subject) <= 150:
        return subject
    count = sum(len(parts) for parts in groups.values())
    return f"{count} changes in {', '.join(groups)}"[:150] + "\n\n" + "\n".join(lines)


def _subject(track: str, change: FileChange) -> tuple[str, str]:
    """Who a change is about and the label within it: the role or memory file its store path names
    (DESIGN's ``roles/<role>/``, ``projects/<project>/<role>/``, ``memory/<name>.jsonl``), so a folder
    track's commits read ``python-dev: daily/...``; else the track's name and the change's own label."""
    parts = PurePosixPath(change.path).parts
    if len(parts) > 2 and parts[0] == "roles":
        return parts[1], "/".join(parts[2:])
    if len(parts) > 3 and parts[0] == "projects":
        return f"{parts[1]}/{parts[2]}", "/".join(parts[3:])
    if len(parts) == 2 and parts[0] == "memory" and change.kind == "jsonl":
        return parts[1].removesuffix(".jsonl"), ""
    return track, change.label


def _describe(change: FileChange) -> str:
    """``+3 entries, 1 tombstone`` / ``daily/x.md +2 lines`` / ``MEMORY.md changed``."""
    what: str
    if change.action != "appended":
        what = change.action
    elif change.kind == "jsonl" and (change.entries or change.tombstones):
        counts = []
        if change.entries:
            counts.append(f"+{change.entries} {'entry' if change.entries == 1 else 'entries'}")
        if change.tombstones:
            counts.append(f"{change.tombstones} tombstone{'' if change.tombstones == 1 else 's'}")
        what = ", ".join(counts)
    else:
        what = f"+{change.lines} line{'' if change.lines == 1 else 's'}"
    return f"{change.label} {what}" if change.label else what

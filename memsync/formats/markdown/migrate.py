"""The one-time move of legacy role memory into ``.agents/memory/`` (seeds/002 "Legacy paths"); nothing is
ever overwritten.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsync.errors import MemsyncError
from memsync.formats.markdown.fields import parse_frontmatter
from memsync.formats.markdown.frontmatter import split_frontmatter
from memsync.formats.markdown.roledir import RoleDir
from memsync.formats.markdown.skill import BRIEFING_NAME, INDEX_NAME

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MigrationStep:
    """One planned or applied legacy migration step (seeds/002 "Legacy paths").

    ``action``: ``move`` (a role directory), ``convert`` (a flat ``<role>.md`` into ``project_briefing.md``)
    or ``skip``; ``reason`` says why for a skip.
    """

    action: Literal["move", "convert", "skip"]
    source: Path
    destination: Path | None
    reason: str = ""

    def describe(self, root: Path, applied: bool) -> str:
        """One line for the user, paths relative to ``root``; past tense when ``applied``."""
        src = _relative(self.source, root)
        if self.action == "skip":
            return f"skip {src}: {self.reason}"
        assert self.destination is not None
        dst = _relative(self.destination, root)
        if self.action == "move":
            return f"{'moved' if applied else 'would move'} {src} -> {dst}"
        verb = "converted" if applied else "would convert"
        return f"{verb} {src} -> {dst} (type: project entry and one index line)"


def migrate(root: Path, apply: bool = False) -> list[MigrationStep]:
    """Plan (and with ``apply`` do) the move of legacy role memory under ``root`` into ``.agents/memory/``.

    seeds/002 "Legacy paths": ``.claude/memory/<role>/`` and ``.agents-legacy/memory/<role>/`` move whole to
    ``.agents/memory/<role>/``; a flat ``.claude/memory/<role>.md`` becomes ``<role>/project_briefing.md``
    (type project) with one index line. Nothing is ever overwritten: a step whose destination exists is a
    skip. A ``.claude/memory/`` holding ``MEMORY.md`` is Claude Code's own memory folder and is left alone.
    Returns the steps in order. Raises ``MemsyncError`` when ``root`` is not a directory or a step fails
    (steps before it stay done).
    """
    if not root.is_dir():
        raise MemsyncError(f"migrate {root}: not a directory. Pass a project root or your home directory")
    steps = _plan_migration(root)
    if apply:
        for step in steps:
            _apply_step(step)
    return steps


def _plan_migration(root: Path) -> list[MigrationStep]:
    target = root / ".agents" / "memory"
    steps: list[MigrationStep] = []
    claimed: dict[Path, Path] = {}  # destination role dir -> the legacy dir this run moves there

    def move(source: Path) -> None:
        destination = target / source.name
        if destination.exists() or destination in claimed:
            reason = f"{_relative(destination, root)} already exists"
            steps.append(MigrationStep("skip", source, destination, reason))
        else:
            claimed[destination] = source
            steps.append(MigrationStep("move", source, destination))

    claude = root / ".claude" / "memory"
    if claude.is_dir() and (claude / INDEX_NAME).is_file():
        steps.append(
            MigrationStep(
                "skip",
                claude,
                None,
                "a Claude Code memory folder (it has MEMORY.md), not legacy role files; left alone",
            )
        )
    elif claude.is_dir():
        for source in _subdirs(claude):
            move(source)
        for flat in sorted(p for p in claude.iterdir() if p.is_file() and p.suffix == ".md"):
            destination = target / flat.stem / "project_briefing.md"
            moved_from = claimed.get(destination.parent)
            if destination.exists() or (moved_from is not None and (moved_from / destination.name).exists()):
                reason = f"{_relative(destination, root)} already exists"
                steps.append(MigrationStep("skip", flat, destination, reason))
            else:
                steps.append(MigrationStep("convert", flat, destination))
    legacy = root / ".agents-legacy" / "memory"
    if legacy.is_dir():
        for source in _subdirs(legacy):
            move(source)
    return steps


def _apply_step(step: MigrationStep) -> None:
    destination = step.destination
    if step.action == "skip" or destination is None:
        return
    if destination.exists():
        raise MemsyncError(
            f"migrate: {destination} appeared while migrating; nothing overwritten. Run migrate again"
        )
    try:
        if step.action == "move":
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.rename(step.source, destination)
        else:
            _convert_flat(step.source, destination)
    except OSError as exc:
        raise MemsyncError(
            f"migrate: {step.source} -> {destination} failed: {exc.strerror or exc}. Fix that, run it again"
        ) from exc
    log.debug("migrated %s -> %s", step.source, destination)


def _convert_flat(source: Path, destination: Path) -> None:
    """A flat legacy ``<role>.md`` becomes the role's ``project_briefing.md`` curated entry, then goes."""
    try:
        text = source.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemsyncError(
            f"migrate: {source} is not UTF-8 text. Convert it to UTF-8 and run migrate again"
        ) from exc
    head, body = split_frontmatter(text)
    description = parse_frontmatter(head).description
    if not description:
        first = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
        description = first[:160] or f"Project briefing migrated from {source.name}"
    destination.parent.mkdir(parents=True, exist_ok=True)
    written = RoleDir(destination.parent).write_entry(BRIEFING_NAME, "project", description, body)
    assert written == destination
    source.unlink()


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)

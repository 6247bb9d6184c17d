"""`memsync conflicts` and `memsync resolve`: the files where an edit made on two machines at once left
both versions kept (the entry merge driver's note, DESIGN I3), each version with the host and time of
the commit that wrote it (its version line's label, else the store's history), and resolving one by an
ordinary edit of the live file, which then syncs. A memory file's equivalent is listed too: an entry that
two machines superseded while apart (a supersede fork), each live superseder with who wrote it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from memsync.base.fsio import atomic_write
from memsync.base.paths import StoreLayout
from memsync.commands.log import local_time
from memsync.config.file import Config, StoreConfig
from memsync.cycle.store_facts import live_path, store_facts
from memsync.errors import MemsyncError
from memsync.formats.jsonl.parse import ParsedMemory, read_memory
from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.view import supersede_forks
from memsync.formats.markdown.index import link_target, links_part, parse_index
from memsync.formats.markdown.skill import INDEX_NAME
from memsync.formats.quoted import MAX_PATH_CHARS, neutralise
from memsync.merge.entry import BOTH_KEPT_NOTE, BOTH_KEPT_VERSION_PREFIX, VERSION_FROM
from memsync.merge.labels import LABEL_TIME_FORMAT, split_label
from memsync.store.facade import Store
from memsync.tracks.resolve import load_stores
from memsync.tracks.tracked import Tracked, tracked_memory

Keep = Literal["1", "2", "both"]
# A superseder's text is listed up to this many characters (the file has it all).
FORK_TEXT_CHARS = 200
_NOTE = f"{BOTH_KEPT_NOTE}\n\n"
# A version line (``merge.entry.version_line``): its number, and its label when the merge knew who wrote
# the version (files merged before labels existed have none).
_VERSION_LINE = re.compile(
    rf"^{re.escape(BOTH_KEPT_VERSION_PREFIX)} ([12]) of 2(?:{re.escape(VERSION_FROM)}([^\n]*))?\n", re.M
)


@dataclass(frozen=True)
class Versions:
    """A both-kept file split: what precedes the note (a merged frontmatter), the two versions, and the
    label of each that its version line carries (None when it has none)."""

    head: str
    first: str
    second: str
    labels: tuple[str | None, str | None]


@dataclass(frozen=True)
class Conflict:
    """One file with two versions kept: its ``file`` (the live path, else the store path), ``store``, and
    per version the host and local time of the commit that wrote it (``?`` when no commit says). In a
    ``MEMORY.md`` index, ``item`` is the file that several index lines link (the index driver keeps an
    item edited on two machines both ways), one label per line, each followed by the line itself."""

    file: str
    store: str
    labels: tuple[str, ...]
    item: str | None = None


@dataclass(frozen=True)
class Fork:
    """An entry of memory file ``file`` (its live path, in ``store``) that several live entries supersede:
    ``superseded`` (its id) and, per live superseder, ``id: host, local time: text`` (peer text
    neutralised), and ``ids`` of the superseders."""

    file: str
    store: str
    superseded: str
    labels: tuple[str, ...]
    ids: tuple[str, ...]


def split_versions(text: str) -> Versions | None:
    """``text`` (a file's content) as a both-kept file's parts, None when it holds no two kept versions
    as the entry driver writes them."""
    head, note, rest = text.partition(_NOTE)
    first = _VERSION_LINE.match(rest)
    if not note or first is None or first[1] != "1":
        return None
    second = next((line for line in _VERSION_LINE.finditer(rest, first.end()) if line[1] == "2"), None)
    if second is None:
        return None
    return Versions(head, rest[first.end() : second.start()], rest[second.end() :], (first[2], second[2]))


def _label(store: Store, rel: str, version: str, other: str, written: str | None) -> str:
    """``host, local time`` of who wrote ``version``: its version line's label (``written``), else the
    oldest commit that wrote a line of ``version`` not in ``other``."""
    said = None if written is None else split_label(written)
    if said is not None:
        host, when = said
        try:
            return f"{host}, {local_time(datetime.strptime(when, LABEL_TIME_FORMAT).replace(tzinfo=UTC))}"
        except ValueError:
            pass  # not a time memsync wrote: the history says who wrote the version
    others = set(other.splitlines())
    line = next((ln for ln in version.splitlines() if ln.strip() and ln not in others), None)
    record = None if line is None else store.introduced(line, rel)
    if record is None:
        return "?"
    return f"{record.host or '?'}, {local_time(record.date)}"


def _rel(store_cfg: StoreConfig, shown: str) -> str:
    """The store path of ``shown`` (a live path or a store path, as the store facts name files)."""
    for track in store_cfg.tracks:
        if Path(shown).is_relative_to(track.live):
            rel = Path(shown).relative_to(track.live).as_posix()
            return track.store_path if rel == "." else f"{track.store_path}/{rel}"
    return shown


def conflicts(path: Path) -> list[Conflict]:
    """Every file of every store of config file ``path`` that holds two kept versions, with their labels.
    Raises ``MemsyncError`` (no store, git failing)."""
    config = load_stores(path)
    found: list[Conflict] = []
    for store_cfg in config.stores.values():
        if not StoreLayout(store_cfg.path).exists:
            continue
        store = Store(store_cfg, config.host, config.identity())
        for shown in store_facts(store_cfg)["both_kept"]:
            rel = _rel(store_cfg, shown)
            live = live_path(store_cfg.tracks, rel)
            source = live if live is not None and live.is_file() else store_cfg.path / rel
            versions = split_versions(source.read_bytes().decode("utf-8", "surrogateescape"))
            if versions is None:
                continue  # resolved in the live file already: the next sync takes it to the store
            labels = (
                _label(store, rel, versions.first, versions.second, versions.labels[0]),
                _label(store, rel, versions.second, versions.first, versions.labels[1]),
            )
            found.append(Conflict(shown, store_cfg.name, labels))
        found.extend(_index_conflicts(store, store_cfg))
    return found


def forked_files(
    config: Config,
) -> Iterator[tuple[Tracked, ParsedMemory, dict[str, tuple[Entry, ...]]]]:
    """Each tracked memory file of ``config`` (in a store) whose current view has supersede forks, with
    its parsed content and the forks (``supersede_forks``). Reads the live files only, no git. Raises
    ``MemsyncError`` when a file cannot be read."""
    now = datetime.now(UTC)
    for item in tracked_memory(config):
        if item.format != "jsonl" or item.store is None or not item.live.is_file():
            continue
        parsed = read_memory(item.live)
        found = supersede_forks(parsed.view(now), (r.record for r in parsed.records))
        if found:
            yield item, parsed, found


def forks(path: Path) -> list[Fork]:
    """Every supersede fork of the tracked memory files of config file ``path``, each superseder labelled
    with the host and time of the commit that brought its line into the store ("?" when none did yet).
    Raises ``MemsyncError`` (no store, a file unreadable, git failing)."""
    config = load_stores(path)
    found: list[Fork] = []
    for item, parsed, forked in forked_files(config):
        store_cfg = config.stores[item.store or ""]
        store = (
            Store(store_cfg, config.host, config.identity()) if StoreLayout(store_cfg.path).exists else None
        )
        for superseded, entries in sorted(forked.items()):
            labels = []
            for entry in entries:
                raw = next(r.raw for r in parsed.records if r.record == entry)
                line = raw.decode("utf-8", "surrogateescape")
                who = "?" if store is None else _label(store, item.store_path, line, "", None)
                text = neutralise(entry.text, FORK_TEXT_CHARS)
                labels.append(f"{neutralise(entry.id, MAX_PATH_CHARS)}: {who}: {text}")
            found.append(
                Fork(
                    str(item.live),
                    item.store or "",
                    neutralise(superseded, MAX_PATH_CHARS),
                    tuple(labels),
                    tuple(e.id for e in entries),
                )
            )
    return found


def _index_conflicts(store: Store, store_cfg: StoreConfig) -> list[Conflict]:
    """The ``MEMORY.md`` indexes of ``store`` (their live copies where tracked here) with more than one
    index line for one file, one ``Conflict`` per such file. An item linking a part of its file
    (``deploy.md#staging``) is one of several a file may have, not a conflict."""
    found: list[Conflict] = []
    for rel in store.files():
        if PurePosixPath(rel).name != INDEX_NAME:
            continue
        live = live_path(store_cfg.tracks, rel)
        source = live if live is not None and live.is_file() else store_cfg.path / rel
        try:
            text = source.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            continue  # deleted meanwhile: nothing to list
        by_target: dict[str, list[str]] = {}
        for block in parse_index(text):
            target = None if block.key is None or links_part(block.text) else link_target(block.text)
            if target is not None:
                by_target.setdefault(target, []).append(block.text)
        for target, items in by_target.items():
            if len(items) < 2:
                continue
            labels = tuple(
                f"{_label(store, rel, item, ''.join(items[:i] + items[i + 1 :]), None)}: "
                f"{item.splitlines()[0].strip()}"
                for i, item in enumerate(items)
            )
            found.append(Conflict(str(source), store_cfg.name, labels, target))
    return found


def resolve(live: Path, keep: Keep) -> str:
    """Resolve the two kept versions of live file ``live``: keep version 1, 2 or both (one after the
    other), the note and the version lines removed; the file is replaced atomically (I5) and syncs as
    any edit. Returns the line to print. Raises ``MemsyncError`` when the file holds no two versions."""
    path = Path(os.path.abspath(live.expanduser()))
    try:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError as exc:
        raise MemsyncError(f"resolve {path}: cannot read it ({exc.strerror}). Give a live file") from None
    versions = split_versions(text)
    if versions is None:
        raise MemsyncError(
            f"resolve {path}: it holds no two kept versions. `memsync conflicts` lists the files that do"
        )
    body = {"1": versions.first, "2": versions.second, "both": versions.first + versions.second}[keep]
    atomic_write(path, (versions.head + body).encode("utf-8", "surrogateescape"))
    kept = "both versions" if keep == "both" else f"version {keep}"
    return f"resolved {path}: kept {kept}; it syncs as an edit"

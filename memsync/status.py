"""The status file a cycle writes in its store's meta dir (``status.json``), and the facts read from the
store itself that `memsync status` lists (DESIGN "One sync cycle"; I6: held-back secrets named)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memsync.access import meta_dir
from memsync.config import StoreConfig, Track
from memsync.cycle_report import CycleReport, remote_error
from memsync.fsio import atomic_write
from memsync.layout import is_append_only, is_aside, is_store_meta
from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from memsync.paths import StoreLayout
from memsync.sync.state import SyncState
from memsync.track_listing import untracked_group

log = logging.getLogger(__name__)

STATUS_FILE = "status.json"
_BOTH_KEPT = BOTH_KEPT_NOTE_PREFIX.encode("utf-8")


def _now_iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def read_status(store_cfg: StoreConfig) -> dict[str, Any]:
    """What the last cycle of ``store_cfg`` wrote in its status file; {} when there is none or it is
    unreadable."""
    try:
        data = json.loads((meta_dir(store_cfg) / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_status(
    store_cfg: StoreConfig, started: float, report: CycleReport | None, error: str | None = None
) -> None:
    """Merge this cycle's facts into ``status.json`` (earlier per-remote successes are kept). Never
    creates the meta dir: a store that vanished gets no status file in its place."""
    if not meta_dir(store_cfg).is_dir():
        return
    try:
        _update_status(store_cfg, started, report, error)
    except (OSError, sqlite3.Error) as exc:  # e.g. disk full: the cycle's own outcome matters more
        log.log(
            logging.DEBUG if error else logging.WARNING,
            "store %s: could not write %s: %s",
            store_cfg.name,
            STATUS_FILE,
            exc,
        )


def _update_status(
    store_cfg: StoreConfig, started: float, report: CycleReport | None, error: str | None
) -> None:
    old = read_status(store_cfg)
    old_remotes = old.get("remotes", {}) if isinstance(old.get("remotes"), dict) else {}
    remotes: dict[str, Any] = {}
    for name, url in store_cfg.remotes.items():
        entry = dict(old_remotes.get(name, {}))
        entry["url"] = url
        remotes[name] = entry
    cycles = int(old.get("cycles", 0)) + 1
    status: dict[str, Any] = {
        "store": store_cfg.name,
        "path": str(store_cfg.path),
        "branch": store_cfg.branch,
        "last_cycle": _now_iso(started),
        "last_cycle_error": error,
        "cycles": cycles,
        "unpushed": old.get("unpushed", 0),
        "remotes": remotes,
        "clashes": old.get("clashes", []),
    }
    if report is not None:
        status["clashes"] = [
            {"file": str(clash.live), "store_path": clash.path, "here": clash.here, "advice": clash.advice()}
            for clash in report.clashes
        ]
        for outcome in report.remotes:
            entry = remotes.setdefault(outcome.remote, {})
            entry["status"] = outcome.status
            entry["last_error"] = remote_error(outcome)
            if outcome.status == "ok":
                entry["last_success"] = _now_iso(time.time())
        status["unpushed"] = report.unpushed
    changed = report is None or report.commit or report.delivered or any(o.merged for o in report.remotes)
    if changed or "size_bytes" not in old:
        status.update(store_facts(store_cfg))
    else:  # an idle cycle: the store's files are as the last walk found them; only held lines may move
        status.update({key: old.get(key) for key in ("both_kept", "set_aside", "untracked", "size_bytes")})
        status["held_back_secrets"] = _held(store_cfg)
    atomic_write(
        meta_dir(store_cfg) / STATUS_FILE,
        json.dumps(status, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8"),
    )


def store_facts(store_cfg: StoreConfig) -> dict[str, Any]:
    """What `status` lists that is read from the store itself: held-back secrets, both-kept files, files
    moved aside for a directory, store content no track maps here, and the store's size in bytes."""
    held = _held(store_cfg)
    both_kept: list[str] = []
    set_aside: list[str] = []
    untracked: set[str] = set()
    size = 0
    root = store_cfg.path
    git_dir = StoreLayout(root).git_dir
    # Legacy store paths still hold what machines not upgraded yet sync there; they are folded, not lost.
    folded = tuple(old for track in store_cfg.tracks for old in track.legacy)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        in_git = here.is_relative_to(git_dir)  # once per directory: thousands of files share one
        for name in filenames:
            path = here / name
            try:
                size += path.lstat().st_size
            except OSError:
                continue
            if in_git:
                continue
            rel = path.relative_to(root).as_posix()
            if is_store_meta(rel):
                continue
            if live_path(store_cfg.tracks, rel) is None and not any(
                rel.startswith(old + "/") or rel == old for old in folded
            ):
                untracked.add(untracked_group(rel, store_cfg.tracks))
            if not is_append_only(rel) and _has_both_kept(path):
                both_kept.append(str(live_path(store_cfg.tracks, rel) or rel))
            if is_aside(rel):
                set_aside.append(str(live_path(store_cfg.tracks, rel) or rel))
        dirnames.sort()
    return {
        "held_back_secrets": held,
        "both_kept": sorted(both_kept),
        "set_aside": sorted(set_aside),
        "untracked": sorted(untracked),
        "size_bytes": size,
    }


def _held(store_cfg: StoreConfig) -> list[dict[str, Any]]:
    """The lines the secret scanner keeps on this machine: live file, store path, line, detector."""
    if not (meta_dir(store_cfg) / "state.sqlite").exists():
        return []
    with SyncState(meta_dir(store_cfg)) as state:
        return [
            {
                "file": str(live_path(store_cfg.tracks, rel) or rel),
                "store_path": rel,
                "line": line.line,
                "detector": line.detector,
            }
            for rel, line in state.held()
        ]


def _has_both_kept(path: Path) -> bool:
    try:
        return _BOTH_KEPT in path.read_bytes()
    except OSError:
        return False


def live_path(tracks: tuple[Track, ...], rel: str) -> Path | None:
    """The live path of store path ``rel`` on this machine, None when no track maps it (or the track
    leaves it out: ``Track.excludes``)."""
    for track in tracks:
        prefix = track.store_path.strip("/")
        if rel == prefix:
            return track.live
        if rel.startswith(prefix + "/"):
            live = track.live / rel[len(prefix) + 1 :]
            return None if any(live.is_relative_to(p) for p in track.excludes) else live
    return None

"""The status file a cycle writes in its store's meta dir (``status.json``), and the facts read from the
store itself (``store_facts``) that `memsync status` lists (DESIGN "One sync cycle")."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

from memsync.base.fsio import atomic_write
from memsync.base.paths import STATUS_FILE
from memsync.config.file import StoreConfig
from memsync.cycle.report import CycleReport, remote_error
from memsync.cycle.store_facts import facts_after
from memsync.store.access import meta_dir

log = logging.getLogger(__name__)


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
    status.update(facts_after(store_cfg, old, report))
    atomic_write(
        meta_dir(store_cfg) / STATUS_FILE,
        json.dumps(status, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8"),
        # A cache of what the cycles did: lost to a power cut, the next cycle writes it again. Each idle
        # cycle writes it, and two fsyncs would be most of such a cycle's own time.
        durable=False,
    )

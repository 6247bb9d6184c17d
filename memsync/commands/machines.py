"""The machines a store's history has seen: per host, its last commit, what it had not pulled yet when it
made it, and its commits per day, read from the commits' ``Memsync-Host`` trailers (the UI's Machines
page)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from memsync.base.paths import StoreLayout
from memsync.store.facade import Store
from memsync.store.history import LogRecord
from memsync.tracks.resolve import load_stores


@dataclass(frozen=True)
class Machine:
    """One host of store ``store``: its last commit (``sha``, ``when``, ``subject``), how many commits of
    this machine's copy of the history that commit lacks (``not_pulled``: what the host had not pulled
    when it last wrote), and its commits per local day (``per_day``)."""

    store: str
    host: str
    sha: str
    when: datetime
    subject: str
    not_pulled: int
    per_day: Mapping[date, int]


def machines(config_file: Path | None) -> list[Machine]:
    """Every host seen in the history of each store of config file ``config_file`` (a commit without a
    host trailer counts as ``?``), by store, then most recent last commit first. Raises ``MemsyncError``
    (no store, git failing)."""
    config = load_stores(config_file)
    found: list[Machine] = []
    for store_cfg in config.stores.values():
        if not StoreLayout(store_cfg.path).exists:
            continue
        store = Store(store_cfg, config.host, config.identity())
        days: dict[str, Counter[date]] = {}
        last: dict[str, LogRecord] = {}
        for record in store.log():  # newest first: a host's first record is its last commit
            host = record.host or "?"
            days.setdefault(host, Counter())[record.date.astimezone().date()] += 1
            last.setdefault(host, record)
        found.extend(
            Machine(
                store_cfg.name,
                host,
                record.sha,
                record.date,
                record.message.strip().splitlines()[0] if record.message.strip() else "",
                store.missing_from(record.sha),
                dict(days[host]),
            )
            for host, record in last.items()
        )
    return sorted(found, key=lambda m: (m.store, -m.when.timestamp(), m.host))

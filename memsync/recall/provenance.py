"""Who wrote a piece of memory, and when: read from the local store's git history (DESIGN "One sync
cycle" step 3: every commit carries a ``Memsync-Host:`` trailer; "Agent hosts", MCP ``recall``).

An entry or a line is credited to the oldest commit that added it to its store file (``git log -S`` on
that file), which is the commit of the machine that published it, whoever merged it later. A curated
entry, replaced whole by its writers, is credited to the latest commit that changed it. Memory not
committed yet (written since the last sync, or untracked) is credited to this machine.

The host is what the commit's trailer says, which its writer chose: it is bounded and neutralised, and
a commit that names this machine's host but that this machine did not make (``refs.written_here``) is
marked as such.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TypedDict

from memsync.base.paths import StoreLayout
from memsync.config.file import NETWORK_TIMEOUT_S, Config, StoreConfig
from memsync.formats.quoted import host_label
from memsync.recall.documents import Hit
from memsync.recall.index import RecallIndex
from memsync.store import history
from memsync.store.history import LogRecord
from memsync.store.refs import written_here
from memsync.store.repo import StoreGit


class Attribution(TypedDict):
    """The ``host``, ``date`` (ISO 8601) and ``committed`` fields of a hit."""

    host: str
    date: str
    committed: bool


def _local_date(hit: Hit) -> str:
    try:
        moment = datetime.fromtimestamp(hit.doc.file.stat().st_mtime, UTC)
    except OSError:
        return ""
    return moment.isoformat(timespec="seconds")


def _store_git(config: Config, store_cfg: StoreConfig) -> StoreGit | None:
    """git in the store ``store_cfg`` (a repository), None when it has no commit yet."""
    g = StoreGit(store_cfg, config.host, config.identity(), NETWORK_TIMEOUT_S, None)
    return None if g.rev("HEAD") is None else g


def attribute(config: Config | None, hits: Sequence[Hit], index: RecallIndex) -> list[Attribution]:
    """The attribution of each of ``hits``, in order: an entry or line whose introducing commit
    ``index`` recorded (it never changes) without running git; for each other hit one git call, and
    one per store to see that it has a commit. The date is what the item itself says (an entry's
    ``created_at``, a log line's day and time), else the commit's date, else the file's modification
    time. Raises ``MemsyncError`` when git fails in a store."""
    here = config.host if config is not None else socket.gethostname()
    # Read through the store's git alone (no ``Store``: its import is most of a first recall's).
    stores: dict[str, StoreGit | None] = {}  # None: no commit yet
    made: dict[str, frozenset[str]] = {}  # per store, its reflog: read when a commit names this host
    present: dict[str, bool] = {}  # per store, whether its repository exists: a stat, not one per hit
    result: list[Attribution] = []
    for hit in hits:
        doc = hit.doc
        record: LogRecord | None = None
        rel = doc.store_file
        store_cfg = None
        if config is not None and doc.source.store is not None and rel is not None:
            store_cfg = config.stores[doc.source.store]
            if store_cfg.name not in present:
                present[store_cfg.name] = StoreLayout(store_cfg.path).exists
            if present[store_cfg.name]:
                if doc.needle is not None:
                    record = index.provenance(store_cfg.name, rel, doc.needle)
                if record is None:
                    if store_cfg.name not in stores:
                        stores[store_cfg.name] = _store_git(config, store_cfg)
                    g = stores[store_cfg.name]
                    if g is not None and doc.needle is not None:
                        record = history.introduced(g, doc.needle, rel)
                        if record is not None:
                            index.note_provenance(store_cfg.name, rel, doc.needle, record)
                    elif g is not None:
                        record = history.last_change(g, rel)
        if record is None:
            result.append(Attribution(host=here, date=doc.date or _local_date(hit), committed=False))
        else:
            date = doc.date or record.date.isoformat(timespec="seconds")
            claimed = False
            if record.host == here and store_cfg is not None:
                if store_cfg.name not in made:
                    made[store_cfg.name] = written_here(StoreLayout(store_cfg.path).git_dir)
                claimed = record.sha not in made[store_cfg.name]
            result.append(Attribution(host=host_label(record.host, claimed), date=date, committed=True))
    return result

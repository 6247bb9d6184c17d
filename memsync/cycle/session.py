"""Per-process state carried from one sync cycle to the next (DESIGN "Layers": long-running state lives
in objects the daemon owns, not in module globals)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from memsync.base.refs import read_ref
from memsync.config.file import Config, StoreConfig, Track
from memsync.recall.search import Holder
from memsync.store.access import open_store
from memsync.store.facade import Store
from memsync.store.refs import head
from memsync.sync.notices import Notices

log = logging.getLogger(__name__)


@dataclass
class Session:
    """What one process remembers between the cycles it runs. The daemon keeps one for its lifetime and
    passes it to every cycle; a one-shot command makes a fresh one.

    ``opened``: the stores opened by earlier cycles, by store path, with the settings they were opened
    with (opening runs recovery and rewrites the store's git config, several git processes, which a
    long-running daemon needs on start and after a failure only). ``unreachable``: tracked paths found
    behind a dangling symlink, warned about once until they are reachable again. ``notices``: what the
    sync passes warned about already (a clash, a file that is not regular), logged once. ``revisit``:
    per store path, the store paths whose delivery the last cycle left waiting (a busy writer, an
    unfinished line, a local edit to publish first) or found meeting a directory: the next cycle visits
    them whatever changed. ``heads``: per store path, the store's HEAD when the last cycle ended, so the
    next one also delivers what a command (compact, purge, resync) committed in between. ``ahead``: per
    store path and remote, the commits the remote lacks, with the (HEAD, remote-tracking ref) they were
    counted at. ``index``: the recall index, held open from one cycle's refresh to the next.
    """

    opened: dict[Path, tuple[object, Store]] = field(default_factory=dict)
    unreachable: set[Path] = field(default_factory=set)
    notices: Notices = field(default_factory=Notices)
    revisit: dict[Path, frozenset[str]] = field(default_factory=dict)
    heads: dict[Path, str | None] = field(default_factory=dict)
    ahead: dict[tuple[Path, str], tuple[tuple[str | None, str | None], int]] = field(default_factory=dict)
    index: Holder = field(default_factory=Holder)

    def store_for(
        self, config: Config, store_cfg: StoreConfig, reopen: bool, stop: threading.Event | None
    ) -> Store:
        """The store of ``store_cfg`` an earlier cycle opened with the same settings, unless ``reopen``;
        else the store opened anew (``access.open_store``, recovery included). Raises ``MemsyncError``."""
        key = (
            store_cfg,
            config.host,
            config.author_name,
            config.author_email,
            config.network_timeout_s,
            stop,
        )
        cached = self.opened.pop(store_cfg.path, None)
        store = cached[1] if cached is not None and cached[0] == key and not reopen else None
        if store is None:
            store = open_store(config, store_cfg, stop)
        self.opened[store_cfg.path] = (key, store)
        return store

    def forget(self, store_cfg: StoreConfig) -> None:
        """Drop the store of ``store_cfg`` after a failed cycle: the next cycle opens it anew (and, being
        a full pass, visits every file: nothing to revisit)."""
        self.opened.pop(store_cfg.path, None)
        self.revisit.pop(store_cfg.path, None)
        self.heads.pop(store_cfg.path, None)

    def unpushed(self, store: Store, remote: str) -> int:
        """How many commits of ``store`` ``remote`` lacks (``Store.unpushed_count``), counted again only
        when HEAD or the remote-tracking ref moved since (both read from the refs, without git)."""
        refs_now = (head(store.git_dir), read_ref(store.git_dir, f"refs/remotes/{remote}/{store.cfg.branch}"))
        known = self.ahead.get((store.worktree, remote))
        if known is not None and known[0] == refs_now and refs_now[0] is not None:
            return known[1]
        count = store.unpushed_count(remote)
        self.ahead[(store.worktree, remote)] = (refs_now, count)
        return count

    def reachable(self, track: Track) -> bool:
        """False while the live path or a directory above it is a symlink to nothing (a drive not
        mounted): that track is neither published (its files would read as deleted, I1) nor delivered
        (nothing is created in the symlink's place) until the target is back; the other tracks sync on.
        Warns once per track until it is reachable again."""
        dangling = next(
            (p for p in (track.live, *track.live.parents) if p.is_symlink() and not p.exists()), None
        )
        if dangling is None:
            self.unreachable.discard(track.live)
            return True
        if track.live not in self.unreachable:
            self.unreachable.add(track.live)
            log.warning(
                "%s: not synced while the symlink %s points to nothing (a drive not mounted?); its files "
                "stay in the store and on the peers",
                track.live,
                dangling,
            )
        return False

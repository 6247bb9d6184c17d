"""How a command or a cycle gets at a store: its meta dir, its cycle lock, and the store opened (or
created) with the config's host, identity and network timeout (DESIGN "One sync cycle" step 2, I7)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memsync.base.paths import StoreLayout
from memsync.config.file import Config, StoreConfig
from memsync.errors import MemsyncError
from memsync.store.facade import Store
from memsync.store.locks import hold_cycle

LOCK_WAIT_S = 600.0


def meta_dir(store_cfg: StoreConfig) -> Path:
    """The store's memsync meta dir (``<store>/.git/memsync``): state, status file, cycle lock."""
    return StoreLayout(store_cfg.path).meta_dir


@contextmanager
def cycle_lock(
    store_cfg: StoreConfig,
    wait_s: float = LOCK_WAIT_S,
    *,
    config: Path | None = None,
    stop: threading.Event | None = None,
) -> Iterator[None]:
    """Hold the store's cycle lock (a file lock in its meta dir, recording this process and the config
    file ``config``); waits up to ``wait_s`` seconds for another cycle to finish, with a line naming its
    holder (``store.locks.hold_cycle``). Raises ``MemsyncError`` if the store does not exist or the wait
    ends, ``git.Stopped`` when ``stop`` is set while waiting."""
    if not StoreLayout(store_cfg.path).exists:
        raise MemsyncError(
            f"cannot sync store {store_cfg.name!r}: {store_cfg.path} is not a memsync store. "
            f"Run `memsync init`, or fix stores.{store_cfg.name}.path in the config"
        )
    meta_dir(store_cfg).mkdir(parents=True, exist_ok=True)
    with hold_cycle(meta_dir(store_cfg), store_cfg.name, wait_s, config=config, stop=stop):
        yield


def open_store(config: Config, store_cfg: StoreConfig, stop: threading.Event | None = None) -> Store:
    """Open ``store_cfg``'s store with ``config``'s host, identity and network timeout (recovery
    included); ``stop``: see ``Store``. Raises ``MemsyncError``."""
    return Store.open(
        store_cfg, config.host, config.identity(), network_timeout_s=config.network_timeout_s, stop=stop
    )


def ensure_store(config: Config, store_cfg: StoreConfig) -> Store:
    """Create (or clone from the first remote) ``store_cfg``'s store if it does not exist, then open it.
    Raises ``MemsyncError`` (e.g. the directory is not empty, the remote is unreachable)."""
    return Store.init_or_clone(
        store_cfg, config.identity(), config.host, network_timeout_s=config.network_timeout_s
    )

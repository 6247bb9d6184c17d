"""The daemon's worker threads: one store's sync cycle, or one probe of a remote that could not be
reached, each in a thread of its own whose end is put on the daemon's queue (DESIGN "One sync cycle";
one hanging remote must not hold up the other stores and remotes).

The threads are daemon threads and every git they run watches the daemon's stop event: after SIGTERM a
thread still inside a git command is cut short at once (``git.Stopped``), and one stuck elsewhere does
not keep the process alive.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from memsync.base.git import Stopped
from memsync.config.file import Config, StoreConfig
from memsync.cycle.report import CycleReport
from memsync.cycle.run import Cycle
from memsync.cycle.session import Session
from memsync.errors import MemsyncError
from memsync.store.facade import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CycleDone:
    """A cycle of ``store`` ended: its report, or the error (both None: cut short by the stop)."""

    store: str
    report: CycleReport | None
    error: str | None


@dataclass(frozen=True)
class Probed:
    """A probe of ``remote`` of ``store`` ended: ``problem`` None when it answered, else why not."""

    store: str
    remote: str
    problem: str | None


class Workers:
    """Starts the worker threads; each puts its ``CycleDone`` or ``Probed`` with ``put``. ``stop`` is the
    daemon's stop event (see the module docstring); ``session`` the daemon's state across cycles."""

    def __init__(
        self, put: Callable[[CycleDone | Probed], None], stop: threading.Event, session: Session
    ) -> None:
        self._put = put
        self._stop = stop
        self._session = session

    def cycle(
        self,
        name: str,
        config: Config,
        store_cfg: StoreConfig,
        remotes: Collection[str],
        full: bool,
        changed: Collection[Path] | None,
    ) -> None:
        """Run one cycle of store ``name`` (``cycle.Cycle`` with ``remotes``, ``full`` reconcile and the
        live paths ``changed`` since the last cycle, None for every file) in a new thread."""
        cycle = Cycle(
            config,
            store_cfg,
            self._session,
            remotes=tuple(remotes),
            full_reconcile=full,
            stop=self._stop,
            changed=changed,
        )
        threading.Thread(target=self._cycle, args=(cycle,), name=f"memsync cycle {name}", daemon=True).start()

    def probe(self, name: str, config: Config, store_cfg: StoreConfig, remote: str) -> None:
        """Ask ``remote`` of store ``name`` whether it answers (``Store.probe``) in a new thread."""
        args = (name, config, store_cfg, remote)
        threading.Thread(target=self._probe, args=args, name=f"memsync probe {remote}", daemon=True).start()

    def _cycle(self, cycle: Cycle) -> None:
        name = cycle.store_cfg.name
        try:
            done = CycleDone(name, cycle.run(), None)
        except Stopped:
            done = CycleDone(name, None, None)
        except MemsyncError as exc:
            done = CycleDone(name, None, str(exc))
        except Exception as exc:  # a failing cycle must never end the daemon
            log.exception("store %s: sync cycle failed unexpectedly", name)
            done = CycleDone(name, None, repr(exc))
        self._put(done)

    def _probe(self, name: str, config: Config, store_cfg: StoreConfig, remote: str) -> None:
        store = Store(
            store_cfg,
            config.host,
            config.identity(),
            network_timeout_s=config.network_timeout_s,
            stop=self._stop,
        )
        try:
            problem = store.probe(remote)
        except Stopped:
            return
        except MemsyncError as exc:
            problem = str(exc)
        except Exception as exc:  # a failing probe must never end the daemon
            log.exception("store %s: probe of %s failed unexpectedly", name, remote)
            problem = repr(exc)
        self._put(Probed(name, remote, problem))

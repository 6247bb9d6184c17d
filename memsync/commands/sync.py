"""`memsync sync`: one cycle of every store now, saying what it does: a line per remote as it is
contacted and one with its outcome, a warning once per remote that failed (DESIGN "One sync cycle")."""

from __future__ import annotations

import logging
from pathlib import Path

from memsync.config import Config, StoreConfig, load_config
from memsync.cycle import run_cycle
from memsync.cycle_report import EXIT_ERROR, EXIT_NOT_PUSHED, EXIT_OK, log_report
from memsync.errors import MemsyncError
from memsync.instance import instance_lock
from memsync.session import Session
from memsync.store.exchange import RemoteOutcome

log = logging.getLogger(__name__)


def run_all(config: Config) -> int:
    """One cycle over every store of ``config`` (what `memsync sync` does), with a line per remote as it
    is contacted and one with its outcome (a warning, once, when it failed); the exit code is 0 when
    everything is pushed, 75 when committed but something is not pushed, 1 when a cycle failed."""
    session = Session()  # one command's cycles: each store opened once, each dangling link warned once
    code = EXIT_OK
    for name, store_cfg in config.stores.items():

        def progress(remote: str, outcome: RemoteOutcome | None, store: StoreConfig = store_cfg) -> None:
            if outcome is None:
                log.info("store %s: contacting %s (%s)", store.name, remote, store.remotes[remote])
            else:
                level = logging.INFO if outcome.status == "ok" else logging.WARNING
                log.log(level, "store %s: %s: %s", store.name, remote, outcome.message)

        try:
            report = run_cycle(config, store_cfg, session=session, progress=progress)
        except MemsyncError as exc:
            log.error("store %s: %s", name, exc)
            code = EXIT_ERROR
            continue
        log_report(name, report, remotes=False)
        if not report.ok and code == EXIT_OK:
            code = EXIT_NOT_PUSHED
    return code


def run_all_from(path: Path) -> int:
    """Load the config file ``path`` and run :func:`run_all` on it (the `memsync sync` command)."""
    return run_all(load_config(path))


def run_once(path: Path) -> int:
    """`memsync daemon --once`: :func:`run_all` on the config file ``path`` while holding that config's
    daemon lock (``instance.instance_lock``: ``MemsyncError`` when a daemon runs for it). Returns the
    exit code of :func:`run_all`."""
    config = load_config(path)
    with instance_lock(path):
        return run_all(config)

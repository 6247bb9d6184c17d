"""`memsync sync`: one cycle of every store now, saying what it does (issue 4 "CLI"; issue 11: a line per
remote as it is contacted and one with its outcome, a warning once per remote that failed)."""

from __future__ import annotations

import logging
from pathlib import Path

from memsync.config import Config, StoreConfig, load_config
from memsync.cycle import CycleReport, run_cycle
from memsync.errors import MemsyncError
from memsync.store.exchange import RemoteOutcome

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_NOT_PUSHED = 75
EXIT_ERROR = 1


def log_report(name: str, report: CycleReport, *, remotes: bool = True) -> None:
    """Log what the cycle of store ``name`` committed, pulled and pushed (unless not ``remotes``: said
    per remote already) and delivered."""
    if report.commit_message:
        log.info("store %s: committed %s", name, report.commit_message.splitlines()[0])
    for outcome in report.remotes if remotes else ():
        if outcome.merged:
            log.info("store %s: pulled from %s", name, outcome.remote)
        if outcome.pushed:
            log.info("store %s: pushed to %s", name, outcome.remote)
    for path in report.delivered:
        log.info("store %s: delivered %s", name, path)


def run_all(config: Config) -> int:
    """One cycle over every store of ``config`` (what `memsync sync` does), with a line per remote as it
    is contacted and one with its outcome (a warning, once, when it failed); the exit code is 0 when
    everything is pushed, 75 when committed but something is not pushed, 1 when a cycle failed."""
    code = EXIT_OK
    for name, store_cfg in config.stores.items():

        def progress(remote: str, outcome: RemoteOutcome | None, store: StoreConfig = store_cfg) -> None:
            if outcome is None:
                log.info("store %s: contacting %s (%s)", store.name, remote, store.remotes[remote])
            else:
                level = logging.INFO if outcome.status == "ok" else logging.WARNING
                log.log(level, "store %s: %s: %s", store.name, remote, outcome.message)

        try:
            report = run_cycle(config, store_cfg, progress=progress)
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

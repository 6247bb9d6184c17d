"""`memsync sync`: one cycle of every store now, saying what it does in the order it happens: the commit
of local changes, a line per remote as it is contacted and one with its outcome (a warning, once, naming
the remote once, when it failed), then what was delivered (DESIGN "One sync cycle")."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
from pathlib import Path

from memsync.config import Config, StoreConfig, load_stores
from memsync.cycle import run_cycle
from memsync.cycle_report import EXIT_ERROR, EXIT_NOT_PUSHED, EXIT_OK, CycleReport, log_report
from memsync.errors import MemsyncError
from memsync.instance import instance_lock
from memsync.paths import StoreLayout
from memsync.session import Session
from memsync.store.exchange import RemoteOutcome
from memsync.store.refs import head

log = logging.getLogger(__name__)

_COMMITS_SAID = 5  # a cycle commits local changes and, once for a legacy store, its id: never more


def outcome_line(remote: str, url: str, outcome: RemoteOutcome) -> str:
    """The line `memsync sync` prints for ``outcome``, the exchange with ``remote`` at ``url``: ``<remote>:
    <what it did>`` when it went well; a failure's message (which names the remote) with the URL after
    the remote's name unless the message holds the URL already; the remote and URL first for a message
    that does not name it."""
    if outcome.status == "ok":
        return f"{remote}: {outcome.message}"
    named = re.search(rf"(?<![\w.-]){re.escape(remote)}(?![\w.-])", outcome.message)
    if named is None:
        return f"{remote} ({url}): {outcome.message}"
    if url in outcome.message:
        return outcome.message
    at = named.end()
    return f"{outcome.message[:at]} ({url}){outcome.message[at:]}"


def _say_commits(session: Session, config: Config, store: StoreConfig, before: str | None) -> set[str]:
    """Log the commits this cycle made so far (``HEAD`` moved from ``before``: local changes, a legacy
    store's id), oldest first; called as the exchange starts, so the lines come before the remotes'.
    Returns the shas said."""
    now = head(StoreLayout(store.path).git_dir)
    if now is None or now == before:
        return set()
    try:
        records = session.store_for(config, store, reopen=False, stop=None).log(limit=_COMMITS_SAID)
    except MemsyncError:  # the report after the cycle says it then
        return set()
    new = list(itertools.takewhile(lambda record: record.sha != before, records))
    for record in reversed(new):
        log.info("store %s: committed %s", store.name, (record.message.splitlines() or [""])[0])
    return {record.sha for record in new}


def _cycle_told(session: Session, config: Config, store_cfg: StoreConfig) -> CycleReport:
    """Run the cycle of ``store_cfg``, logging the commit and each remote as it happens; the report back
    (its ``commit_message`` dropped when said already). Raises ``MemsyncError`` like ``run_cycle``."""
    before = head(StoreLayout(store_cfg.path).git_dir)
    said: list[set[str]] = []  # the commits said as the exchange started (one item once asked)

    def progress(remote: str, outcome: RemoteOutcome | None) -> None:
        url = store_cfg.remotes[remote]
        if outcome is None:
            if not said:
                said.append(_say_commits(session, config, store_cfg, before))
            log.info("store %s: contacting %s (%s)", store_cfg.name, remote, url)
        else:
            level = logging.INFO if outcome.status == "ok" else logging.WARNING
            log.log(level, "store %s: %s", store_cfg.name, outcome_line(remote, url, outcome))

    report = run_cycle(config, store_cfg, session=session, progress=progress)
    if said and report.commit in said[0]:
        return dataclasses.replace(report, commit_message=None)
    return report


def run_all(config: Config) -> int:
    """One cycle over every store of ``config`` (what `memsync sync` does), logged in the order it happens
    (commit, each remote as it is contacted and its outcome, a warning once when it failed, delivery);
    the exit code is 0 when everything is pushed, 75 when committed but something is not pushed, 1 when
    a cycle failed."""
    session = Session()  # one command's cycles: each store opened once, each dangling link warned once
    code = EXIT_OK
    for name, store_cfg in config.stores.items():
        try:
            report = _cycle_told(session, config, store_cfg)
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
    return run_all(load_stores(path))


def run_once(path: Path) -> int:
    """`memsync daemon --once`: :func:`run_all` on the config file ``path`` while holding that config's
    daemon lock (``instance.instance_lock``: ``MemsyncError`` when a daemon runs for it). Returns the
    exit code of :func:`run_all`."""
    config = load_stores(path)
    with instance_lock(path):
        return run_all(config)

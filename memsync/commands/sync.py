"""`memsync sync`: one cycle of every store now, logging what it does in the order it happens: the commit
of local changes, a line per remote as it is contacted and one with its outcome (a warning, once, naming
the remote once, when it failed), then what was delivered (DESIGN "One sync cycle"); then, on stdout,
one line per store with its result, which points at a failure's warning rather than repeating it."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
from collections.abc import Callable
from pathlib import Path

from memsync.base.paths import StoreLayout
from memsync.base.remote_url import redacted
from memsync.base.wording import plural
from memsync.config.file import Config, StoreConfig
from memsync.cycle.report import EXIT_ERROR, EXIT_NOT_PUSHED, EXIT_OK, EXIT_REMOVED, CycleReport, log_report
from memsync.cycle.run import Cycle
from memsync.cycle.session import Session
from memsync.daemon.instance import instance_lock
from memsync.errors import MemsyncError
from memsync.store.exchange import RemoteOutcome
from memsync.store.refs import head
from memsync.tracks.resolve import load_stores

log = logging.getLogger(__name__)


# What a result line says of a failed remote: the warning says what failed and why, once.
_WARNED = "failed, see the warning on stderr"
_COMMITS_SAID = 5  # a cycle commits local changes and, once for a legacy store, its id: never more


def outcome_line(remote: str, url: str, outcome: RemoteOutcome) -> str:
    """The line `memsync sync` prints for ``outcome``, the exchange with ``remote`` at ``url`` (shown
    ``redacted``): ``<remote>: <what it did>`` when it went well; a failure's message (which names the
    remote) with the URL after the remote's name unless the message holds the URL already; the remote
    and URL first for a message that does not name it."""
    if outcome.status == "ok":
        return f"{remote}: {outcome.message}"
    url = redacted(url)
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


def _cycle_told(session: Session, config: Config, store_cfg: StoreConfig) -> tuple[CycleReport, bool]:
    """Run the cycle of ``store_cfg``, logging the commit and each remote as it happens; the report back,
    and whether its commit was said already. Raises ``MemsyncError`` like ``Cycle.run``."""
    before = head(StoreLayout(store_cfg.path).git_dir)
    said: list[set[str]] = []  # the commits said as the exchange started (one item once asked)

    def progress(remote: str, outcome: RemoteOutcome | None) -> None:
        url = store_cfg.remotes[remote]
        if outcome is None:
            if not said:
                said.append(_say_commits(session, config, store_cfg, before))
            log.info("store %s: contacting %s (%s)", store_cfg.name, remote, redacted(url))
        else:
            level = logging.INFO if outcome.status == "ok" else logging.WARNING
            log.log(level, "store %s: %s", store_cfg.name, outcome_line(remote, url, outcome))

    report = Cycle(config, store_cfg, session, progress=progress).run()
    return report, bool(said) and report.commit in said[0]


def result_line(store_cfg: StoreConfig, report: CycleReport) -> str:
    """What `memsync sync` prints on stdout for one store's cycle: what it committed, each remote's
    outcome (a failed one only pointed at: its warning, logged as it happened, says what and why), and
    what it delivered, e.g. ``store personal: committed memory: +1 entry; origin: pushed; delivered 1
    file``."""
    parts = [
        f"committed {report.commit_message.splitlines()[0]}" if report.commit_message else "nothing to commit"
    ]
    parts.extend(
        outcome_line(outcome.remote, store_cfg.remotes.get(outcome.remote, ""), outcome)
        if outcome.status == "ok"
        else f"{outcome.remote}: {_WARNED}"
        for outcome in report.remotes
    )
    if not store_cfg.remotes:
        parts.append("no remote: nothing pushed (`memsync remote add`)")
    parts.append(
        f"delivered {plural(len(report.delivered), 'file')}" if report.delivered else "nothing delivered"
    )
    return f"store {store_cfg.name}: {'; '.join(parts)}"


def run_all(config: Config, say: Callable[[str], None] | None = None) -> int:
    """One cycle over every store of ``config`` (what `memsync sync` does), logged in the order it happens
    (commit, each remote as it is contacted and its outcome, a warning once when it failed, delivery),
    then, when ``say`` is given, one :func:`result_line` per store (or its failure) to it; the exit code
    is 0 when everything is pushed, 75 when committed but something is not pushed, 77 when committed
    but a member removed this device from an encrypted remote, 1 when a cycle failed (the first of 1,
    77, 75 that applies)."""
    session = Session()  # one command's cycles: each store opened once, each dangling link warned once
    code = EXIT_OK
    results: list[str] = []
    for name, store_cfg in config.stores.items():
        try:
            report, commit_said = _cycle_told(session, config, store_cfg)
        except MemsyncError as exc:
            log.error("store %s: %s", name, exc)
            results.append(f"store {name}: failed, see the error on stderr")
            code = EXIT_ERROR
            continue
        log_report(
            name, dataclasses.replace(report, commit_message=None) if commit_said else report, remotes=False
        )
        results.append(result_line(store_cfg, report))
        if any(outcome.status == "removed" for outcome in report.remotes) and code != EXIT_ERROR:
            code = EXIT_REMOVED
        elif not report.ok and code == EXIT_OK:
            code = EXIT_NOT_PUSHED
    if say is not None:
        for line in results:
            say(line)
    return code


def run_all_from(path: Path, say: Callable[[str], None] | None = None) -> int:
    """Load the config file ``path`` and run :func:`run_all` on it (the `memsync sync` command)."""
    return run_all(load_stores(path), say)


def run_once(path: Path) -> int:
    """`memsync daemon --once`: :func:`run_all` on the config file ``path`` while holding that config's
    daemon lock (``instance.instance_lock``: ``MemsyncError`` when a daemon runs for it). Returns the
    exit code of :func:`run_all`."""
    config = load_stores(path)
    with instance_lock(path):
        return run_all(config)

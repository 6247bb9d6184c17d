"""What one sync cycle did (``CycleReport``), how it is logged, and the exit codes a run of cycles
gives scripts (DESIGN "One sync cycle")."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memsync.base.wording import plural
from memsync.store.exchange import RemoteOutcome
from memsync.sync.clashes import Clash
from memsync.sync.records import HeldLine
from memsync.sync.reports import DeliverReport

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_NOT_PUSHED = 75
# Committed, but a member removed this device from an encrypted remote: nothing goes there any more
# (sysexits' EX_NOPERM), unlike 75's offline remote that a later sync reaches.
EXIT_REMOVED = 77
EXIT_ERROR = 1
MAX_MESSAGE_CHARS = 16_000


@dataclass(frozen=True)
class StoreChanges:
    """What a cycle changed in its store: HEAD before (``old``) and after (``new``), and ``paths``: each
    store path whose content changed between them, with its size in bytes before (None: absent), or None
    when git could not tell."""

    old: str | None = None
    new: str | None = None
    paths: dict[str, int | None] | None = None


@dataclass(frozen=True)
class CycleReport:
    """What one cycle did for store ``store``.

    ``commit``/``commit_message``: the commit made from local changes (None when nothing changed);
    ``remotes``: one outcome per remote exchanged with (empty when the exchange was skipped);
    ``delivered``: "<track>: <file> <action>" per live file written; ``unpushed``: the most commits any
    remote lacks after the cycle; ``exchanged``: whether an exchange was attempted; ``clashes``: live
    paths where a file meets a directory of the store, not synced until the user renames them;
    ``store_changes``: what the cycle changed in the store (its status facts follow from it); ``held``:
    the lines the secret scanner holds back after the cycle (store path, line), None when not read.
    """

    store: str
    commit: str | None
    commit_message: str | None
    remotes: tuple[RemoteOutcome, ...]
    delivered: tuple[str, ...]
    unpushed: int
    exchanged: bool
    clashes: tuple[Clash, ...] = ()
    store_changes: StoreChanges = StoreChanges()
    held: tuple[tuple[str, HeldLine], ...] | None = None

    @property
    def ok(self) -> bool:
        """True when every remote was reached and nothing is left to push."""
        return self.exchanged and self.unpushed == 0 and all(o.status == "ok" for o in self.remotes)


def remote_error(outcome: RemoteOutcome) -> str | None:
    """The one-line problem of ``outcome``, None when the exchange went well."""
    return None if outcome.status == "ok" else outcome.message


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


def shorten_message(message: str) -> str:
    """``message`` cut to MAX_MESSAGE_CHARS at a list boundary: git gets it as one argument, which the
    OS caps (128 KiB on Linux), and thousands of changed files would pass that."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    kept = message[:MAX_MESSAGE_CHARS].rsplit(", ", 1)[0]
    return f"{kept}, ... (message shortened: {len(message) - len(kept)} more characters)"


def delivered_lines(report: DeliverReport) -> list[str]:
    """One line per live file ``report`` wrote: "<track>: <file> <action> (+N lines)"."""
    return [
        f"{report.name}: {c.label or c.path} {c.action}"
        + (f" (+{plural(c.lines, 'line')})" if c.lines else "")
        for c in report.changes
    ]

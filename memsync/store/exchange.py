"""The exchange with remotes (DESIGN "One sync cycle" step 4, I3, I9): fetch, bring the remote's head in
(``integrate``: this machine's unpushed commits replayed on top of it, else merged through the
drivers), push, never forced. A push another machine's push beat is retried at once after a new fetch,
after a short random pause that grows with each refusal, so machines that pushed together do not
collide again in step. Network problems are outcomes (``offline``), not exceptions."""

from __future__ import annotations

import dataclasses
import random
import re
import time
from collections.abc import Callable
from typing import Literal

from memsync.base import git
from memsync.base.remote_url import redacted
from memsync.errors import MemsyncError
from memsync.store import remotes, sealed, storeid
from memsync.store.format import check_remote_format, is_store
from memsync.store.integrate import integrate
from memsync.store.repo import StoreGit, log

# Pushes per exchange before it reports ``rejected`` (and the daemon backs off): enough for a team of
# dozens pushing the same moment, each refusal costing one fetch, one replay and one push.
PUSH_ATTEMPTS = 12
# The pause before retrying a refused push is random, up to the time the refused attempt took (fetch,
# replay, push: what the machine that won spent too) times 2**(refusals - 1), at least RETRY_JITTER_S
# and at most RETRY_JITTER_CAP_S (seconds): machines refused together spread out instead of colliding
# again in step, a busier remote or machine spreads them wider, and the cap keeps the remote from
# standing idle while they wait (8 s left 4 peers waiting 10 s for nothing).
RETRY_JITTER_S = 0.05
RETRY_JITTER_CAP_S = 4.0

Status = Literal["ok", "offline", "rejected", "removed", "diverged", "unrelated", "conflict"]

_RETRYABLE_PUSH = re.compile(
    r"fetch first|non-fast-forward|stale info|cannot lock ref|failed to update ref|incorrect old value"
    r"|but expected"
)
_NO_REMOTE_BRANCH = re.compile(r"couldn't find remote ref")
# A git killed on the remote's machine leaves its ref lock behind: only a person there can remove it.
_REMOTE_LOCK = re.compile(r"Unable to create '[^']+\.lock': File exists")
# A peer pushing at the same moment holds the same lock for an instant and then moves the branch; a lock
# that refuses this many pushes in a row while the branch stays where it was is stale, and retrying the
# remaining attempts would only delay the one line that tells the user to remove it.
STALE_LOCK_REFUSALS = 3


@dataclasses.dataclass(frozen=True)
class RemoteOutcome:
    """What one exchange with one remote did.

    ``status``: ``ok`` (fetched, merged and pushed what there was), ``offline`` (unreachable; ``message``
    says why in one line), ``rejected`` (the remote refused the push), ``removed`` (a member removed this
    device from the encrypted remote: nothing exchanged; its removal notice, said in full by the fetch
    that read it, stays in ``sealed.vault(...).removed``), ``diverged`` (its history was
    rewritten; memsync stopped exchanging with it until ``resync``), ``unrelated`` (it holds another
    repository: nothing exchanged, ``resync`` refuses it unless told to adopt it), ``conflict`` (a merge
    could not be completed and was aborted). ``pushed``: commits were pushed; ``merged``: remote commits
    were integrated.
    """

    remote: str
    status: Status
    message: str
    pushed: bool = False
    merged: bool = False


# Told about each remote an exchange contacts: (remote, None) before, (remote, its outcome) after.
Progress = Callable[[str, RemoteOutcome | None], None]


@dataclasses.dataclass(frozen=True)
class Fetched:
    """A fetch of a remote's branch: its ``head`` (None when it has no such branch), or the ``failure``
    (the remote could not be reached)."""

    head: str | None
    failure: git.Result | None = None


@dataclasses.dataclass(frozen=True)
class Pushed:
    """A push of the branch: ``done``, else the remote's ``refusal`` (one line) or the ``failure``."""

    refusal: str | None = None
    failure: git.Result | None = None

    @property
    def done(self) -> bool:
        """True when the remote took the push."""
        return self.refusal is None and self.failure is None


def fetch(g: StoreGit, remote: str) -> Fetched:
    """Fetch ``remote``'s branch into its tracking ref (``refs/remotes/<remote>/<branch>``); for an
    encrypted store, the bundles of its ciphertext (``sealed.fetch``, which may raise ``MemsyncError``)."""
    branch = g.cfg.branch
    tracking = f"refs/remotes/{remote}/{branch}"
    if g.cfg.encrypt:
        return Fetched(*sealed.fetch(g, remote))
    result = g.remote(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, f"+refs/heads/{branch}:{tracking}"
    )
    if result.status != 0:
        if _NO_REMOTE_BRANCH.search(result.err):
            g.run("update-ref", "-d", tracking)
            return Fetched(None)
        return Fetched(None, result)
    head = g.rev(tracking)
    log.debug("store %s: fetched %s at %s", g.name, remote, head[:10] if head else "no branch")
    return Fetched(head)


def push(g: StoreGit, remote: str, known: tuple[str, str | None] | None = None) -> Pushed:
    """Push the branch to ``remote``, never forced (sealed, to an encrypted store's remote; ``known``:
    the branch head and the remote's fetched head when the caller just read them)."""
    branch = g.cfg.branch
    result = (
        sealed.push(g, remote, known=known)
        if g.cfg.encrypt
        else g.remote(
            "push", "--porcelain", "--no-verify", remote, f"refs/heads/{branch}:refs/heads/{branch}"
        )
    )
    if result.status == 0:
        return Pushed()
    for line in result.out.splitlines():
        if line.startswith("!"):
            refusal = line.split("\t")[-1].strip()
            lock = _REMOTE_LOCK.search(result.err)
            return Pushed(f"{refusal}: {lock.group(0)} (remove it if no git runs there)" if lock else refusal)
    return Pushed(failure=result)


def unreachable(g: StoreGit, remote: str, result: git.Result) -> str:
    """One line for a fetch, push or probe of ``remote`` that failed with ``result``."""
    if result.timed_out is not None:
        return (
            f"cannot reach {remote} ({redacted(g.cfg.remotes[remote])}): no answer within "
            f"{result.timed_out:g} s (network_timeout_s in the config)"
        )
    if g.full(result) is not None:
        return f"cannot fetch from {remote}: {g.why(result)}"
    return f"cannot reach {remote}: {result.reason}"


def probe(g: StoreGit, remote: str) -> str | None:
    """Ask ``remote`` for its branch head (``git ls-remote``) without touching the store: None when it
    answers, else why not, in one line."""
    asked = g.remote("ls-remote", "--heads", remote, f"refs/heads/{g.cfg.branch}")
    return None if asked.status == 0 else unreachable(g, remote, asked)


def exchange_one(g: StoreGit, remote: str) -> RemoteOutcome:
    """Fetch, integrate and push with ``remote`` (see ``facade.Store.exchange``), up to ``PUSH_ATTEMPTS``
    pushes, a refused one retried after ``retry_pause``. Raises ``MemsyncError`` when a git step fails
    mid-merge (the caller undoes the merge); ``git.Stopped`` once the stop event is set."""
    merged = False
    refused = Pushed()
    took = 0.0
    locked_at: str | None = None
    lock_refusals = 0
    for attempt in range(PUSH_ATTEMPTS):
        if attempt:
            retry_pause(g, attempt, took)
        started = time.monotonic()
        fetched = fetch(g, remote)
        if fetched.failure is not None:
            return RemoteOutcome(remote, "offline", unreachable(g, remote, fetched.failure), merged=merged)
        if g.cfg.encrypt and sealed.vault(g, remote).removed is not None:
            # A member removed this device: nothing more goes there from here. The fetch that read the
            # notice said it in full; each exchange after says this much.
            return RemoteOutcome(
                remote,
                "removed",
                f"this device was removed from {remote}, an encrypted remote of store {g.name}: nothing is "
                "exchanged with it (`memsync status` says who removed it and how to rejoin)",
                merged=merged,
            )
        theirs = fetched.head
        head = g.rev("HEAD")
        seen = remotes.seen(g, remote)
        if theirs is not None and theirs != seen:
            known = seen is not None and g.is_ancestor(seen, theirs)
            if not known and head is not None:
                unrelated = storeid.unrelated(g, remote, head, theirs)
                if unrelated is not None and (seen is not None or not is_store(g, theirs)):
                    return RemoteOutcome(remote, "unrelated", unrelated, merged=merged)
                if unrelated is not None:
                    storeid.join(g, remote, head, theirs)
            if seen is not None and not known:
                return RemoteOutcome(remote, "diverged", _diverged(remote, seen), merged=merged)
            try:
                check_remote_format(g, theirs, remote)
            except MemsyncError as exc:
                return RemoteOutcome(remote, "conflict", str(exc), merged=merged)
        if theirs is not None and theirs != head:
            integrated = integrate(g, theirs, remote, replay_unpushed=True)
            if integrated.problem is not None:
                return RemoteOutcome(remote, "conflict", integrated.problem, merged=merged)
            merged = merged or integrated.merged
            head = g.rev("HEAD")
        if theirs is not None and theirs != seen:
            remotes.set_seen(g, remote, theirs)
        if theirs is not None and head == theirs:
            return RemoteOutcome(remote, "ok", "merged" if merged else "up to date", merged=merged)
        refused = push(g, remote, None if head is None else (head, theirs))
        if refused.done:
            assert head is not None
            log.debug("store %s: pushed to %s at %s", g.name, remote, head[:10])
            remotes.set_seen(g, remote, head)
            return RemoteOutcome(
                remote, "ok", "merged and pushed" if merged else "pushed", pushed=True, merged=merged
            )
        if refused.failure is not None:
            return RemoteOutcome(remote, "offline", unreachable(g, remote, refused.failure), merged=merged)
        if not _RETRYABLE_PUSH.search(refused.refusal or ""):
            return RemoteOutcome(
                remote, "rejected", f"{remote} refused the push: {refused.refusal}", merged=merged
            )
        if _REMOTE_LOCK.search(refused.refusal or ""):
            lock_refusals = lock_refusals + 1 if theirs == locked_at else 1
            locked_at = theirs
            if lock_refusals >= STALE_LOCK_REFUSALS:
                return RemoteOutcome(
                    remote, "rejected", f"{remote} refused the push: {refused.refusal}", merged=merged
                )
        took = time.monotonic() - started
        log.info("store %s: push to %s rejected (%s); fetching again", g.name, remote, refused.refusal)
    return RemoteOutcome(
        remote,
        "rejected",
        f"{remote} refused {PUSH_ATTEMPTS} pushes in a row (last: {refused.refusal}); will retry",
        merged=merged,
    )


def retry_pause(g: StoreGit, refusals: int, took_s: float) -> None:
    """Wait a random time before the push after ``refusals`` refused ones, the last of which took
    ``took_s`` seconds from its fetch to its refusal: up to ``max(took_s, RETRY_JITTER_S)`` times
    ``2**(refusals - 1)`` seconds, at most ``RETRY_JITTER_CAP_S``; cut short by the stop event (the next
    git then raises ``git.Stopped``)."""
    unit = max(took_s, RETRY_JITTER_S)
    pause = random.uniform(0.0, min(RETRY_JITTER_CAP_S, unit * 2.0 ** (refusals - 1)))
    if g.stop is not None:
        g.stop.wait(pause)
    else:
        time.sleep(pause)


def _diverged(remote: str, seen: str) -> str:
    return (
        f"the history of {remote} was rewritten (it no longer contains {seen[:10]}); "
        f"memsync stopped exchanging with it. Run `memsync resync {remote}` to adopt its "
        "history (if another machine ran `memsync purge`, what it removed stays removed "
        "here too)"
    )

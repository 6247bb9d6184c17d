"""`memsync doctor`: one OK/WARN/FAIL line per thing that makes syncing work or not.

Checks: git's version, the commit identity, each store's health (``git fsck --connectivity-only``) and
merge drivers, each remote's reachability (``git ls-remote`` with a timeout), the inotify watch limit
against what the tracked paths need, synced Claude Code indexes against what Claude Code loads, the
daemon, the service, and this clock against the commit times of peers' commits, this clock against the
peers that built on its commits, and entries dated in the future of this clock. Only git and the file
system are consulted; nothing is changed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, get_args

from memsync.base import git
from memsync.base.layout import Kind
from memsync.base.paths import StoreLayout, config_path
from memsync.base.remote_url import redacted
from memsync.base.wording import plural
from memsync.commands import service
from memsync.commands.conflicts import forked_files
from memsync.commands.detect import untracked_hosts
from memsync.config.file import NETWORK_TIMEOUT_S, Config, StoreConfig
from memsync.cycle.store_facts import emptied_folders, store_facts
from memsync.daemon.instance import running_daemon_pid
from memsync.errors import MemsyncError
from memsync.hosts import claude_code
from memsync.memoryfile.clock import TOLERANCE_S, clock_skew, duration, future_in_store
from memsync.recall import embedding
from memsync.store.facade import Store
from memsync.tracks.resolve import load_tracks

Level = Literal["OK", "WARN", "FAIL"]
MIN_GIT = (2, 25)
GIT_TIMEOUT_S = 60.0
# A peer's commit this far in our future means one of the two clocks is wrong; later-wins would suffer.
CLOCK_SKEW_WARN_S = 120.0
INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_watches")


@dataclass(frozen=True)
class Check:
    """One line of the report: its level, what was checked and what was found (or what to do)."""

    level: Level
    what: str
    detail: str

    def line(self) -> str:
        """The printed form: ``LEVEL what: detail``, the level padded so the lines align."""
        return f"{self.level:<4} {self.what}: {self.detail}"


def _git(*args: str, cwd: Path | None = None, timeout: float = GIT_TIMEOUT_S) -> git.Result:
    return git.run(args, cwd=cwd, env=git.noninteractive_env(timeout), timeout=timeout)


def check_git() -> Check:
    """git is installed and at least ``MIN_GIT``."""
    try:
        out = _git("--version").out
    except FileNotFoundError:
        return Check("FAIL", "git", "not installed. Install git (2.25 or newer)")
    match = re.search(r"(\d+)\.(\d+)", out)
    version = (int(match[1]), int(match[2])) if match else (0, 0)
    if version < MIN_GIT:
        return Check("FAIL", "git", f"{out.strip()} is older than {MIN_GIT[0]}.{MIN_GIT[1]}. Upgrade git")
    return Check("OK", "git", out.strip())


def check_identity(config: Config) -> Check:
    """Commits carry a real name and e-mail (the config's ``[author]``, else git's ``user.*``), not the
    ``memsync@<host>`` fallback."""
    who = config.identity()
    if (who.name, who.email) == ("memsync", f"memsync@{config.host}"):
        return Check(
            "WARN",
            "identity",
            "no author name/e-mail: set [author] name and email in the config "
            "(or git config --global user.name/user.email) so peers see who wrote what",
        )
    return Check("OK", "identity", f"{who.name} <{who.email}>, host {config.host}")


def check_store(store: StoreConfig) -> Iterator[Check]:
    """The store's repository exists, passes ``git fsck --connectivity-only``, and has memsync's drivers."""
    what = f"store {store.name}"
    if not StoreLayout(store.path).exists:
        yield Check("FAIL", what, f"no git repository at {store.path}. Run `memsync init`")
        return
    fsck = _git("fsck", "--connectivity-only", "--no-progress", cwd=store.path)
    if fsck.timed_out is not None:
        yield Check("WARN", what, f"git fsck did not finish within {GIT_TIMEOUT_S:.0f} s; run it by hand")
        return
    if fsck.status != 0:
        first = (fsck.err or fsck.out).strip().splitlines()[:1]
        yield Check("FAIL", what, f"git fsck failed: {' '.join(first)}. Back up {store.path} and re-clone it")
    else:
        yield Check("OK", what, f"{store.path}, branch {store.branch}, fsck clean")
    registered = _git("config", "--local", "--get-regexp", r"^merge\.memsync-.*\.driver$", cwd=store.path).out
    missing = [kind for kind in get_args(Kind) if f"merge.memsync-{kind}.driver" not in registered]
    if missing:
        yield Check(
            "WARN",
            f"{what} merge drivers",
            f"not registered: {', '.join(missing)}; the daemon registers them when it starts",
        )
    else:
        yield Check("OK", f"{what} merge drivers", "all registered")
    for folder in emptied_folders(store):
        yield Check("WARN", f"{what} held", folder["advice"])


def check_remote(store: StoreConfig, name: str, url: str, timeout_s: float = NETWORK_TIMEOUT_S) -> Check:
    """The remote answers ``git ls-remote`` within ``timeout_s`` seconds (the config's
    ``network_timeout_s``), without prompting."""
    what = f"remote {store.name}/{name}"
    done = _git("ls-remote", "--heads", url, timeout=timeout_s)
    url = redacted(url)
    if done.timed_out is not None:
        return Check(
            "FAIL",
            what,
            f"{url} did not answer within {timeout_s:g} s (network_timeout_s). Check the network",
        )
    if done.status != 0:
        return Check("FAIL", what, _unreachable(url, done.err))
    return Check("OK", what, f"{url} reachable")


def _unreachable(url: str, stderr: str) -> str:
    """One sentence for a failed ``git ls-remote``: git's first line (the cause; the lines after it are
    generic advice that wraps mid-sentence), or for a path or URL without a repository, just that."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    reason = re.sub(r"^(?:fatal|error):\s*", "", lines[0]).rstrip(".") if lines else "unknown error"
    if "does not appear to be a git repository" in reason:
        return f"{url}: no git repository there. Check the URL"
    return f"{url} unreachable: {reason}. Check the URL and your credentials"


def watches_needed(config: Config) -> int:
    """Directories the observer watches: every directory inside tracked role directories, one per file."""
    total = 0
    for store in config.stores.values():
        for track in store.tracks:
            if track.live.is_dir():
                total += 1 + sum(len(dirs) for _, dirs, _ in os.walk(track.live))
            else:
                total += 1
    return total


def check_inotify(config: Config) -> Check:
    """The kernel's ``max_user_watches`` is at least what the tracked paths need (Linux only)."""
    if not INOTIFY_LIMIT.exists():
        return Check("OK", "inotify", "not Linux: the observer uses the platform's own file events")
    limit = int(INOTIFY_LIMIT.read_text().split()[0])
    need = watches_needed(config)
    if need > limit:
        return Check(
            "WARN",
            "inotify",
            f"tracked paths need {need} watches, the limit is {limit}: "
            "memsync polls what it cannot watch. Raise fs.inotify.max_user_watches",
        )
    return Check("OK", "inotify", f"{need} watches needed, limit {limit}")


def check_indexes(config: Config) -> list[Check]:
    """Every synced ``MEMORY.md`` Claude Code loads fits in what it loads (200 lines or 25 KB); no line
    when no such index is tracked."""
    tracks = [track.live for store in config.stores.values() for track in store.tracks]
    over = claude_code.oversized_indexes(tracks)
    if not over:
        loaded = sum(
            1 for live in tracks if claude_code.is_claude_memory(live) and (live / "MEMORY.md").is_file()
        )
        detail = f"{loaded} MEMORY.md, each within what Claude Code loads"
        return [Check("OK", "Claude Code indexes", detail)] if loaded else []
    return [
        Check("WARN", "Claude Code index", claude_code.partly_loaded(str(index), lines, size))
        for index, lines, size in over
    ]


def check_hosts(config: Config) -> Check:
    """WARN naming the agent hosts' memory found here that no store tracks (``detect.untracked_hosts``)."""
    found = untracked_hosts(config)
    if not found:
        return Check("OK", "agent hosts", "the memory of every agent host found here is tracked")
    names = "; ".join(f"{loc.found.value} {loc.live}" for loc in found)
    return Check("WARN", "agent hosts", f"not synced: {names}. Run `memsync init` again to track it")


def check_daemon(path: Path) -> Check:
    """A daemon holds the instance lock for config file ``path``."""
    pid = running_daemon_pid(path)
    if pid is None:
        return Check("WARN", "daemon", "not running. Start it: `memsync up` or `memsync service install`")
    return Check("OK", "daemon", f"running, PID {pid}")


def check_service() -> Check:
    """The user service is installed (systemd unit or launchd agent) and, where known, active."""
    report = service.status()
    if not report.path.exists():
        return Check("WARN", "service", "not installed; `memsync service install` starts memsync at login")
    return Check("OK" if report.active else "WARN", "service", "; ".join(report.lines))


def check_clock(store: StoreConfig, now: float | None = None) -> Check:
    """No commit fetched from a remote is dated more than ``CLOCK_SKEW_WARN_S`` in our future."""
    now = time.time() if now is None else now
    refs = _git("for-each-ref", "--format=%(refname)", "refs/remotes", cwd=store.path).out.split()
    if not refs:
        return Check("OK", f"clock vs {store.name}", "no peer commits fetched yet")
    dates = _git("log", "--format=%ct", "-n", "200", *refs, cwd=store.path).out.split()
    ahead = max((int(stamp) - now for stamp in dates), default=0.0)
    if ahead > CLOCK_SKEW_WARN_S:
        return Check(
            "WARN",
            f"clock vs {store.name}",
            f"a peer's commit is dated {ahead:.0f} s in the future: this clock or theirs is off. "
            "Enable NTP (timedatectl set-ntp true)",
        )
    return Check("OK", f"clock vs {store.name}", f"no peer commit in the future (newest {-ahead:.0f} s ago)")


def check_future_entries(store: StoreConfig, now: datetime | None = None) -> Check:
    """No memory file of the store holds an entry dated beyond ``clock.TOLERANCE_S`` in this clock's future
    (it would outrank every later version of it on every machine); each is named with its host."""
    what = f"future entries in {store.name}"
    found = future_in_store(store.path, now)
    if not found:
        return Check("OK", what, f"none dated over {duration(TOLERANCE_S)} ahead of this clock")
    hosts = sorted({entry.host or "unknown host" for entry in found})
    first = found[0]
    return Check(
        "WARN",
        what,
        f"{len(found)} entr{'y' if len(found) == 1 else 'ies'} dated in the future, written by "
        f"{', '.join(hosts)}; {first.file}: {first.advice()}",
    )


def check_clock_ahead(store: StoreConfig, host: str) -> Check:
    """This clock does not run ahead of the peers that built on this machine's commits
    (``clock.clock_skew``): entries it dates would outrank later corrections everywhere."""
    what = f"clock vs peers of {store.name}"
    skew = clock_skew(store.path, host)
    if skew is None or skew.ahead_s <= TOLERANCE_S:
        return Check("OK", what, "not ahead of any peer that committed after this machine")
    return Check(
        "FAIL",
        what,
        f"{duration(skew.ahead_s)} ahead: host {skew.host} committed {skew.theirs[:10]} after this "
        f"machine's {skew.ours[:10]} yet dated it that much earlier; memsync refuses to write entries "
        "until it is fixed. Enable NTP (timedatectl set-ntp true)",
    )


def check_both_kept(store: StoreConfig) -> Check:
    """WARN when files of ``store`` hold two versions an edit on two machines at once left, else OK."""
    what = f"conflicts in {store.name}"
    count = len(store_facts(store)["both_kept"])
    if not count:
        return Check("OK", what, "no file holds two kept versions")
    return Check(
        "WARN", what, f"{plural(count, 'file')} with two versions kept: `memsync conflicts` lists them"
    )


def check_forks(config: Config) -> list[Check]:
    """A WARN per store whose tracked memory files hold entries that several live entries supersede
    (two machines replaced one entry while apart); none when there is no such entry; one WARN when a
    memory file cannot be read (the other checks still run)."""
    counts: dict[str, int] = {}
    try:
        for item, _, forked in forked_files(config):
            counts[item.store or ""] = counts.get(item.store or "", 0) + len(forked)
    except MemsyncError as exc:
        return [Check("WARN", "forks", str(exc))]
    return [
        Check(
            "WARN",
            f"forks in {store}",
            f"{plural(count, 'entry', 'entries')} superseded on two machines at once: "
            "`memsync conflicts` lists them",
        )
        for store, count in counts.items()
    ]


def check_removed(store: StoreConfig, config: Config) -> list[Check]:
    """A FAIL per encrypted remote a member removed this device from (its verified removal notice)."""
    if not store.encrypt:
        return []
    opened = Store(store, config.host, config.identity())
    return [
        Check("FAIL", f"remote {store.name}/{name}", said)
        for name in sorted(store.remotes)
        if (said := opened.removed(name)) is not None
    ]


def run_checks(path: Path | None = None) -> list[Check]:
    """Every check for the config file ``path`` (default ``config_path()``); a missing or invalid config
    is one FAIL line, and the checks that need it are skipped."""
    path = config_path() if path is None else path
    checks = [check_git()]
    if checks[0].level == "FAIL":
        return checks  # every other check runs git
    checks.append(check_recall())
    try:
        config = load_tracks(path)
    except MemsyncError as exc:
        checks.append(Check("FAIL", "config", str(exc)))
        return checks
    if config.stores:
        checks.append(Check("OK", "config", f"{path}, {plural(len(config.stores), 'store')}"))
    else:
        checks.append(
            Check("FAIL", "config", f"{path} names no store: nothing is synced. Run `memsync init`")
        )
    checks.append(check_identity(config))
    for store in config.stores.values():
        checks.extend(check_store(store))
        checks.extend(
            check_remote(store, name, url, config.network_timeout_s)
            for name, url in sorted(store.remotes.items())
        )
        if StoreLayout(store.path).exists:
            checks.append(check_clock(store))
            checks.append(check_clock_ahead(store, config.host))
            checks.append(check_future_entries(store))
            checks.append(check_both_kept(store))
            checks.extend(check_removed(store, config))
    checks.extend(check_forks(config))
    checks.append(check_inotify(config))
    checks.append(check_hosts(config))
    checks.extend(check_indexes(config))
    checks.append(check_daemon(path))
    checks.append(check_service())
    return checks


def check_recall() -> Check:
    """Whether recall searches by meaning too (the semantic extra) or by keywords only."""
    if embedding.available():
        return Check("OK", "recall", f"keywords and meaning ({embedding.MODEL})")
    return Check("OK", "recall", f"keywords only; {embedding.INSTALL_HINT} adds search by meaning")

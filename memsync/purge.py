"""Purge: remove a secret or a wrong entry from the live files and from a store's whole history (issue 7
"Purge"; DESIGN I6).

What it does, for each selected store, under the store's cycle lock:

1. Exchange with every remote first (fetch, merge, push), so the rewritten history contains every peer's
   work and the one force push drops nothing. A remote that cannot be reached stops the purge before
   anything changed: a remote left with the old history would merge the text back later.
2. Remove every matching line from this machine's tracked live files (atomic replace, under the writer
   lock): a line holding TEXT, or (``--entry ID``) every memory-file line whose ``id`` is ID.
3. Rewrite every ref of the store (``git fast-export --all`` -> drop the matching lines from every blob
   and message -> ``git fast-import --force``), then expire the reflogs and prune, so no object holding
   the text is left. The rewrite is deterministic: two machines purging the same text from the same
   commits get the same new commits, so their histories still join.
4. Push the rewritten history to each remote that still has the old one: a force push with a lease on
   the head just fetched. It is the only force push memsync ever makes, and only when the user asks.
   A remote already rewritten by another machine's purge is adopted instead (``Store.resync``), after
   checking it no longer holds the text.
5. Forget the sync state, so the next cycle reconciles the cleaned live files with the cleaned store by
   content.

Every other machine with the store runs the same ``memsync purge`` (its ``status`` shows the remote as
rewritten): that cleans its live files and its own history and adopts the remote. Running only
``memsync resync`` there would re-apply its old history, text included.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memsync.config import Config, StoreConfig, Track, load_config
from memsync.cycle import cycle_lock, open_store
from memsync.errors import MemsyncError
from memsync.formats.jsonl import parse_record
from memsync.fsio import atomic_write, writer_lock
from memsync.layout import is_ignored
from memsync.store import Store
from memsync.syncstate import SyncState

log = logging.getLogger(__name__)

MIN_TEXT_CHARS = 4
GIT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Needle:
    """What to purge: lines containing ``text``, or memory-file lines whose ``id`` is ``entry_id``."""

    text: str | None = None
    entry_id: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.entry_id is None):
            raise MemsyncError("cannot purge: give either TEXT or --entry ID (not both, not neither). "
                               "See `memsync purge --help`")
        value = self.text if self.text is not None else self.entry_id
        assert value is not None
        if "\n" in value or len(value.strip()) < MIN_TEXT_CHARS:
            raise MemsyncError(f"cannot purge {value!r}: it must be one line of at least {MIN_TEXT_CHARS} "
                               "characters, or it would remove far more than meant. Give the exact text")

    def matches(self, line: bytes) -> bool:
        """True when the raw ``line`` (with or without its line end) must go."""
        if self.text is not None:
            return self.text.encode("utf-8") in line
        if self.entry_id is None or self.entry_id.encode("utf-8") not in line:
            return False  # cheap pre-check: a line naming the id contains it
        obj = parse_record(line.rstrip(b"\r\n"))
        return obj is not None and obj.get("id") == self.entry_id

    def describe(self) -> str:
        """How the needle is shown to the user (a secret's text is never echoed)."""
        return f"entry {self.entry_id}" if self.entry_id is not None else "the given text"

    def drop_lines(self, data: bytes) -> tuple[bytes, int]:
        """``data`` without the matching lines, and how many were dropped."""
        kept = [line for line in data.splitlines(keepends=True) if not self.matches(line)]
        out = b"".join(kept)
        return out, len(data.splitlines()) - len(kept)


@dataclass(frozen=True)
class PurgeReport:
    """What purge did to one store.

    ``live_lines``: lines removed from live files; ``live_files``: those files; ``objects_changed``: blobs
    and messages rewritten in the history; ``remotes``: one line per remote saying what happened there.
    """

    store: str
    live_lines: int
    live_files: tuple[Path, ...]
    objects_changed: int
    remotes: tuple[str, ...]

    @property
    def found(self) -> bool:
        """True when the text was anywhere (live files or history)."""
        return bool(self.live_lines or self.objects_changed)


def purge(path: Path, needle: Needle, store_name: str | None = None) -> list[PurgeReport]:
    """`memsync purge` for the config file ``path``: see the module docstring. ``store_name`` limits it to
    one store (default: every store). Returns one report per store. Raises ``MemsyncError`` (unknown
    store, a remote unreachable or moving, a remote rewritten by someone else that still holds the text,
    git failing), in which case nothing was force-pushed."""
    config = load_config(path)
    if store_name is not None and store_name not in config.stores:
        raise MemsyncError(f"cannot purge: no store named {store_name!r} in {path}. "
                           f"Stores: {', '.join(config.stores) or 'none'}")
    names = [store_name] if store_name is not None else list(config.stores)
    return [_purge_store(config, config.stores[name], needle) for name in names]


def _purge_store(config: Config, store_cfg: StoreConfig, needle: Needle) -> PurgeReport:
    with cycle_lock(store_cfg):
        store = open_store(config, store_cfg)
        diverged: set[str] = set()
        for outcome in store.exchange():
            if outcome.status == "diverged":
                diverged.add(outcome.remote)  # rewritten, most likely by another machine's purge
            elif outcome.status != "ok":
                raise MemsyncError(f"cannot purge store {store_cfg.name!r}: remote {outcome.remote}: "
                                   f"{outcome.message}. Purge rewrites every remote, so all must be "
                                   "reachable; retry when they are (nothing was changed)")
        git = _Git(store)
        before = {name: git.rev(f"refs/remotes/{name}/{store_cfg.branch}") for name in store_cfg.remotes}
        live_lines, live_files = _clean_live(store_cfg.tracks, needle)
        changed = _rewrite_history(git, needle)
        remotes = [_publish_rewrite(store, git, name, before[name], needle, name in diverged)
                   for name in store_cfg.remotes]
        with SyncState(store.meta_dir) as state:
            state.clear()
    report = PurgeReport(store_cfg.name, live_lines, tuple(live_files), changed, tuple(remotes))
    log.info("store %s: purged %s: %d live lines, %d objects rewritten", store_cfg.name, needle.describe(),
             live_lines, changed)
    return report


# --- live files ----------------------------------------------------------------------------------

def _live_files(track: Track) -> Iterator[Path]:
    """The regular files of a tracked path (a file, or a directory walked without following symlinks)."""
    if track.live.is_file() and not track.live.is_symlink():
        yield track.live
        return
    for dirpath, dirnames, filenames in os.walk(track.live):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not is_ignored(d)]
        for name in filenames:
            path = here / name
            if not is_ignored(path.relative_to(track.live).as_posix()) and path.is_file() \
                    and not path.is_symlink():
                yield path


def _clean_live(tracks: tuple[Track, ...], needle: Needle) -> tuple[int, list[Path]]:
    removed, files = 0, []
    for track in tracks:
        for path in _live_files(track):
            try:
                with writer_lock(path):
                    data = path.read_bytes()
                    kept, dropped = needle.drop_lines(data)
                    if dropped:
                        atomic_write(path, kept)
            except OSError as exc:
                raise MemsyncError(f"cannot purge {path}: {exc.strerror or exc}. Fix its permissions and "
                                   "run the purge again") from exc
            if dropped:
                removed += dropped
                files.append(path)
    return removed, files


# --- history -------------------------------------------------------------------------------------

class _Git:
    """git in one store, pinned to it (never the caller's repository or config), with a timeout."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.env = {**os.environ, "GIT_DIR": str(store.git_dir), "GIT_WORK_TREE": str(store.worktree),
                    "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_COUNT": "0",
                    "GIT_INDEX_FILE": str(store.git_dir / "index")}

    def run(self, *args: str, stdin: bytes | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """Run ``git ARGS``; raise ``MemsyncError`` naming the command when ``check`` and it fails."""
        try:
            result = subprocess.run(["git", *args], cwd=self.store.worktree, env=self.env, input=stdin,
                                    capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise MemsyncError(f"cannot purge store {self.store.cfg.name!r}: `git {args[0]}` took more than "
                               f"{GIT_TIMEOUT_S:.0f} s. Retry") from exc
        if check and result.returncode != 0:
            reason = result.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"]
            raise MemsyncError(f"cannot purge store {self.store.cfg.name!r}: `git {args[0]}` failed: "
                               f"{reason[-1]}. Check {self.store.worktree} with `memsync status`")
        return result

    def rev(self, ref: str) -> str | None:
        """The commit ``ref`` names, or None."""
        result = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False)
        return result.stdout.decode().strip() if result.returncode == 0 else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is in ``descendant``'s history."""
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0


def filter_stream(stream: bytes, needle: Needle) -> tuple[bytes, int]:
    """A ``git fast-export`` stream with the matching lines dropped from every ``data`` payload (blobs,
    commit and tag messages); returns the new stream and how many payloads changed. Pure function."""
    out = bytearray()
    changed = pos = 0
    while pos < len(stream):
        end = stream.find(b"\n", pos)
        end = len(stream) if end < 0 else end
        line = stream[pos:end]
        if line.startswith(b"data ") and not line.startswith(b"data <<"):
            size = int(line[5:])
            payload = stream[end + 1:end + 1 + size]
            kept, dropped = needle.drop_lines(payload)
            changed += bool(dropped)
            out += b"data %d\n" % len(kept) + kept
            pos = end + 1 + size
        else:
            out += line + b"\n"
            pos = end + 1
    return bytes(out), changed


def _rewrite_history(git: _Git, needle: Needle) -> int:
    """Rewrite every ref without the matching lines; drop the old objects. Returns payloads changed."""
    exported = git.run("fast-export", "--all", "--signed-tags=strip", "--tag-of-filtered-object=rewrite",
                       "--reencode=no").stdout
    filtered, changed = filter_stream(exported, needle)
    if not changed:
        return 0
    git.run("fast-import", "--force", "--quiet", stdin=filtered)
    git.run("reset", "-q", "--hard")
    for leftover in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "SQUASH_MSG"):
        (git.store.git_dir / leftover).unlink(missing_ok=True)
    git.run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    git.run("gc", "-q", "--prune=now")
    return changed


def _remote_holds(git: _Git, head: str, needle: Needle) -> bool:
    """True when any blob reachable from ``head`` has a matching line."""
    listing = git.run("rev-list", "--objects", head).stdout.split()
    shas = [word for word in listing if len(word) == 40]
    batch = git.run("cat-file", "--batch", stdin=b"".join(sha + b"\n" for sha in shas)).stdout
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        _, kind, size = batch[pos:header_end].split()
        data = batch[header_end + 1:header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        if kind == b"blob" and any(needle.matches(line) for line in data.splitlines()):
            return True
    return False


def _publish_rewrite(store: Store, git: _Git, remote: str, before: str | None, needle: Needle,
                     diverged: bool) -> str:
    """Bring ``remote`` to the rewritten history; return what was done, in one line.

    ``before`` is the remote head merged before the rewrite. If the remote still has exactly that head and
    it was rewritten away here, the remote holds the old history: force push. A head this store has (the
    remote already purged, by this or another machine) is adopted; a head never seen is fetched and
    adopted only if it does not hold the text."""
    branch = store.cfg.branch
    listed = git.run("ls-remote", remote, f"refs/heads/{branch}").stdout.split()
    head = listed[0].decode() if listed else None
    local = git.rev("HEAD")
    if head is None or local is None:
        store.resync(remote)  # an empty remote: pushed; the recorded head is refreshed either way
        return f"{remote}: pushed"
    known = git.run("cat-file", "-e", f"{head}^{{commit}}", check=False).returncode == 0
    if not known and head == before:
        # The one force push memsync makes, with a lease on the head this purge started from.
        git.run("push", "--quiet", "--no-verify", f"--force-with-lease=refs/heads/{branch}:{head}", remote,
                f"HEAD:refs/heads/{branch}")
        store.resync(remote)  # trust the remote's new head (it is this store's own)
        return f"{remote}: force-pushed the rewritten history (the only force push memsync makes)"
    if not known:
        git.run("fetch", "-q", "--no-tags", remote, f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")
        if _remote_holds(git, head, needle):
            raise MemsyncError(f"cannot purge store {store.cfg.name!r}: remote {remote} has a history this "
                               f"machine never had and it still holds {needle.describe()}. Run `memsync "
                               f"resync {remote}`, then purge again")
    adopted = diverged or not git.is_ancestor(head, local)
    # resync also refreshes the remote head memsync recorded, which the rewrite may have pruned.
    outcome = store.resync(remote)
    return f"{remote}: adopted its purged history ({outcome.message})" if adopted else f"{remote}: pushed"

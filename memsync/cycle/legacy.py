"""When a track's default store path changed (a project keyed by its identity, not by a name): fold what
its legacy store paths hold into the current one, every cycle, losing nothing (DESIGN "Agent hosts", I1).

The legacy path is never moved or deleted: a machine that has not upgraded yet keeps syncing it, and
whatever it writes there reaches the current path at the next cycle of any upgraded machine. The fold is
a publish (``memsync.sync.passes``) whose "live" side is the legacy directory in the store worktree, with
a sync state of its own (``<meta dir>/legacy/<id>/``): append-only files gain the complete lines the
legacy copy gained, whole files are merged three-way with the legacy version last folded, deletions made
there reach the current path only where it still holds what was folded. Two machines folding the same
lines meet in git's merge, where memsync's drivers keep each line once.

On the first fold on a machine:
- the track's own sync state records for the legacy paths are copied to the current paths, so the live
  files go on merging against what they last exchanged instead of settling by content;
- where the current path already has a file (another machine folded first), the fold starts from the
  legacy version already folded into it: the legacy file in the newest commit that changed the current
  file and says (a ``Memsync-Folded: <legacy path>`` line) that it holds a fold of that legacy path, so
  only what the legacy copy gained since is folded in, and entries edited on the current path since do
  not clash with their own older copies.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from memsync.base import git
from memsync.base.layout import is_append_only
from memsync.base.paths import STATE_DB
from memsync.config.file import Track
from memsync.store.exchange import RemoteOutcome
from memsync.store.facade import Store
from memsync.store.written import commit_written
from memsync.sync.notices import Notices
from memsync.sync.passes import publish, reconcile
from memsync.sync.records import AppendState, WholeState, digest
from memsync.sync.reports import PublishReport, describe_changes
from memsync.sync.state import SyncState

log = logging.getLogger(__name__)

STATE_DIR = "legacy"
FOLDED_MARK = "Memsync-Folded:"
GIT_TIMEOUT_S = 120.0


def first_folds(tracks: Sequence[Track], store: Store) -> list[Track]:
    """The tracks of ``tracks`` with a legacy store path in ``store`` that this machine never folded: their
    first fold (and so their own publish) waits until the exchange has brought the peers' latest copy of
    the current path, which the fold starts from."""
    return [
        track
        for track in tracks
        if any((store.worktree / path).exists() for path in track.legacy)
        and not any((_state_dir(store, path, track) / STATE_DB).exists() for path in track.legacy)
    ]


def fold_legacy(
    store: Store,
    tracks: Sequence[Track],
    state: SyncState,
    *,
    waiting: Sequence[Track],
    merged: bool,
    full: bool,
    remotes: Sequence[str],
    grace_s: float,
    notices: Notices,
) -> tuple[list[PublishReport], str | None, tuple[RemoteOutcome, ...]]:
    """After the exchange: fold the legacy store paths of ``tracks`` into their current ones, where the
    exchange ``merged`` peers' commits (an old machine writes only to its legacy path), on a ``full``
    (start-up) cycle, or for the ``waiting`` tracks (``first_folds``), whose own reconcile and publish
    follow their first fold. ``state`` is the tracks' sync state; each fold has its own. Commits what
    changed and exchanges again with ``remotes`` (those the cycle exchanged with) so it leaves now.
    ``notices``: what this process warned about already.
    Returns (reports, the commit or None, the second exchange's outcomes). Raises ``MemsyncError`` from
    the store, ``OSError``, ``sqlite3.Error``."""
    reports: list[PublishReport] = []
    sources: list[str] = []
    for track in tracks:
        if track.legacy and (merged or full or track in waiting):
            sources.extend(old for old in track.legacy if (store.worktree / old).exists())
            reports.extend(_fold_track(track, store, state, full=full, grace_s=grace_s, notices=notices))
        if track in waiting:
            reports.append(reconcile(track, store.worktree, state, notices=notices))
            reports.append(publish(track, store.worktree, state, grace_s=grace_s, notices=notices))
    if not any(report.changes for report in reports):
        return reports, None, ()
    # The mark says which legacy paths this commit's tree has folded: a later first fold starts there.
    marks = "\n".join(f"{FOLDED_MARK} {old}" for old in dict.fromkeys(sources))
    subject = describe_changes(reports) or "memsync: folded legacy store paths"
    commit = commit_written(store, state, f"{subject}\n\n{marks}" if marks else subject)
    exchanged = tuple(store.exchange(remotes)) if remotes and commit is not None else ()
    return reports, commit, exchanged


def _state_dir(store: Store, old: str, track: Track) -> Path:
    return store.meta_dir / STATE_DIR / digest(f"{old}\0{track.store_path}".encode())[:16]


def _fold_track(
    track: Track, store: Store, state: SyncState, *, full: bool, grace_s: float, notices: Notices
) -> list[PublishReport]:
    """Fold each legacy store path of ``track`` found in ``store`` into ``track.store_path`` (see the
    module docstring); reports that changed something, named after the legacy path."""
    worktree = store.worktree
    reports: list[PublishReport] = []
    for old in track.legacy:
        source = worktree / old
        if not source.exists():
            continue
        alias = Track(live=source, store_path=track.store_path)
        found: list[PublishReport] = []
        with SyncState(_state_dir(store, old, track)) as folded:
            first = not folded.paths(track.store_path)
            if first:
                log.info("%s: folding the legacy store path %s into %s", track.live, old, track.store_path)
                _adopt_records(state, old, track.store_path)
                _start_from_folded(folded, worktree, old, track.store_path)
            if first or full:
                found.append(reconcile(alias, worktree, folded, notices=notices))
            found.append(publish(alias, worktree, folded, grace_s=grace_s, notices=notices))
            _hand_over_written(folded, state)
        reports.extend(
            replace(report, name=f"{report.name} (from {old})") for report in found if report.changes
        )
    return reports


def _hand_over_written(folded: SyncState, state: SyncState) -> None:
    """Record in ``state`` the store paths a fold wrote (noted in its own ``folded`` state), so the
    track's commit takes them; ``state`` first, so a crash in between leaves them noted twice, not lost."""
    written = folded.written()
    for path in written:
        state.note_written(path)
    folded.clear_written(written)


def _adopt_records(state: SyncState, old: str, new: str) -> None:
    """Copy ``state``'s current records under store path ``old`` to the same files under ``new``, when
    ``new`` has none yet (the store copy's stat key is dropped: that copy is another file now)."""
    if state.paths(new):
        return
    with state.batch():
        for path in state.paths(old):
            current = state.get(path)
            if current is not None:
                state.put(current.moved(new + path[len(old) :]))


def _start_from_folded(folded: SyncState, worktree: Path, old: str, new: str) -> None:
    """For each file under ``new`` with a legacy version already folded into it (``_folded_versions``),
    record that version in ``folded``: whole files as last synced, append-only files as accounted up to
    its length when the legacy file still starts with it. Other files are left to reconcile (by
    content)."""
    with folded.batch():
        for path, base in _folded_versions(worktree, old, new).items():
            if is_append_only(path):
                try:
                    legacy = (worktree / old / path[len(new) + 1 :]).read_bytes()
                except OSError:
                    continue
                if legacy.startswith(base):
                    folded.put(AppendState.accounted(path, base))
            else:
                folded.put(WholeState.synced_as(path, base))


def _folded_versions(worktree: Path, old: str, new: str) -> dict[str, bytes]:
    """Store path under ``new`` -> bytes of its legacy twin under ``old`` in the newest commit that
    changed it with the mark of a fold of ``old``; files without such a commit, or whose twin did not
    exist there, are left out. Two git calls; {} when git fails (or the store has no commit)."""
    changed = _git(
        worktree,
        "-c",
        "core.quotePath=false",
        "log",
        "--no-merges",
        "--no-renames",
        "--format=%x01%H%n%B%x02",
        "--name-only",
        "--",
        new,
    )
    if changed is None:
        return {}
    newest: dict[str, str] = {}
    mark = f"{FOLDED_MARK} {old}"
    for record in changed.decode("utf-8", "replace").split("\x01")[1:]:
        head, _, names = record.partition("\x02")
        sha, _, body = head.partition("\n")
        if mark not in body.splitlines():
            continue
        for line in names.splitlines():
            if line == new or line.startswith(new + "/"):
                newest.setdefault(line, sha)
    wanted = {path: f"{sha}:{old}{path[len(new) :]}" for path, sha in newest.items()}
    batch = _git(worktree, "cat-file", "--batch", stdin="".join(f"{spec}\n" for spec in wanted.values()))
    if batch is None:
        return {}
    versions: dict[str, bytes] = {}
    position = 0
    for path in wanted:
        end = batch.index(b"\n", position)
        header = batch[position:end].split()
        position = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            versions[path] = batch[position : position + size]
            position += size + 1
    return versions


def _git(worktree: Path, *args: str, stdin: str | None = None) -> bytes | None:
    try:
        done = git.run(
            args, cwd=worktree, timeout=GIT_TIMEOUT_S, stdin=None if stdin is None else stdin.encode("utf-8")
        )
    except OSError as exc:
        log.warning("store %s: git %s failed: %s", worktree, args[0], exc)
        return None
    if done.timed_out is not None:
        log.warning("store %s: git %s failed: %s", worktree, args[0], done.reason)
        return None
    if done.status != 0:
        log.debug(
            "store %s: git %s failed: %s", worktree, " ".join(args), done.stderr.decode("utf-8", "replace")
        )
        return None
    return done.stdout

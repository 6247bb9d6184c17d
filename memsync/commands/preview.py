"""`memsync sync --dry-run` and `memsync diff`: what a sync would commit and push, per store and remote,
file by file (DESIGN "One sync cycle" steps 2 to 4), changing nothing.

Told by content: each tracked live file against the store's working tree (an append-only file's complete
lines the store lacks; a whole file that differs), then each remote against what it had at the last
fetch or push (no fetch: the remote's refs are left as they are). What the secret scanner would hold back
is named by file and line, never shown (I6). No git command that writes runs, no sync state is opened:
HEAD, index, status file, live files and remotes stay byte for byte as they were. A file present in the
store alone (deleted here, or a peer's not delivered yet: only the sync state tells) is not listed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from memsync.base.layout import is_append_only
from memsync.base.paths import StoreLayout
from memsync.base.remote_url import redacted
from memsync.base.wording import plural
from memsync.config.file import Config, StoreConfig
from memsync.secrets.allowed import allowed_in
from memsync.secrets.files import scan_appended, scan_name, scan_whole
from memsync.store.facade import Store
from memsync.sync import content
from memsync.sync.appendonly import present_in
from memsync.sync.files import TrackFile, track_files
from memsync.tracks.resolve import load_stores


@dataclass(frozen=True)
class FileChange:
    """What a sync would publish of one tracked file (store path ``rel``): ``what`` it commits (``+3
    lines``, ``new``, ``changed``; "" when nothing), the (live line, detector) pairs held back (line 0:
    the name), for `diff` the ``shown`` lines (appended lines, or a unified diff of a whole file), and
    whether an ``unfinished`` last line waits (published once finished)."""

    rel: str
    what: str
    held: tuple[tuple[int, str], ...] = ()
    shown: tuple[str, ...] = ()
    unfinished: bool = False


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _appended(live: bytes, store: bytes) -> tuple[list[tuple[int, bytes]], bool]:
    """The complete lines of ``live`` the store copy lacks, as a sync settling by content tells them
    (``appendonly.present_in``), each with its 1-based line number in ``live``, and whether an
    unfinished last line waits (it is published once finished)."""
    done = content.complete(live)
    live_lines = content.lines(done, 0, len(done))
    present = present_in(live_lines, content.split(store))
    new = [(n, line) for n, (_, line) in enumerate(live_lines, 1) if n - 1 not in present]
    return new, len(done) < len(live)


def _file_change(tf: TrackFile, shown: bool, allowed: frozenset[str] = frozenset()) -> FileChange | None:
    """The change a sync would publish of ``tf``, None when there is none (or the live file is absent);
    ``allowed``: the hashes of lines the store's allow-list lets pass the scanner."""
    live, store = _read(tf.live), _read(tf.store)
    if live is None or live == store:
        return None
    in_name = scan_name(tf.rel)
    if in_name is not None:
        return FileChange(tf.rel, "", ((0, in_name),))
    if is_append_only(tf.rel):
        new, unfinished = _appended(live, store or b"")
        flagged = scan_appended(tf.rel, [line for _, line in new], allowed=allowed)
        held = tuple((new[i][0], detector) for i, detector in sorted(flagged.items()))
        kept = [line for i, (_, line) in enumerate(new) if i not in flagged]
        what = f"+{plural(len(kept), 'line')}" if kept else ""
        text = tuple(f"+{line.decode('utf-8', 'replace').rstrip(chr(10))}" for line in kept)
        return FileChange(tf.rel, what, held, text if shown else (), unfinished)
    verdict = scan_whole(live, allowed)
    if verdict is not None:
        return FileChange(tf.rel, "", (verdict,))
    diff = difflib.unified_diff(
        (store or b"").decode("utf-8", "replace").splitlines(),
        live.decode("utf-8", "replace").splitlines(),
        f"store/{tf.rel}",
        f"live/{tf.rel}",
        lineterm="",
    )
    return FileChange(tf.rel, "new" if store is None else "changed", (), tuple(diff) if shown else ())


def _store_lines(config: Config, store_cfg: StoreConfig, shown: bool) -> list[str]:
    """The preview of one store: its files, then one line per remote."""
    if not StoreLayout(store_cfg.path).exists:
        return [
            f"store {store_cfg.name}: {store_cfg.path} is not created yet (`memsync init` or `store add`)"
        ]
    allowed = allowed_in(store_cfg.path)
    changes = [
        change
        for track in store_cfg.tracks
        for tf in track_files(track, store_cfg.path, None)
        if (change := _file_change(tf, shown, allowed)) is not None
    ]
    committed = sum(1 for change in changes if change.what)
    lines = [
        f"store {store_cfg.name}: would commit {plural(committed, 'file')}"
        if committed
        else f"store {store_cfg.name}: nothing to commit"
    ]
    for change in changes:
        if change.what:
            lines.append(f"  {change.rel}: {change.what}")
            lines.extend(f"    {line}" for line in change.shown)
        for number, detector in change.held:
            at = f" line {number}" if number else ""
            lines.append(f"  {change.rel}{at}: held back ({detector}), stays on this machine")
        if change.unfinished:
            lines.append(f"  {change.rel}: its unfinished last line waits until it ends")
    store = Store(store_cfg, config.host, config.identity())
    for remote, url in store_cfg.remotes.items():
        waiting = store.ahead_behind(remote)[0]
        total = waiting + (1 if committed else 0)
        if not total:
            lines.append(f"  {remote} ({redacted(url)}): nothing to push (as of the last fetch)")
            continue
        parts = [plural(waiting, "commit") + " made before"] if waiting else []
        parts += ["this sync's"] if committed else []
        lines.append(
            f"  {remote} ({redacted(url)}): would push {plural(total, 'commit')} ({' and '.join(parts)})"
        )
    if not store_cfg.remotes:
        lines.append("  no remote: commits stay on this machine")
    return lines


def preview(path: Path, shown: bool = False) -> list[str]:
    """The lines `memsync sync --dry-run` (``shown`` False) or `memsync diff` (``shown``: each file's
    added lines or unified diff too, never a held-back line) prints for the config file ``path``.
    Raises ``MemsyncError`` for a missing or bad config."""
    config = load_stores(path)
    lines = [line for store_cfg in config.stores.values() for line in _store_lines(config, store_cfg, shown)]
    return [*lines, "dry run: nothing was changed"]

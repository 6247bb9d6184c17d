"""Which files of each track a sync cycle visits (DESIGN "One sync cycle"): every file on a full pass
(start, reload, any doubt), else only what changed: the live paths the watcher saw change, the store
paths the exchange changed, and the files the last cycle left waiting."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from memsync.config.file import Track


class Scope:
    """The labels (paths relative to a track, "" for a tracked file) a cycle's publish and deliver visit
    per track; None from ``publish``/``deliver`` means every file of the track.

    ``changed``: the live paths changed since the last cycle, None when that is in doubt (every track is
    then visited whole). ``revisit``: store paths the last cycle left waiting, visited again whatever
    changed. ``whole``: tracks visited whole whatever changed (tracks whose content the cycle cannot
    name). A changed path that is a directory, or above a track's root, makes that track whole.
    """

    def __init__(
        self,
        tracks: Sequence[Track],
        changed: Collection[Path] | None,
        revisit: Collection[str] = (),
        whole: Iterable[Track] = (),
    ) -> None:
        self._tracks = tuple(tracks)
        self._whole: set[Track] = set(tracks) if changed is None else set(whole)
        self._live: dict[Track, set[str]] = {track: set() for track in tracks}
        self._store: dict[Track, set[str]] = {track: set() for track in tracks}
        for track in self._tracks:
            roots = _roots(track)
            for path in changed or ():
                self._note_live(track, roots, Path(path))
        self.add_store_paths(revisit, live=True)

    def add_store_paths(self, paths: Iterable[str], *, live: bool = False) -> None:
        """Visit the files at store paths ``paths`` in deliver (also in publish when ``live``)."""
        for rel in paths:
            for track in self._tracks:
                prefix = track.store_path.strip("/")
                if rel == prefix:
                    label = ""
                elif rel.startswith(prefix + "/"):
                    label = rel[len(prefix) + 1 :]
                else:
                    continue
                (self._live if live else self._store)[track].add(label)

    def publish(self, track: Track) -> frozenset[str] | None:
        """What publish visits of ``track``: None for every file, else these labels."""
        return None if track in self._whole else frozenset(self._live[track])

    def deliver(self, track: Track) -> frozenset[str] | None:
        """What deliver visits of ``track``: what publish visited and the store paths added since."""
        return None if track in self._whole else frozenset(self._live[track] | self._store[track])

    def _note_live(self, track: Track, roots: tuple[Path, ...], path: Path) -> None:
        for root in roots:
            if path == root:
                if root.is_dir():
                    self._whole.add(track)  # the tracked directory itself appeared or went
                else:
                    self._live[track].add("")
            elif root.is_relative_to(path) or (path.is_relative_to(root) and path.is_dir()):
                self._whole.add(track)  # a directory above the root or inside it appeared or went
            elif path.is_relative_to(root):
                self._live[track].add(path.relative_to(root).as_posix())


def _roots(track: Track) -> tuple[Path, ...]:
    """Where the watcher reports ``track``'s changes: its live path, and where that points if it is a
    symlink (events then carry the real path)."""
    if not track.live.is_symlink():
        return (track.live,)
    try:
        return (track.live, track.live.resolve())
    except (OSError, RuntimeError):  # a symlink loop: Python 3.11 raises RuntimeError
        return (track.live,)

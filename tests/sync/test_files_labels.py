"""``track_files`` given the changed labels keeps exactly the files a full walk keeps among them: ignored
paths, excluded sub-trees, symlinks out of the track and through symlinked directories, files only the
store or only the sync state has, and labels naming nothing (real files, symlinks and SQLite)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.config.file import Track
from memsync.sync.files import track_files
from memsync.sync.records import WholeState
from memsync.sync.state import SyncState

LABELS = [
    "MEMORY.md",
    "daily/2026-11-30.md",
    "notes.md",
    "store-only.md",
    "state-only.md",
    "snapshot.md",
    "notes.md.swp",
    ".git/config",
    "other/inside.md",
    "linked-out.md",
    "linked-in.md",
    "via-link/x.md",
    "missing.md",
    "../escape.md",
]


def layout(root: Path) -> tuple[Track, Path, SyncState]:
    live = root / "live"
    worktree = root / "store"
    store_root = worktree / "roles" / "qa"
    for rel in (
        "MEMORY.md",
        "daily/2026-11-30.md",
        "notes.md",
        "snapshot.md",
        "notes.md.swp",
        "other/inside.md",
    ):
        (live / rel).parent.mkdir(parents=True, exist_ok=True)
        (live / rel).write_text(rel)
    (live / ".git").mkdir()
    (live / ".git" / "config").write_text("x")
    outside = root / "outside.md"
    outside.write_text("outside")
    os.symlink(outside, live / "linked-out.md")
    os.symlink(live / "notes.md", live / "linked-in.md")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "x.md").write_text("x")
    os.symlink(root / "elsewhere", live / "via-link")
    store_root.mkdir(parents=True)
    (store_root / "store-only.md").write_text("store")
    state = SyncState(root / "meta")
    state.put(WholeState.synced_as("roles/qa/state-only.md", b"gone"))
    return Track(live=live, store_path="roles/qa", excludes=(live / "other",)), worktree, state


@settings(max_examples=40, deadline=None)
@given(chosen=st.sets(st.sampled_from(LABELS)))
def test_labels_keep_what_the_walk_keeps(chosen: set[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        track, worktree, state = layout(Path(scratch))
        with state:
            walked = [f for f in track_files(track, worktree, state) if f.label in chosen]
            assert track_files(track, worktree, state, chosen) == walked
            assert {f.label for f in track_files(track, worktree, state)} == {
                "MEMORY.md",
                "daily/2026-11-30.md",
                "notes.md",
                "store-only.md",
                "state-only.md",
                "linked-in.md",
            }


def test_a_tracked_file_is_listed_only_when_named(tmp_path: Path) -> None:
    live = tmp_path / "memory.jsonl"
    live.write_text("{}\n")
    track = Track(live=live, store_path="memory/memory.jsonl")
    with SyncState(tmp_path / "meta") as state:
        assert [f.label for f in track_files(track, tmp_path / "store", state, {""})] == [""]
        assert track_files(track, tmp_path / "store", state, set()) == []

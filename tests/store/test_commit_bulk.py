"""Commits of many files: blobs go into one pack (git's bulk check-in); files a store's .gitignore hides
are committed whatever their number (staged by one git process fed on stdin)."""

from __future__ import annotations

from pathlib import Path

from memsync.store.commit import ADD_PATHS_PER_CALL, BULK_ADD_FILES
from tests.support.helpers import bare_remote, git
from tests.support.stores import commit, new_store, write


def loose_blobs(worktree: Path) -> int:
    """How many blob objects of the repository at ``worktree`` are loose files (not in a pack)."""
    objects = git(worktree, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)")
    loose = 0
    for line in objects.splitlines():
        kind, sha = line.split()
        if kind == "blob" and (worktree / ".git" / "objects" / sha[:2] / sha[2:]).exists():
            loose += 1
    return loose


def test_a_commit_of_many_files_packs_them_and_small_commits_stay_loose(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    store = new_store(tmp_path / "store", "alpha", {"origin": remote})
    before = loose_blobs(store.worktree)  # the format file
    count = BULK_ADD_FILES + 10
    for i in range(count):
        write(store, f"roles/dev/notes/n{i:04d}.md", f"note {i}\n")
    assert commit(store, "many") is not None
    files = [name for name in store.files() if name.startswith("roles/dev/notes/")]
    assert len(files) == count
    assert git(store.worktree, "show", "HEAD:roles/dev/notes/n0007.md") == "note 7\n"
    assert loose_blobs(store.worktree) == before, "a bulk commit writes one pack, not a file per blob"
    assert git(store.worktree, "fsck", "--no-dangling").strip() == ""

    write(store, "roles/dev/notes/one-more.md", "one more\n")
    assert commit(store, "one") is not None
    assert loose_blobs(store.worktree) == before + 1, "a small commit keeps git's loose objects"
    assert [outcome.status for outcome in store.exchange()] == ["ok"]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    assert (clone / "roles/dev/notes/n0509.md").read_text() == "note 509\n"


def test_files_a_store_gitignore_hides_are_committed_whatever_their_number(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    write(store, ".gitignore", "*.md\n")
    count = ADD_PATHS_PER_CALL * 2 + 5
    for i in range(count):
        write(store, f"roles/dev/e{i:04d}.md", f"entry {i}\n")
    assert commit(store, "hidden") is not None
    assert len(store.files()) == count + 3  # and .gitignore, the format file and the store id

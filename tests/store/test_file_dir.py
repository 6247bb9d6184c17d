"""A file on one peer meeting a directory of the same name on another (DESIGN I1, I3, I4; the store's
merge settles it): the directory keeps the name, the file moves to ``layout.aside_name`` of it, and
whichever peer merges, the merged tree is the same. Real stores, real bare remotes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync.base.layout import aside_name, is_aside, is_ignored, kind_of
from memsync.store.facade import Store
from tests.support.helpers import bare_remote, git
from tests.support.stores import commit, new_store, read, remove, worktree_clean, write

FILE = "roles/qa/notes.md"
INNER = "roles/qa/notes.md/inner.md"
ASIDE = "roles/qa/notes.conflict-file.md"


def tree(store: Store) -> str:
    """``git ls-tree -r HEAD`` of ``store``: every path with its mode and blob."""
    return git(store.worktree, "ls-tree", "-r", "HEAD")


def both_ways(
    tmp_path: Path, base: dict[str, str], first: dict[str, str | None], second: dict[str, str | None]
) -> tuple[Store, Store]:
    """Two stores that share ``base``, then commit ``first`` and ``second`` (path -> text, None deletes)
    without seeing each other. Each merges the other's commit (one through ``origin``, one through
    ``side``); returns them after their merge, neither pushed to the other yet."""
    origin, side = bare_remote(tmp_path / "origin.git"), bare_remote(tmp_path / "side.git")
    one = new_store(tmp_path / "one", "one", {"origin": origin, "side": side})
    for rel, text in base.items():
        write(one, rel, text)
    commit(one, "base")
    assert [o.status for o in one.exchange(["origin"])] == ["ok"]
    two = new_store(tmp_path / "two", "two", {"origin": origin, "side": side})
    for store, change in ((one, first), (two, second)):
        for rel, new in change.items():
            if new is None:
                remove(store, rel)
            else:
                write(store, rel, new)
        commit(store, "change")
    assert [o.status for o in one.exchange(["side"])] == ["ok"]  # one's commit goes to side
    assert [o.status for o in two.exchange(["origin"])] == ["ok"]  # two's commit goes to origin
    assert [o.status for o in two.exchange(["side"])] == ["ok"]  # two merges one's
    assert [o.status for o in one.exchange(["origin"])] == ["ok"]  # one merges two's
    return one, two


@pytest.mark.parametrize("file_side", ["first", "second"])
def test_a_file_meeting_a_directory_keeps_both_and_merges_to_the_same_tree(
    tmp_path: Path, file_side: str
) -> None:
    as_file: dict[str, str | None] = {FILE: "a notes file\n", "roles/qa/other.md": "other\n"}
    as_dir: dict[str, str | None] = {INNER: "inside a directory named notes.md\n"}
    first, second = (as_file, as_dir) if file_side == "first" else (as_dir, as_file)
    one, two = both_ways(tmp_path, {"memory/m.jsonl": "{}\n"}, first, second)
    assert tree(one) == tree(two)
    for store in (one, two):
        assert read(store, ASIDE) == "a notes file\n"
        assert read(store, INNER) == "inside a directory named notes.md\n"
        assert read(store, "roles/qa/other.md") == "other\n"
        assert worktree_clean(store)
        assert not [path for path in store.files() if "~" in path]
    # Both merges meet: one more exchange each joins them and the peers end on one commit.
    for store in (one, two, one):
        assert [o.status for o in store.exchange(["origin"])] == ["ok"]
    assert one.head() == two.head()


def test_a_file_changed_here_and_replaced_by_a_directory_there_keeps_the_change(tmp_path: Path) -> None:
    """Modify/delete and file/directory at once: the changed file is kept (aside), never the old one."""
    changed: dict[str, str | None] = {FILE: "changed here\n"}
    replaced: dict[str, str | None] = {FILE: None, INNER: "the directory that replaced it\n"}
    one, two = both_ways(tmp_path, {FILE: "the first version\n"}, changed, replaced)
    assert tree(one) == tree(two)
    for store in (one, two):
        assert read(store, ASIDE) == "changed here\n"
        assert read(store, INNER) == "the directory that replaced it\n"
        assert worktree_clean(store)


def test_the_file_takes_the_next_free_sibling_name(tmp_path: Path) -> None:
    taken: dict[str, str | None] = {INNER: "inner\n", ASIDE: "a note called like the aside name\n"}
    one, two = both_ways(tmp_path, {}, {FILE: "the file\n"}, taken)
    assert tree(one) == tree(two)
    assert read(one, ASIDE) == "a note called like the aside name\n"
    assert read(one, "roles/qa/notes.conflict-file-2.md") == "the file\n"


def test_a_file_meeting_a_deeper_directory(tmp_path: Path) -> None:
    one, two = both_ways(
        tmp_path,
        {},
        {"roles/qa": "a file where a role is\n"},
        {"roles/qa/daily/2026-11-30.md": "- a log line\n"},
    )
    assert tree(one) == tree(two)
    assert read(one, "roles/qa.conflict-file") == "a file where a role is\n"
    assert read(one, "roles/qa/daily/2026-11-30.md") == "- a log line\n"


def test_resync_onto_a_history_with_a_file_where_a_directory_is_here(tmp_path: Path, remote: Path) -> None:
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    write(alpha, INNER, "mine, in a directory\n")
    commit(alpha, "dir")
    alpha.exchange()
    rewriter = tmp_path / "rewriter"
    git(tmp_path, "clone", "-q", str(remote), str(rewriter))
    git(rewriter, "reset", "-q", "--hard", "HEAD~1")
    (rewriter / "roles" / "qa").mkdir(parents=True)
    (rewriter / FILE).write_text("theirs, a file\n")
    git(rewriter, "add", "-A")
    git(rewriter, "commit", "-q", "-m", "rewritten")
    git(rewriter, "push", "-q", "--force", "origin", "main")
    [outcome] = alpha.exchange()
    assert outcome.status == "diverged"
    assert alpha.resync("origin").status == "ok"
    assert read(alpha, INNER) == "mine, in a directory\n" and read(alpha, ASIDE) == "theirs, a file\n"
    assert worktree_clean(alpha)
    with pytest.raises(subprocess.CalledProcessError):
        git(alpha.worktree, "rev-parse", "--verify", "-q", "MERGE_HEAD")


_SEGMENT = st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=12).filter(
    lambda part: part not in (".", "..")
)


@given(st.lists(_SEGMENT, min_size=1, max_size=4), st.integers(min_value=1, max_value=5))
def test_aside_names_are_whole_files_beside_the_file(parts: list[str], attempt: int) -> None:
    rel = "/".join(parts)
    name = aside_name(rel, attempt)
    assert name.rpartition("/")[0] == rel.rpartition("/")[0]
    assert name != rel and kind_of(name) == "entry"
    assert is_ignored(rel) or not is_ignored(name)
    assert name != aside_name(rel, attempt + 1)
    assert is_aside(name)


def test_only_aside_names_are_taken_for_aside() -> None:
    names = ("notes.md", "conflict-file.md", "a/conflict-file", "x.conflict.md", "x.conflict-files.md")
    assert not any(is_aside(name) for name in names)

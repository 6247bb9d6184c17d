"""kill -9 in the middle of git work: the next open recovers, nothing committed is lost (DESIGN I7)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from memsync.store.facade import Store
from tests.support.helpers import REPO_ROOT, bare_remote, git, wait_for
from tests.support.stores import append, commit, new_store, read, reopen, worktree_clean, write

HEADER = '{"format":"agent-memory/0.1","created_at":"2026-11-01T00:00:00Z"}\n'

# Runs one store operation in a child process, on a Store built without `open` so that the slow merge
# driver planted by the test stays registered.
_CHILD = """
import json, sys
from pathlib import Path
from memsync.config.file import Identity, StoreConfig
from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from memsync.store.facade import Store
spec = json.loads(sys.argv[1])
cfg = StoreConfig(name="personal", path=Path(spec["path"]), remotes={"origin": spec["remote"]})
store = Store(cfg, spec["host"], Identity(spec["host"], spec["host"] + "@example.invalid"))
store._g.drivers_registered = True  # a merge would register the real drivers over the slow one
getattr(store, spec["op"])(*spec["args"])
"""


def _start(store: Store, op: str, *args: str) -> subprocess.Popen[bytes]:
    spec = {
        "path": str(store.worktree),
        "remote": store.cfg.remotes["origin"],
        "host": store.host,
        "op": op,
        "args": list(args),
    }
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(spec)],
        cwd=REPO_ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill(child: subprocess.Popen[bytes]) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _both_append(tmp_path: Path) -> tuple[Store, Store]:
    remote = bare_remote(tmp_path / "remote.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    beta = new_store(tmp_path / "beta", "beta", {"origin": remote})
    write(alpha, "memory/m.jsonl", HEADER)
    commit(alpha, "header")
    alpha.exchange()
    beta.exchange()
    line = '{{"id":"{0}1","created_at":"2026-11-30T10:0{1}:00Z","kind":"fact","text":"{0}"}}\n'
    append(alpha, "memory/m.jsonl", line.format("a", 0))
    commit(alpha, "a")
    alpha.exchange()
    append(beta, "memory/m.jsonl", line.format("b", 1))
    commit(beta, "b")
    # The merge driver hangs, so the child is killed in the middle of the merge.
    git(beta.worktree, "config", "merge.memsync-jsonl.driver", "sleep 60")
    return alpha, beta


def test_kill_during_merge_then_open_recovers(tmp_path: Path) -> None:
    alpha, beta = _both_append(tmp_path)
    mine = beta.head()
    child = _start(beta, "exchange")
    try:
        wait_for(lambda: list(beta.worktree.glob(".merge_file_*")), what="the merge driver to run")
    finally:
        _kill(child)
    assert (beta.git_dir / "index.lock").exists()
    beta = reopen(beta)
    assert beta.head() == mine and worktree_clean(beta)
    assert not list(beta.worktree.glob(".merge_file_*"))
    assert [o.status for o in beta.exchange()] == ["ok"]
    assert [o.status for o in alpha.exchange()] == ["ok"]
    for store in (alpha, beta):
        text = read(store, "memory/m.jsonl")
        assert '"id":"a1"' in text and '"id":"b1"' in text


def test_kill_during_resync_rolls_back_then_resync_completes(tmp_path: Path) -> None:
    alpha, beta = _both_append(tmp_path)
    mine = beta.head()
    theirs = git(Path(alpha.cfg.remotes["origin"]), "rev-parse", "main").strip()
    child = _start(beta, "resync", "origin")
    try:
        wait_for(lambda: list(beta.worktree.glob(".merge_file_*")), what="the re-apply merge to run")
        assert (beta.meta_dir / "resync.json").exists() and beta.head() == theirs
    finally:
        _kill(child)
    beta = reopen(beta)
    assert beta.head() == mine and worktree_clean(beta)
    assert not (beta.meta_dir / "resync.json").exists()
    outcome = beta.resync("origin")
    assert outcome.status == "ok"
    text = read(beta, "memory/m.jsonl")
    assert '"id":"a1"' in text and '"id":"b1"' in text


def _both_edit_an_entry(tmp_path: Path) -> tuple[Store, Store]:
    """alpha and beta each changed the same curated entry differently; beta has not merged alpha's yet."""
    remote = bare_remote(tmp_path / "remote.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    beta = new_store(tmp_path / "beta", "beta", {"origin": remote})
    write(alpha, ENTRY, "first\n")
    commit(alpha, "entry")
    alpha.exchange()
    beta.exchange()
    write(alpha, ENTRY, "alpha's version\n")
    commit(alpha, "alpha edits")
    alpha.exchange()
    write(beta, ENTRY, "beta's version\n")
    commit(beta, "beta edits")
    return alpha, beta


ENTRY = "roles/qa/notes.md"


def _while_written(store: Store, rel: str) -> str:
    """The text of the store file ``rel`` while git writes it: "" in the instant git replaced it (it
    unlinks the old file, then creates the new one)."""
    try:
        return read(store, rel)
    except FileNotFoundError:
        return ""


def _merged_once(alpha: Store, beta: Store, mine: str) -> None:
    """beta joins alpha's edit once: one both-kept note; beta's unpushed commit ``mine`` made again on
    top of alpha's (the exchange's replay), so HEAD's one parent is alpha's head, with ``mine``'s
    message, and no merge commit."""
    assert commit(beta, "nothing left over") is None
    assert [o.status for o in beta.exchange()] == ["ok"]
    merged = read(beta, ENTRY)
    assert merged.count(BOTH_KEPT_NOTE_PREFIX) == 1, merged
    assert merged.count("alpha's version") == 1 and merged.count("beta's version") == 1
    parents = git(beta.worktree, "rev-list", "--parents", "-n", "1", "HEAD").split()[1:]
    assert parents == [alpha.head()]
    message = git(beta.worktree, "log", "-1", "--format=%B", "HEAD")
    assert message == git(beta.worktree, "log", "-1", "--format=%B", mine)
    assert git(beta.worktree, "rev-list", "--merges", "HEAD").split() == []


def _lock_the_branch_during_the_merge(beta: Store) -> subprocess.Popen[bytes]:
    """Start beta's exchange in a child whose entry merge driver first sleeps; while it sleeps, lock the
    branch's ref, so git writes the merge into worktree and index and then cannot move the branch."""
    driver = git(beta.worktree, "config", "merge.memsync-entry.driver").strip()
    git(beta.worktree, "config", "merge.memsync-entry.driver", f"sleep 1; {driver}")
    child = _start(beta, "exchange")
    wait_for(lambda: list(beta.worktree.glob(".merge_file_*")), what="the merge driver to run")
    (beta.git_dir / "refs" / "heads" / "main.lock").write_text("")
    return child


def _unlock(beta: Store) -> Store:
    """Remove the ref lock and the slow driver; reopen beta as a restarted memsync would."""
    (beta.git_dir / "refs" / "heads" / "main.lock").unlink(missing_ok=True)
    git(beta.worktree, "config", "--unset", "merge.memsync-entry.driver")
    git(beta.worktree, "config", "core.filesRefLockTimeout", "100")
    return reopen(beta)


def test_a_merge_written_but_not_committed_is_undone_then_merges_once(tmp_path: Path) -> None:
    """git writes the merge into worktree and index, then cannot move the branch (its ref is locked):
    the half-done merge is undone, not committed later as a local change without the merge's parent;
    the next exchange merges once (a kill in the middle of the writes:
    tests/system/test_kill_during_merge.py)."""
    alpha, beta = _both_edit_an_entry(tmp_path)
    mine = beta.head()
    child = _lock_the_branch_during_the_merge(beta)
    assert child.wait(timeout=60) == 0
    assert beta.head() == mine and worktree_clean(beta) and read(beta, ENTRY) == "beta's version\n"
    assert mine is not None
    _merged_once(alpha, _unlock(beta), mine)


def test_kill_after_a_merge_is_written_before_it_is_committed_then_open_undoes_it(tmp_path: Path) -> None:
    """Killed there: git waits for the branch's ref lock with the merge written in worktree and index,
    and memsync is killed. The next open rolls the merge back; it then merges once."""
    alpha, beta = _both_edit_an_entry(tmp_path)
    mine = beta.head()
    git(beta.worktree, "config", "core.filesRefLockTimeout", "60000")
    child = _lock_the_branch_during_the_merge(beta)
    try:
        wait_for(lambda: BOTH_KEPT_NOTE_PREFIX in _while_written(beta, ENTRY), what="the merge written")
    finally:
        _kill(child)
    beta = _unlock(beta)
    assert beta.head() == mine and worktree_clean(beta) and read(beta, ENTRY) == "beta's version\n"
    assert mine is not None
    _merged_once(alpha, beta, mine)

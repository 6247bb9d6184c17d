"""kill -9 in the middle of git work: the next open recovers, nothing committed is lost (DESIGN I7)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from memsync.store import Store
from tests.helpers import REPO_ROOT, bare_remote, git, wait_for
from tests.stores import append, new_store, read, reopen, worktree_clean, write

HEADER = '{"format":"agent-memory/0.1","created_at":"2026-11-01T00:00:00Z"}\n'

# Runs one store operation in a child process, on a Store built without `open` so that the slow merge
# driver planted by the test stays registered.
_CHILD = """
import json, sys
from pathlib import Path
from memsync.config import Identity, StoreConfig
from memsync.store import Store
spec = json.loads(sys.argv[1])
cfg = StoreConfig(name="personal", path=Path(spec["path"]), remotes={"origin": spec["remote"]})
store = Store(cfg, spec["host"], Identity(spec["host"], spec["host"] + "@example.invalid"))
getattr(store, spec["op"])(*spec["args"])
"""


def _start(store: Store, op: str, *args: str) -> subprocess.Popen[bytes]:
    spec = {"path": str(store.worktree), "remote": store.cfg.remotes["origin"], "host": store.host,
            "op": op, "args": list(args)}
    return subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(spec)], cwd=REPO_ROOT,
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _kill(child: subprocess.Popen[bytes]) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _both_append(tmp_path: Path) -> tuple[Store, Store]:
    remote = bare_remote(tmp_path / "remote.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    beta = new_store(tmp_path / "beta", "beta", {"origin": remote})
    write(alpha, "memory/m.jsonl", HEADER)
    alpha.commit_all("header")
    alpha.exchange()
    beta.exchange()
    line = '{{"id":"{0}1","created_at":"2026-11-30T10:0{1}:00Z","kind":"fact","text":"{0}"}}\n'
    append(alpha, "memory/m.jsonl", line.format("a", 0))
    alpha.commit_all("a")
    alpha.exchange()
    append(beta, "memory/m.jsonl", line.format("b", 1))
    beta.commit_all("b")
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

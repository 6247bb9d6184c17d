"""The store: create, clone, open, recover, its own git config (issue 4 "Store"; DESIGN I7, I8)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from pathlib import Path

import pytest

from memsync.errors import MemsyncError
from memsync.store.facade import Store
from memsync.store.format import FORMAT_FILE
from memsync.store.remotes import local_remote_path
from memsync.store.storeid import STORE_ID_FILE
from tests.support.helpers import bare_remote, git, wait_for
from tests.support.stores import (
    commit,
    commit_count,
    identity,
    new_store,
    read,
    remove,
    reopen,
    store_config,
    worktree_clean,
    write,
)


def test_init_without_remote_makes_a_versioned_store(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    assert read(store, FORMAT_FILE) == "1\n"
    assert store.files() == [FORMAT_FILE, STORE_ID_FILE]
    assert store.meta_dir == store.git_dir / "memsync" and store.meta_dir.is_dir()
    [record] = store.log()
    assert (record.host, record.message, record.files) == (
        "alpha",
        "memsync: new store",
        (FORMAT_FILE, STORE_ID_FILE),
    )
    author = git(store.worktree, "log", "-1", "--format=%an <%ae>").strip()
    assert author == "alpha user <alpha@example.invalid>"
    assert git(store.worktree, "config", "commit.gpgsign").strip() == "false"
    hooks = Path(git(store.worktree, "config", "core.hooksPath").strip())
    assert hooks.is_dir() and not any(hooks.iterdir())
    assert (store.git_dir / "info" / "attributes").read_text().strip()  # merge drivers assigned
    assert worktree_clean(store)


def test_init_pushes_to_an_empty_remote_then_a_peer_clones_it(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    assert git(remote, "rev-parse", "main").strip() == alpha.head()
    write(alpha, "roles/dev/MEMORY.md", "- [Tabs](tabs.md) — tabs\n")
    commit(alpha, "dev: +1 entry")
    assert [o.status for o in alpha.exchange()] == ["ok"]

    beta = new_store(tmp_path / "beta", "beta", {"origin": remote})
    assert beta.head() == alpha.head()
    assert read(beta, "roles/dev/MEMORY.md") == "- [Tabs](tabs.md) — tabs\n"
    assert beta.unpushed_count("origin") == 0 and beta.ahead_behind("origin") == (0, 0)


def test_init_or_clone_reopens_an_existing_store(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    again = new_store(tmp_path / "store", "alpha")
    assert again.head() == store.head() and commit_count(store.worktree) == 1


def test_init_refuses_a_non_empty_directory_and_an_unreachable_remote(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n")
    with pytest.raises(MemsyncError, match="exists and is not empty"):
        new_store(busy, "alpha")
    assert (busy / "notes.txt").read_text() == "mine\n" and not (busy / ".git").exists()

    with pytest.raises(MemsyncError, match=r"remote 'origin' .* is unreachable: .*Check the URL"):
        new_store(tmp_path / "fresh", "alpha", {"origin": tmp_path / "missing.git"})
    assert not (tmp_path / "fresh").exists()


def test_open_refuses_what_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(MemsyncError, match=r"is not a memsync store\. Run `memsync init`"):
        Store.open(store_config(tmp_path / "nothing"), "alpha", identity("alpha"))


def test_newer_format_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    beta = new_store(tmp_path / "beta", "beta", {"origin": remote})
    write(alpha, FORMAT_FILE, "2\n")
    commit(alpha, "from a newer memsync")
    with pytest.raises(MemsyncError, match=r"format 2, this memsync supports up to 1\. Upgrade memsync"):
        reopen(alpha)
    git(alpha.worktree, "push", "-q", "origin", "main")

    [outcome] = beta.exchange()
    assert outcome.status == "conflict" and "Upgrade memsync" in outcome.message
    assert read(beta, FORMAT_FILE) == "1\n" and worktree_clean(beta)
    with pytest.raises(MemsyncError, match="store format 2"):
        new_store(tmp_path / "gamma", "gamma", {"origin": remote})


def test_stale_locks_are_removed_once_no_git_runs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = new_store(tmp_path / "store", "alpha")
    (store.git_dir / "index.lock").write_bytes(b"")
    (store.git_dir / "refs" / "heads" / "main.lock").write_text("0" * 40 + "\n")
    with caplog.at_level(logging.WARNING, logger="memsync.store"):
        store = reopen(store)
    removed = [r.getMessage() for r in caplog.records if "stale" in r.getMessage()]
    assert len(removed) == 2 and any("index.lock" in m for m in removed)
    write(store, "a.md", "a\n")
    assert commit(store, "a") is not None

    # Mid-run: a lock appearing between cycles is recovered by the next operation.
    (store.git_dir / "index.lock").write_bytes(b"")
    write(store, "b.md", "b\n")
    assert commit(store, "b") is not None
    assert not (store.git_dir / "index.lock").exists()


def test_a_lock_held_by_a_live_git_is_respected(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    write(store, FORMAT_FILE, "1\n\n")
    # `git commit -a` holds index.lock while its editor runs: a real, live lock holder.
    holder = subprocess.Popen(
        ["git", "-c", "core.editor=sleep 60;:", "commit", "-a"],
        cwd=store.worktree,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: (store.git_dir / "index.lock").exists(), what="git to take index.lock")
        with pytest.raises(MemsyncError, match=rf"is busy: git process {holder.pid} .*index\.lock"):
            reopen(store, lock_wait_s=0.3)
        assert (store.git_dir / "index.lock").exists()
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    # Killed with the lock held: now it is stale and memsync takes over.
    assert (store.git_dir / "index.lock").exists()
    store = reopen(store, lock_wait_s=0.3)
    assert commit(store, "format file touched") is not None


def _diverge_on_one_file(store: Store) -> str:
    """Make branch `side` delete notes.md while main changes it; return main's head."""
    write(store, "notes.md", "one\n")
    commit(store, "notes")
    git(store.worktree, "branch", "side")
    write(store, "notes.md", "one\ntwo\n")
    head = commit(store, "notes +1")
    assert head is not None
    git(store.worktree, "checkout", "-q", "side")
    git(store.worktree, "rm", "-q", "notes.md")
    git(store.worktree, "commit", "-q", "-m", "drop notes")
    git(store.worktree, "checkout", "-q", "main")
    return head


def test_interrupted_merge_is_aborted_keeping_commits(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    head = _diverge_on_one_file(store)
    with pytest.raises(subprocess.CalledProcessError):
        git(store.worktree, "merge", "side")  # modify/delete: git stops mid-merge
    assert (store.git_dir / "MERGE_HEAD").exists()

    store = reopen(store)
    assert store.head() == head and worktree_clean(store)
    assert read(store, "notes.md") == "one\ntwo\n"
    assert git(store.worktree, "rev-parse", "side").strip()  # the other line of work is still there


def test_interrupted_rebase_is_aborted_keeping_commits(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    head = _diverge_on_one_file(store)
    with pytest.raises(subprocess.CalledProcessError):
        git(store.worktree, "rebase", "side")
    store = reopen(store)
    assert git(store.worktree, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert store.head() == head and worktree_clean(store)


def test_users_gpgsign_and_hooks_do_not_reach_the_store(home: Path, tmp_path: Path) -> None:
    failing = tmp_path / "user-hooks"
    failing.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "pre-push", "post-merge"):
        (failing / hook).write_text('#!/bin/sh\necho hook ran >> "$HOME/hook-ran"\nexit 1\n')
        (failing / hook).chmod(0o755)
    with (home / ".gitconfig").open("a") as config:
        config.write(
            f"[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = {tmp_path}/no-gpg\n"
            f"[core]\n\thooksPath = {failing}\n"
        )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    git(scratch, "init", "-q")
    with pytest.raises(subprocess.CalledProcessError):  # the user's signing setup really breaks commits
        git(scratch, "commit", "-q", "--no-verify", "--allow-empty", "-m", "x")
    with pytest.raises(subprocess.CalledProcessError):  # and the user's hooks really run and fail
        git(scratch, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "x")
    (home / "hook-ran").unlink()

    remote = bare_remote(tmp_path / "remote.git")
    store = new_store(tmp_path / "store", "alpha", {"origin": remote})
    planted = store.git_dir / "hooks" / "pre-commit"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text('#!/bin/sh\ntouch "$HOME/hook-ran"\nexit 1\n')
    planted.chmod(0o755)
    write(store, "a.md", "a\n")
    assert commit(store, "a") is not None
    assert [o.status for o in store.exchange()] == ["ok"]
    assert not (home / "hook-ran").exists()


def test_commit_all_stages_everything_and_reports_nothing_to_do(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    assert commit(store, "nothing") is None
    write(store, "roles/dev/a.md", "a\n")
    write(store, "roles/dev/daily/2026-11-30.md", "- x\n")
    sha = commit(store, "dev: 2 files")
    assert sha == store.head()
    remove(store, "roles/dev/a.md")
    commit(store, "dev: -1 file")
    assert store.files() == [FORMAT_FILE, STORE_ID_FILE, "roles/dev/daily/2026-11-30.md"]
    body = git(store.worktree, "log", "-1", "--format=%B")
    assert body == "dev: -1 file\n\nMemsync-Host: alpha\n\n"


def test_open_follows_the_configured_remotes(tmp_path: Path) -> None:
    one, two = bare_remote(tmp_path / "one.git"), bare_remote(tmp_path / "two.git")
    store = new_store(tmp_path / "store", "alpha", {"one": one})
    moved = Store.open(store_config(store.worktree, {"two": two}), "alpha", identity("alpha"))
    assert git(moved.worktree, "remote").split() == ["two"]
    assert [(o.remote, o.status) for o in moved.exchange()] == [("two", "ok")]
    assert git(two, "rev-parse", "main").strip() == moved.head()


def test_git_environment_of_the_caller_cannot_redirect_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "project"
    other.mkdir()
    git(other, "init", "-q")
    # As if memsync ran from a git hook of another repository.
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'commit.gpgsign'='true'")
    store = new_store(tmp_path / "store", "alpha")
    write(store, "a.md", "a\n")
    assert commit(store, "a") is not None
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    assert store.files() == [FORMAT_FILE, STORE_ID_FILE, "a.md"]
    assert git(other, "rev-list", "--all").strip() == ""


def test_store_gitignore_never_hides_memory_but_temp_files_stay_out(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "alpha")
    write(store, ".gitignore", "*.jsonl\nroles/\n")
    write(store, "memory/lessons.jsonl", "{}\n")
    write(store, "roles/dev/MEMORY.md", "- x\n")
    write(store, "roles/dev/.memsync-tmp-abc123", "half written\n")
    write(store, "roles/dev/snapshot.md", "generated\n")
    write(store, "roles/dev/.tabs.md.swp", "vim\n")
    write(store, ".merge_file_a1b2c3", "left by a killed merge\n")
    commit(store, "files")
    assert store.files() == [
        ".gitignore",
        FORMAT_FILE,
        STORE_ID_FILE,
        "memory/lessons.jsonl",
        "roles/dev/MEMORY.md",
    ]


def test_users_push_and_commit_settings_do_not_reach_the_store(home: Path, tmp_path: Path) -> None:
    with (home / ".gitconfig").open("a") as config:
        config.write("[push]\n\tgpgSign = true\n[commit]\n\tcleanup = strip\n[merge]\n\tff = false\n")
    remote = bare_remote(tmp_path / "remote.git")
    store = new_store(tmp_path / "store", "alpha", {"origin": remote})
    write(store, "a.md", "a\n")
    commit(store, "roles/dev: #1 entry")
    assert [o.status for o in store.exchange()] == ["ok"]
    assert git(remote, "log", "-1", "--format=%s", "main").strip() == "roles/dev: #1 entry"
    peer = new_store(tmp_path / "peer", "beta", {"origin": remote})
    write(store, "b.md", "b\n")
    commit(store, "b")
    store.exchange()
    peer.exchange()
    assert git(peer.worktree, "rev-list", "--merges", "HEAD").strip() == ""  # fast-forward, merge.ff pinned


def test_local_remote_path_tells_local_remotes_apart(home: Path) -> None:
    assert local_remote_path("/srv/memory.git") == Path("/srv/memory.git")
    assert local_remote_path("~/memory.git") == home / "memory.git"
    assert local_remote_path("file:///srv/my%20memory.git") == Path("/srv/my memory.git")
    for url in ("git@github.com:ada/memory.git", "ssh://git@host/memory.git", "https://host/memory.git"):
        assert local_remote_path(url) is None


def test_gc_auto_runs_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = new_store(tmp_path / "store", "alpha")
    for n in range(3):
        write(store, f"{n}.md", f"{n}\n")
        commit(store, str(n))
    with caplog.at_level(logging.WARNING, logger="memsync.store"):
        store.git.gc_auto()
    assert not caplog.records and store.files()[-1] == "2.md"


def test_a_configured_branch_is_used_for_commits_and_exchange(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    store = new_store(tmp_path / "store", "alpha", {"origin": remote})
    moved = Store.open(
        store_config(store.worktree, {"origin": remote}, branch="memory"), "alpha", identity("alpha")
    )
    assert git(moved.worktree, "symbolic-ref", "HEAD").strip() == "refs/heads/memory"
    write(moved, "a.md", "a\n")
    commit(moved, "a")
    assert [o.status for o in moved.exchange()] == ["ok"]
    assert git(remote, "rev-parse", "memory").strip() == moved.head()
    peer = Store.init_or_clone(
        store_config(tmp_path / "peer", {"origin": remote}, branch="memory"), identity("beta"), "beta"
    )
    assert read(peer, "a.md") == "a\n"


def test_someone_elses_repository_is_refused_untouched(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "secret.txt").write_text("not memory\n")
    before = (project / ".git" / "config").read_text()
    for attempt in (
        lambda: Store.open(store_config(project), "alpha", identity("alpha")),
        lambda: new_store(project, "alpha"),
    ):
        with pytest.raises(MemsyncError, match="a git repository memsync did not create"):
            attempt()
    assert (project / ".git" / "config").read_text() == before
    assert git(project, "status", "--porcelain") == "?? secret.txt\n"


def test_a_repository_memsync_did_not_start_is_refused_not_taken(tmp_path: Path) -> None:
    """A remote whose branch has another history (no store id, no format file) is not a store to start
    from: its files would enter the store and memory would be pushed onto its branch."""
    remote = bare_remote(tmp_path / "remote.git")
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(remote), str(seed))
    (seed / "README.md").write_text("an app\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "readme")
    git(seed, "push", "-q", "origin", "main")
    before = git(remote, "rev-parse", "main")
    with pytest.raises(MemsyncError, match="not a memsync store; nothing was written or pushed"):
        new_store(tmp_path / "store", "alpha", {"origin": remote})
    assert not (tmp_path / "store").exists()
    assert git(remote, "rev-parse", "main") == before

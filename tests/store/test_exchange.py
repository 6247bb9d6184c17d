"""Exchange between stores through real remotes: merge, push, retry, offline, force-push, resync, log,
quiescence (issue 4 "Exchange"; DESIGN I3, I4, I9; field cases 8-10)."""

from __future__ import annotations

import http.server
import json
import random
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Unpack

import pytest

from memsync.errors import MemsyncError
from memsync.store.facade import Store
from memsync.store.format import FORMAT_FILE
from memsync.store.storeid import STORE_ID_FILE
from tests.support.helpers import bare_remote, git
from tests.support.stores import (
    OpenBounds,
    append,
    commit,
    commit_count,
    new_store,
    read,
    remove,
    reopen,
    store_config,
    worktree_clean,
    write,
)

HEADER = '{"format":"agent-memory/0.1","created_at":"2026-11-01T00:00:00Z"}\n'


def _entry(entry_id: str, text: str, minute: int) -> str:
    return (
        json.dumps(
            {
                "id": entry_id,
                "kind": "lesson",
                "text": text,
                "source": "session:t",
                "created_at": f"2026-11-30T10:{minute:02d}:00Z",
            }
        )
        + "\n"
    )


@pytest.fixture
def alpha(tmp_path: Path, remote: Path) -> Store:
    return new_store(tmp_path / "alpha", "alpha", {"origin": remote})


@pytest.fixture
def beta(tmp_path: Path, remote: Path, alpha: Store) -> Store:
    return new_store(tmp_path / "beta", "beta", {"origin": remote})


def _statuses(store: Store) -> list[str]:
    return [outcome.status for outcome in store.exchange()]


def test_two_stores_end_with_both_files(alpha: Store, beta: Store, remote: Path) -> None:
    write(alpha, "roles/dev/tabs.md", "tabs\n")
    commit(alpha, "dev: +1")
    write(beta, "roles/qa/flaky.md", "flaky\n")
    commit(beta, "qa: +1")
    [first] = alpha.exchange()
    assert (first.status, first.pushed, first.merged) == ("ok", True, False)
    [second] = beta.exchange()
    assert (second.status, second.pushed, second.merged) == ("ok", True, True)
    [third] = alpha.exchange()
    assert (third.status, third.pushed, third.merged) == ("ok", False, True)
    for store in (alpha, beta):
        assert read(store, "roles/dev/tabs.md") == "tabs\n" and read(store, "roles/qa/flaky.md") == "flaky\n"
        assert worktree_clean(store)
    assert alpha.head() == beta.head() == git(remote, "rev-parse", "main").strip()


def test_jsonl_appends_on_both_sides_are_united_by_the_driver(alpha: Store, beta: Store) -> None:
    write(alpha, "memory/lessons.jsonl", HEADER)
    commit(alpha, "lessons: header")
    alpha.exchange()
    beta.exchange()
    append(alpha, "memory/lessons.jsonl", _entry("aaaaaaaaaaaa", "from alpha", 2))
    commit(alpha, "lessons: +1")
    append(beta, "memory/lessons.jsonl", _entry("bbbbbbbbbbbb", "from beta", 1))
    commit(beta, "lessons: +1")
    assert _statuses(alpha) == ["ok"] and _statuses(beta) == ["ok"] and _statuses(alpha) == ["ok"]
    merged = read(alpha, "memory/lessons.jsonl")
    assert merged == read(beta, "memory/lessons.jsonl")
    assert "<<<<<<<" not in merged
    assert merged.splitlines()[0] == HEADER.strip()
    assert sorted(merged.splitlines()[1:]) == sorted(
        [_entry("aaaaaaaaaaaa", "from alpha", 2).strip(), _entry("bbbbbbbbbbbb", "from beta", 1).strip()]
    )


def test_local_commit_before_merge_with_an_advanced_remote(alpha: Store, beta: Store) -> None:
    write(alpha, "daily.md", "a\n")
    commit(alpha, "a")
    alpha.exchange()
    write(beta, "beta.md", "committed before the exchange starts\n")
    commit(beta, "beta")  # field case 8: the local change is committed, then merged
    [outcome] = beta.exchange()
    assert (outcome.status, outcome.pushed, outcome.merged) == ("ok", True, True)
    assert worktree_clean(beta) and read(beta, "daily.md") == "a\n"
    alpha.exchange()
    assert read(alpha, "beta.md") == "committed before the exchange starts\n"


def test_rejected_push_is_retried_after_fetch_and_merge(
    tmp_path: Path, alpha: Store, beta: Store, remote: Path
) -> None:
    write(beta, "beta.md", "b\n")
    commit(beta, "b")
    marker = tmp_path / "raced"
    # The remote lets beta push first while alpha's push is being received: a real race, made deterministic.
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        f"if [ ! -e '{marker}' ]; then\n"
        f"  touch '{marker}'\n"
        "  env -u GIT_DIR -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY \\\n"
        "    -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\\n"
        f"    git -C '{beta.worktree}' push -q origin main >&2\n"
        "fi\n"
        f"echo receive >> '{tmp_path}/receives'\n"
    )
    hook.chmod(0o755)
    write(alpha, "alpha.md", "a\n")
    commit(alpha, "a")
    [outcome] = alpha.exchange()
    assert (outcome.status, outcome.pushed, outcome.merged) == ("ok", True, True)
    assert marker.exists() and (tmp_path / "receives").read_text().count("receive") == 3
    assert read(alpha, "beta.md") == "b\n"
    assert git(remote, "rev-parse", "main").strip() == alpha.head()


def test_a_remote_that_refuses_is_reported_not_forced(alpha: Store, remote: Path) -> None:
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read-only mirror' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = git(remote, "rev-parse", "main")
    write(alpha, "a.md", "a\n")
    commit(alpha, "a")
    [outcome] = alpha.exchange()
    assert outcome.status == "rejected" and "pre-receive hook declined" in outcome.message
    assert git(remote, "rev-parse", "main") == before
    assert alpha.unpushed_count("origin") == 1


def test_dead_remote_is_offline_quickly_then_catches_up(tmp_path: Path, alpha: Store, remote: Path) -> None:
    moved = tmp_path / "moved.git"
    remote.rename(moved)
    for n in range(3):
        write(alpha, f"offline-{n}.md", f"{n}\n")
        commit(alpha, f"offline {n}")
    started = time.monotonic()
    [outcome] = alpha.exchange()
    assert time.monotonic() - started < 5
    assert outcome.status == "offline"
    assert outcome.message.startswith("cannot reach origin: ") and "\n" not in outcome.message
    assert "does not appear to be a git repository" in outcome.message
    assert alpha.unpushed_count("origin") == 3
    moved.rename(remote)
    [back] = alpha.exchange()
    assert (back.status, back.pushed) == ("ok", True)
    assert alpha.unpushed_count("origin") == 0
    assert commit_count(remote, "main") == commit_count(alpha.worktree)


def _remote_store(tmp_path: Path, url: str, **kwargs: Unpack[OpenBounds]) -> Store:
    local = new_store(tmp_path / "store", "alpha")
    return Store.open(store_config(local.worktree, {"origin": url}), "alpha", local.identity, **kwargs)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _AskForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="memory"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _password_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AskForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def _silent_server() -> Iterator[int]:
    """Accepts connections (kernel backlog) and never answers: a hung network."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield int(listener.getsockname()[1])


def test_https_remote_refusing_connections_fails_fast(tmp_path: Path) -> None:
    store = _remote_store(tmp_path, f"http://127.0.0.1:{_closed_port()}/memory.git")
    started = time.monotonic()
    [outcome] = store.exchange()
    assert time.monotonic() - started < 5
    assert outcome.status == "offline" and "connect" in outcome.message.lower()


def test_https_remote_asking_for_credentials_never_prompts(tmp_path: Path) -> None:
    with _password_server() as port:
        store = _remote_store(tmp_path, f"http://127.0.0.1:{port}/memory.git")
        started = time.monotonic()
        [outcome] = store.exchange()
    assert time.monotonic() - started < 10  # field case 10: no terminal, no hang
    assert outcome.status == "offline"
    assert "Authentication failed" in outcome.message or "could not read Username" in outcome.message


def test_hung_remote_is_cut_off_by_the_timeout(tmp_path: Path) -> None:
    with _silent_server() as port:
        store = _remote_store(tmp_path, f"http://127.0.0.1:{port}/memory.git", network_timeout_s=2.0)
        started = time.monotonic()
        [outcome] = store.exchange()
        elapsed = time.monotonic() - started
    assert elapsed < 8
    assert outcome.status == "offline"


@pytest.mark.parametrize("deleter", ["first", "second"])
def test_modify_delete_keeps_the_modified_file(alpha: Store, beta: Store, deleter: str) -> None:
    write(alpha, "roles/dev/tabs.md", "tabs\n")
    commit(alpha, "+tabs")
    alpha.exchange()
    beta.exchange()
    first, second = (alpha, beta) if deleter == "first" else (beta, alpha)
    deleting, modifying = (first, second) if deleter == "first" else (second, first)
    remove(deleting, "roles/dev/tabs.md")
    commit(deleting, "-tabs")
    write(modifying, "roles/dev/tabs.md", "tabs, width 4\n")
    commit(modifying, "tabs changed")
    assert _statuses(first) == ["ok"] and _statuses(second) == ["ok"] and _statuses(first) == ["ok"]
    for store in (alpha, beta):
        assert read(store, "roles/dev/tabs.md") == "tabs, width 4\n" and worktree_clean(store)
    assert alpha.head() == beta.head()


def test_driver_failure_aborts_the_merge_cleanly(alpha: Store, beta: Store) -> None:
    write(alpha, "notes.md", "base\n")
    commit(alpha, "notes")
    alpha.exchange()
    beta.exchange()
    write(beta, "notes.md", "base\nbeta\n")
    commit(beta, "beta edit")
    beta.exchange()
    write(alpha, "notes.md", "alpha\nbase\n")
    mine = commit(alpha, "alpha edit")
    git(alpha.worktree, "config", "merge.memsync-entry.driver", "false")  # a driver that fails
    [outcome] = alpha.exchange()
    assert outcome.status == "conflict" and "notes.md" in outcome.message and "aborted" in outcome.message
    assert alpha.head() == mine and worktree_clean(alpha) and read(alpha, "notes.md") == "alpha\nbase\n"
    alpha = reopen(alpha)  # drivers registered again on open
    assert _statuses(alpha) == ["ok"]
    assert "<<<<<<<" not in read(alpha, "notes.md") and "beta" in read(alpha, "notes.md")


def test_force_pushed_remote_is_detected_and_resync_keeps_local_memory(
    tmp_path: Path, alpha: Store, beta: Store, remote: Path
) -> None:
    write(alpha, "roles/dev/a.md", "a\n")
    old = commit(alpha, "+a")
    assert old is not None
    alpha.exchange()
    beta.exchange()
    # Someone rewrites the remote: back to the first commit, plus a commit of their own, force-pushed.
    rewriter = tmp_path / "rewriter"
    git(tmp_path, "clone", "-q", str(remote), str(rewriter))
    git(rewriter, "reset", "-q", "--hard", "HEAD~1")
    (rewriter / "roles").mkdir()
    (rewriter / "roles" / "c.md").write_text("c\n")
    git(rewriter, "add", "-A")
    git(rewriter, "commit", "-q", "-m", "rewritten")
    git(rewriter, "push", "-q", "--force", "origin", "main")
    rewritten = git(remote, "rev-parse", "main").strip()

    write(alpha, "roles/dev/a2.md", "a2\n")
    commit(alpha, "+a2")
    [outcome] = alpha.exchange()
    assert outcome.status == "diverged" and "memsync resync origin" in outcome.message
    assert git(remote, "rev-parse", "main").strip() == rewritten  # nothing pushed to it
    assert _statuses(alpha) == ["diverged"]  # stays stopped
    assert alpha.ahead_behind("origin") == (2, 1)  # +a, +a2 here; the rewritten commit there

    resynced = alpha.resync("origin")
    assert (resynced.status, resynced.pushed, resynced.merged) == ("ok", True, True)
    roles = {p for p in alpha.files() if p.startswith("roles/")}
    assert roles == {"roles/dev/a.md", "roles/dev/a2.md", "roles/c.md"}
    assert git(remote, "rev-parse", "main").strip() == alpha.head()
    git(alpha.worktree, "merge-base", "--is-ancestor", rewritten, "HEAD")
    assert git(alpha.worktree, "rev-parse", "refs/memsync/before-resync/origin").strip() != rewritten
    with pytest.raises(subprocess.CalledProcessError):  # the old history is not pushed back
        git(remote, "merge-base", "--is-ancestor", old, "main")

    assert _statuses(beta) == ["diverged"]
    beta.resync("origin")
    assert _statuses(alpha) == ["ok"]
    assert alpha.head() == beta.head() and sorted(alpha.files()) == sorted(beta.files())
    assert worktree_clean(alpha) and worktree_clean(beta)


def test_stores_made_apart_join_at_first_contact_under_one_store_id(tmp_path: Path, remote: Path) -> None:
    """Two stores made on their own (a second machine that used memsync alone) share a new remote: at the
    first exchange the second joins the first's history and takes its store id, so the two end on one
    history, one id, both sides' memory. A remote that was exchanged with before and now holds such a
    history is refused instead (tests/store/test_storeid.py)."""
    alone_a = new_store(tmp_path / "a", "alpha")
    alone_b = new_store(tmp_path / "b", "beta")
    write(alone_a, "a.md", "a\n")
    commit(alone_a, "a")
    write(alone_b, "b.md", "b\n")
    commit(alone_b, "b")
    alpha = Store.open(store_config(alone_a.worktree, {"origin": remote}), "alpha", alone_a.identity)
    beta = Store.open(store_config(alone_b.worktree, {"origin": remote}), "beta", alone_b.identity)
    assert _statuses(alpha) == ["ok"] and _statuses(beta) == ["ok"] and _statuses(alpha) == ["ok"]
    assert alpha.files() == beta.files() == [FORMAT_FILE, STORE_ID_FILE, "a.md", "b.md"]
    assert alpha.head() == beta.head() and read(beta, STORE_ID_FILE) == read(alpha, STORE_ID_FILE)
    assert "<<<<<<<" not in read(beta, STORE_ID_FILE) and len(read(beta, STORE_ID_FILE).splitlines()) == 1


def test_log_by_path_and_by_entry_id(alpha: Store, beta: Store) -> None:
    write(alpha, "memory/lessons.jsonl", HEADER + _entry("3f9a1c2b7d10", "user agent needed", 1))
    commit(alpha, "lessons: +1 entry")
    append(alpha, "memory/lessons.jsonl", _entry("0000aaaa1111", "other", 2))
    commit(alpha, "lessons: +1 entry")
    alpha.exchange()
    beta.exchange()
    tombstone = '{"id":"3f9a1c2b7d10","deleted":true,"created_at":"2026-11-30T11:00:00Z"}\n'
    append(beta, "memory/lessons.jsonl", tombstone)
    write(beta, "roles/qa/x.md", "x\n")
    commit(beta, "lessons: 1 tombstone; qa +1")

    history = beta.log("memory/lessons.jsonl")
    assert [(r.host, r.message) for r in history] == [
        ("beta", "lessons: 1 tombstone; qa +1"),
        ("alpha", "lessons: +1 entry"),
        ("alpha", "lessons: +1 entry"),
    ]
    assert history[0].files == ("memory/lessons.jsonl",)  # only what the selector covers
    assert beta.log()[0].files == ("memory/lessons.jsonl", "roles/qa/x.md")
    by_id = beta.log("3f9a1c2b7d10")
    assert [(r.host, r.message) for r in by_id] == [
        ("beta", "lessons: 1 tombstone; qa +1"),
        ("alpha", "lessons: +1 entry"),
    ]
    assert by_id[1].sha == history[2].sha
    assert [r.files for r in beta.log("roles")] == [("roles/qa/x.md",)]
    assert len(beta.log(limit=2)) == 2
    assert beta.log("no-such-thing") == []
    assert all(r.date.tzinfo is not None for r in history)


@pytest.mark.parametrize("same_content", [False, True])
def test_quiescence_no_commits_without_news(
    alpha: Store, beta: Store, remote: Path, same_content: bool
) -> None:
    before = commit_count(remote, "main")
    write(alpha, "shared.md" if same_content else "a.md", "same\n" if same_content else "a\n")
    commit(alpha, "alpha")
    write(beta, "shared.md" if same_content else "b.md", "same\n" if same_content else "b\n")
    commit(beta, "beta")
    counts = []
    for _round in range(5):
        assert _statuses(alpha) == ["ok"] and _statuses(beta) == ["ok"]
        counts.append(commit_count(remote, "main"))
    assert counts[1:] == [counts[1]] * 4, counts
    assert alpha.head() == beta.head() == git(remote, "rev-parse", "main").strip()
    merges = git(remote, "rev-list", "--merges", "main").split()
    # beta's unpushed commit made again on top of alpha's (dropped when alpha's made the same change):
    # one line of history, no merge commit at all, then fast-forwards only
    assert merges == []
    assert counts[1] == before + (1 if same_content else 2)
    assert alpha.exchange()[0].message == "up to date"


def test_a_peers_symlink_is_data_not_a_path(tmp_path: Path, alpha: Store, remote: Path) -> None:
    peer = tmp_path / "peer"
    git(tmp_path, "clone", "-q", str(remote), str(peer))
    (peer / "roles").mkdir()
    (peer / "roles" / "evil.md").symlink_to("/etc/hostname")
    (peer / "outside").symlink_to(tmp_path)
    git(peer, "add", "-A")
    git(peer, "commit", "-q", "-m", "links")
    git(peer, "push", "-q", "origin", "main")
    assert _statuses(alpha) == ["ok"]
    for name, target in (("roles/evil.md", "/etc/hostname"), ("outside", str(tmp_path))):
        path = alpha.worktree / name
        assert not path.is_symlink() and path.read_text() == target


def test_each_remote_gets_its_own_outcome(tmp_path: Path, remote: Path) -> None:
    dead = tmp_path / "dead.git"
    local = new_store(tmp_path / "alpha", "alpha", {"origin": remote})
    both = Store.open(store_config(local.worktree, {"origin": remote, "usb": dead}), "alpha", local.identity)
    write(both, "a.md", "a\n")
    commit(both, "a")
    outcomes = both.exchange()
    assert [(o.remote, o.status, o.pushed) for o in outcomes] == [
        ("origin", "ok", True),
        ("usb", "offline", False),
    ]
    assert both.unpushed_count("origin") == 0 and both.unpushed_count("usb") == commit_count(both.worktree)
    assert [o.remote for o in both.exchange(["usb"])] == ["usb"]
    with pytest.raises(MemsyncError, match="has no such remote"):
        both.exchange(["nowhere"])


def test_three_peers_in_any_order_converge_then_go_quiet(tmp_path: Path, remote: Path) -> None:
    rng = random.Random(2026)
    peers = [new_store(tmp_path / name, name, {"origin": remote}) for name in ("alpha", "beta", "gamma")]
    write(peers[0], "memory/m.jsonl", HEADER)
    commit(peers[0], "header")
    peers[0].exchange()
    for peer in peers[1:]:
        peer.exchange()
    expected: set[str] = set()
    for step in range(12):
        peer = rng.choice(peers)
        action = rng.choice(["append", "file", "exchange"])
        if action == "append":
            line = _entry(f"{peer.host[:1]}{step:011d}", f"step {step}", step)
            append(peer, "memory/m.jsonl", line)
            expected.add(line.strip())
            commit(peer, f"+1 entry at step {step}")
        elif action == "file":
            write(peer, f"roles/{peer.host}/note-{step}.md", f"{step}\n")
            commit(peer, f"note {step}")
        else:
            assert _statuses(peer) == ["ok"]
    for _round in range(2):
        for peer in peers:
            assert _statuses(peer) == ["ok"]
    settled = commit_count(remote, "main")
    for peer in peers:
        assert _statuses(peer) == ["ok"]
    assert commit_count(remote, "main") == settled  # quiet: no commit without news
    heads = {peer.head() for peer in peers}
    assert len(heads) == 1
    lines = set(read(peers[0], "memory/m.jsonl").splitlines()[1:])
    assert lines == expected
    assert all(read(peer, "memory/m.jsonl") == read(peers[0], "memory/m.jsonl") for peer in peers)


def test_ssh_remote_that_refuses_fails_fast_with_ssh_reason(tmp_path: Path) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client on this machine")
    store = _remote_store(tmp_path, f"ssh://git@127.0.0.1:{_closed_port()}/memory.git")
    started = time.monotonic()
    [outcome] = store.exchange()
    assert time.monotonic() - started < 15
    assert outcome.status == "offline"
    assert "ssh" in outcome.message and "Could not read from remote repository" not in outcome.message


def test_a_remote_recreated_empty_gets_the_whole_history_again(alpha: Store, remote: Path) -> None:
    write(alpha, "a.md", "a\n")
    commit(alpha, "a")
    alpha.exchange()
    shutil.rmtree(remote)
    bare_remote(remote)
    [outcome] = alpha.exchange()
    assert (outcome.status, outcome.pushed) == ("ok", True)
    assert git(remote, "rev-parse", "main").strip() == alpha.head()

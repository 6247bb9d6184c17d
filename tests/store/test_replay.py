"""Many stores pushing one shared branch at once: a refused push replays the store's unpushed commits on
top of the remote's head through the merge drivers, so the branch stays a line (one commit per write, no
merge commit), content decided by the drivers; commits a remote already has are merged, never made
again; a replay a driver cannot finish falls back to the merge (DESIGN "One sync cycle" step 4, I1, I3,
I4, I9). Real stores, real bare remotes, real concurrent exchanges."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from memsync.daemon.remotedirs import REACTION_SPREAD_S, reaction_spread
from memsync.store.facade import Store
from tests.support.helpers import bare_remote, git
from tests.support.stores import append, commit, commit_count, new_store, read, remove, worktree_clean, write

MEMORY = "memory/memory.jsonl"
HEADER = '{"format":"agent-memory/0.1","created_at":"2026-11-01T00:00:00Z"}\n'


def _entry(entry_id: str, minute: int) -> str:
    return (
        json.dumps(
            {
                "id": entry_id,
                "kind": "lesson",
                "text": f"lesson {entry_id}",
                "source": "session:t",
                "created_at": f"2026-11-30T10:{minute:02d}:00Z",
            },
            sort_keys=True,
        )
        + "\n"
    )


def _team(tmp_path: Path, remote: Path, n: int) -> list[Store]:
    first = new_store(tmp_path / "s0", "s0", {"origin": remote})
    write(first, MEMORY, HEADER)
    commit(first, "memory: header")
    assert first.exchange()[0].pushed
    return [first] + [new_store(tmp_path / f"s{i}", f"s{i}", {"origin": remote}) for i in range(1, n)]


def _same_tree_merges(repo: Path) -> list[str]:
    found = []
    for line in git(repo, "rev-list", "--merges", "--format=%T %P", "main").splitlines():
        if line.startswith("commit "):
            continue
        tree, *parents = line.split()
        if any(git(repo, "rev-parse", f"{parent}^{{tree}}").strip() == tree for parent in parents):
            found.append(line)
    return found


def test_stores_pushing_at_once_make_one_line_of_commits(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    team = _team(tmp_path, remote, 6)
    before = commit_count(remote, "main")
    lines = {store.host: _entry(f"e{i}", 50 - i) for i, store in enumerate(team)}
    for store in team:
        append(store, MEMORY, lines[store.host])
        commit(store, f"memory: +1 entry from {store.host}")
    outcomes: dict[str, list[str]] = {}

    def exchange(store: Store) -> None:
        outcomes[store.host] = [outcome.status for outcome in store.exchange()]

    threads = [threading.Thread(target=exchange, args=(store,)) for store in team]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(statuses == ["ok"] for statuses in outcomes.values()), outcomes
    for store in team:  # every store takes in what the others pushed
        assert store.exchange()[0].status == "ok"
    head = git(remote, "rev-parse", "main").strip()
    assert all(store.head() == head for store in team)
    assert commit_count(remote, "main") == before + len(team)  # one commit per write
    assert git(remote, "rev-list", "--merges", "main").split() == []
    # Every line once, header first, the same bytes everywhere (file order is the drivers' business and
    # the view ignores it).
    merged = git(remote, "show", f"main:{MEMORY}")
    assert merged.startswith(HEADER)
    assert sorted(merged.splitlines(keepends=True)[1:]) == sorted(lines.values())
    for store in team:
        assert read(store, MEMORY) == merged
        assert worktree_clean(store)
    # The line is the stores' own commits, one each, whatever order their pushes landed in.
    subjects = git(remote, "log", "--format=%s", f"-{len(team)}", "main").splitlines()
    assert sorted(subjects) == sorted(f"memory: +1 entry from {store.host}" for store in team)
    # Quiet afterwards: nothing more to exchange, nothing committed (I9).
    for store in team:
        assert store.exchange()[0].message == "up to date"
    assert git(remote, "rev-parse", "main").strip() == head


def test_a_replayed_change_the_remote_already_has_is_dropped(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alpha, beta = _team(tmp_path, remote, 2)
    line = _entry("same", 5)
    for store in (alpha, beta):
        append(store, MEMORY, line)
        commit(store, f"memory: +1 entry from {store.host}")
    assert alpha.exchange()[0].pushed
    head = git(remote, "rev-parse", "main").strip()
    [outcome] = beta.exchange()
    assert (outcome.status, outcome.pushed, outcome.merged) == ("ok", False, True)
    assert beta.head() == head  # beta's commit made nothing new: no commit, no merge
    assert read(beta, MEMORY) == HEADER + line


def test_commits_another_remote_has_are_merged_not_made_again(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    mirror = bare_remote(tmp_path / "mirror.git")
    [alpha] = _team(tmp_path, remote, 1)
    beta = new_store(tmp_path / "beta", "beta", {"origin": remote, "mirror": mirror})
    append(beta, MEMORY, _entry("b", 2))
    pushed_elsewhere = commit(beta, "memory: +1 entry from beta")
    assert pushed_elsewhere is not None
    [to_mirror] = beta.exchange(["mirror"])
    assert to_mirror.pushed  # the mirror (and whoever reads it) has seen the commit
    append(alpha, MEMORY, _entry("a", 1))
    commit(alpha, "memory: +1 entry from alpha")
    assert alpha.exchange()[0].pushed
    [outcome] = beta.exchange(["origin"])
    assert (outcome.status, outcome.pushed, outcome.merged) == ("ok", True, True)
    git(beta.worktree, "merge-base", "--is-ancestor", pushed_elsewhere, "HEAD")  # not made again
    [merge] = git(remote, "rev-list", "--merges", "main").split()
    assert pushed_elsewhere in git(remote, "rev-list", "--parents", "-1", merge).split()
    assert _same_tree_merges(remote) == []
    assert read(beta, MEMORY) == HEADER + _entry("a", 1) + _entry("b", 2)


def test_a_replay_that_stops_falls_back_to_the_merge(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    alpha, beta = _team(tmp_path, remote, 2)
    write(alpha, "roles/dev/tabs.md", "tabs\n")
    commit(alpha, "dev: +tabs")
    assert alpha.exchange()[0].pushed
    assert beta.exchange()[0].merged
    remove(alpha, "roles/dev/tabs.md")
    commit(alpha, "dev: -tabs")
    assert alpha.exchange()[0].pushed
    write(beta, "roles/dev/tabs.md", "tabs, four wide\n")
    commit(beta, "dev: tabs changed")
    # A modify/delete: the rebase stops on it; memsync's merge keeps the change (DESIGN "Deletions").
    [outcome] = beta.exchange()
    assert (outcome.status, outcome.pushed, outcome.merged) == ("ok", True, True)
    assert read(beta, "roles/dev/tabs.md") == "tabs, four wide\n"
    assert len(git(remote, "rev-list", "--merges", "main").split()) == 1
    assert not (beta.git_dir / "rebase-merge").exists() and worktree_clean(beta)
    assert alpha.exchange()[0].merged
    assert read(alpha, "roles/dev/tabs.md") == "tabs, four wide\n"


def test_reaction_spread_is_fixed_per_host_and_spreads_a_team() -> None:
    spreads = [reaction_spread(f"peer{i:02d}") for i in range(32)]
    assert spreads == [reaction_spread(f"peer{i:02d}") for i in range(32)]
    assert all(0.0 <= spread < REACTION_SPREAD_S for spread in spreads)
    assert len(set(spreads)) == 32
    # Spread over the whole interval, not bunched: every third of it holds some of the team.
    thirds = {int(spread / REACTION_SPREAD_S * 3) for spread in spreads}
    assert thirds == {0, 1, 2}

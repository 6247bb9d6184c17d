"""The drivers as git runs them: a bare remote and two clones with drivers installed, merging, rebasing,
cherry-picking and criss-crossing without a conflict, converging to identical trees, then going quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX
from memsync.merge.registration import install_merge_drivers
from tests.support.helpers import git

H = '{"created_at":"2026-11-09T07:50:00Z","format":"agent-memory/0.1"}\n'
JSONL = "memory/dev.jsonl"
DAILY = "roles/dev/daily/2026-11-30.md"
INDEX = "roles/dev/MEMORY.md"
ENTRY = "roles/dev/timezone.md"
CLASH = "roles/dev/tools.md"
FILES = (JSONL, DAILY, INDEX, ENTRY, CLASH)

INITIAL = {
    JSONL: H,
    DAILY: "# Daily log — 2026-11-30\n\n- [08:00] start\n",
    INDEX: "# Memory index — dev\n\n- [Timezone](timezone.md) — the user's timezone\n",
    ENTRY: "---\nname: Timezone\ndescription: the user's timezone\ntype: user\n---\n\n"
    "First line.\n\nMiddle.\n\nLast line.\n",
    CLASH: "Use the old tool.\n",
}


def entry_line(id_: str, stamp: str) -> str:
    return (
        json.dumps(
            {"id": id_, "kind": "fact", "text": f"fact {id_} é🟥", "created_at": stamp},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        + "\n"
    )


def write(repo: Path, rel: str, text: str, append: bool = False) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if append and path.exists() else ""
    path.write_text(old + text, encoding="utf-8")


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def no_conflicts(repo: Path) -> None:
    assert git(repo, "ls-files", "-u") == ""
    for rel in FILES:
        data = (repo / rel).read_bytes()
        assert b"<<<<<<<" not in data and b">>>>>>>" not in data


def tree(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD^{tree}").strip()


@pytest.fixture
def peers(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(remote, alice, bob): a bare remote with the initial files, and two clones with drivers installed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    git(tmp_path, "init", "-q", "-b", "main", str(alice))
    git(alice, "remote", "add", "origin", str(remote))
    for rel, text in INITIAL.items():
        write(alice, rel, text)
    commit(alice, "initial")
    git(alice, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    for repo in (alice, bob):
        install_merge_drivers(repo / ".git")
        git(repo, "config", "pull.rebase", "false")
    return remote, alice, bob


def concurrent_edits(alice: Path, bob: Path) -> None:
    """Both peers change every kind of file at once, alice and bob each in their own way."""
    write(alice, JSONL, entry_line("a1", "2026-11-30T10:00:00Z"), append=True)
    write(bob, JSONL, entry_line("b1", "2026-11-30T09:00:00Z"), append=True)
    write(alice, DAILY, "- [10:00] alice was here\n", append=True)
    write(bob, DAILY, "- [09:30] bob was here\n| table | row |\n", append=True)
    write(alice, INDEX, "- [Alice](alice.md) — from alice\n", append=True)
    write(bob, INDEX, "- [Bob](bob.md) — from bob\n", append=True)
    write(alice, ENTRY, INITIAL[ENTRY].replace("First line.", "First line, by alice."))
    write(bob, ENTRY, INITIAL[ENTRY].replace("Last line.", "Last line, by bob."))
    write(alice, CLASH, "Use the new tool (alice).\n")
    write(bob, CLASH, "Use the other tool (bob).\n")
    commit(alice, "alice")
    commit(bob, "bob")


def check_merged(repo: Path) -> None:
    no_conflicts(repo)
    assert (repo / JSONL).read_text(encoding="utf-8") == (
        H + entry_line("b1", "2026-11-30T09:00:00Z") + entry_line("a1", "2026-11-30T10:00:00Z")
    )
    assert (repo / DAILY).read_text(encoding="utf-8") == (
        INITIAL[DAILY] + "- [09:30] bob was here\n| table | row |\n- [10:00] alice was here\n"
    )
    assert (repo / INDEX).read_text(encoding="utf-8") == (
        INITIAL[INDEX] + "- [Alice](alice.md) — from alice\n- [Bob](bob.md) — from bob\n"
    )
    assert (repo / ENTRY).read_text(encoding="utf-8") == (
        INITIAL[ENTRY]
        .replace("First line.", "First line, by alice.")
        .replace("Last line.", "Last line, by bob.")
    )
    clash = (repo / CLASH).read_text(encoding="utf-8")
    assert clash.startswith(BOTH_KEPT_NOTE_PREFIX)
    assert clash.index("Use the new tool (alice).") < clash.index("Use the other tool (bob).")


def test_pull_on_both_peers_merges_without_conflict_and_converges(peers: tuple[Path, Path, Path]) -> None:
    _, alice, bob = peers
    concurrent_edits(alice, bob)
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-edit")
    check_merged(bob)
    git(bob, "push", "-q")
    git(alice, "pull", "-q", "--no-edit")
    check_merged(alice)
    assert tree(alice) == tree(bob)


@pytest.mark.parametrize("how", ["rebase", "cherry-pick"])
def test_rebase_and_cherry_pick_give_the_merge_result(peers: tuple[Path, Path, Path], how: str) -> None:
    _, alice, bob = peers
    concurrent_edits(alice, bob)
    git(alice, "push", "-q")
    if how == "rebase":
        git(bob, "pull", "-q", "--rebase")
    else:
        mine = git(bob, "rev-parse", "HEAD").strip()
        git(bob, "fetch", "-q")
        git(bob, "reset", "-q", "--hard", "origin/main")
        git(bob, "cherry-pick", mine)
    check_merged(bob)
    assert git(bob, "rev-list", "--count", "HEAD").strip() == "3"  # linear: no merge commit


@pytest.mark.slow
def test_criss_cross_converges_then_goes_quiet(peers: tuple[Path, Path, Path]) -> None:
    _, alice, bob = peers
    concurrent_edits(alice, bob)
    # both merge each other first (criss-cross), then keep exchanging through the remote
    git(alice, "fetch", "-q", str(bob), "main:refs/remotes/bob/main")
    git(bob, "fetch", "-q", str(alice), "main:refs/remotes/alice/main")
    git(alice, "merge", "-q", "--no-edit", "bob/main")
    git(bob, "merge", "-q", "--no-edit", "alice/main")
    check_merged(alice)
    check_merged(bob)
    assert tree(alice) == tree(bob)  # symmetric drivers: each side's own merge writes the same bytes

    def exchange(repo: Path) -> None:
        git(repo, "pull", "-q", "--no-edit")
        git(repo, "push", "-q")

    exchange(alice)
    exchange(bob)  # the one documented extra: bob merges two merges (a virtual-base merge), equal trees
    no_conflicts(bob)
    exchange(alice)
    settled = {repo: git(repo, "rev-parse", "HEAD").strip() for repo in (alice, bob)}
    assert settled[alice] == settled[bob]
    for _ in range(5):
        exchange(alice)
        exchange(bob)
    assert {repo: git(repo, "rev-parse", "HEAD").strip() for repo in (alice, bob)} == settled
    assert git(alice, "status", "--porcelain") == ""
    assert tree(alice) == tree(bob)


def test_add_add_of_the_same_new_files(peers: tuple[Path, Path, Path]) -> None:
    _, alice, bob = peers
    write(alice, "memory/new.jsonl", H + entry_line("x", "2026-11-30T12:00:00Z"))
    write(bob, "memory/new.jsonl", H + entry_line("y", "2026-11-30T11:00:00Z"))
    write(alice, "roles/dev/daily/2026-12-01.md", "# Daily log — 2026-12-01\n\n- [09:00] a\n")
    write(bob, "roles/dev/daily/2026-12-01.md", "# Daily log — 2026-12-01\n\n- [08:00] b\n")
    commit(alice, "alice adds")
    commit(bob, "bob adds")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-edit")
    assert git(bob, "ls-files", "-u") == ""
    assert (bob / "memory/new.jsonl").read_text(encoding="utf-8") == (
        H + entry_line("y", "2026-11-30T11:00:00Z") + entry_line("x", "2026-11-30T12:00:00Z")
    )
    assert (bob / "roles/dev/daily/2026-12-01.md").read_text(encoding="utf-8") == (
        "# Daily log — 2026-12-01\n\n- [08:00] b\n- [09:00] a\n"
    )


def test_daily_log_merged_over_two_merge_bases_gets_no_note(tmp_path: Path) -> None:
    """Three peers append to one daily log and pull from each other until a merge has two merge bases.
    git merges the bases into a virtual base whose block order neither side has; the daily driver still
    treats both sides as insertions (no both-kept note, no marker, every line kept), found by a tester."""
    repos = {name: tmp_path / name for name in ("p0", "p1", "p2")}
    for repo in repos.values():
        git(tmp_path, "init", "-q", "-b", "main", str(repo))
        install_merge_drivers(repo / ".git")
    write(repos["p0"], DAILY, "# Daily log\n\n")
    commit(repos["p0"], "root")
    for name in ("p1", "p2"):
        git(repos[name], "pull", "-q", str(repos["p0"]), "main")

    def append(name: str, line: str) -> None:
        write(repos[name], DAILY, line, append=True)
        commit(repos[name], f"{name} append")

    def pull(into: str, source: str) -> None:
        git(repos[into], "pull", "-q", "--no-rebase", "--no-edit", str(repos[source]), "main")

    lines = {
        "A": "- [13:30] p0 A\n",
        "B": "- [18:30] p2 B\n",
        "C": "- [09:00] p1 C\n",
        "D": "- [15:00] p1 D\n",
        "E": "- [10:00] p2 E\n",
    }
    append("p0", lines["A"])
    append("p2", lines["B"])
    append("p1", lines["C"])
    pull("p0", "p1")
    pull("p0", "p2")
    append("p1", lines["D"])
    pull("p2", "p1")
    pull("p0", "p1")
    append("p2", lines["E"])
    git(repos["p0"], "fetch", "-q", str(repos["p2"]), "main")
    assert len(git(repos["p0"], "merge-base", "--all", "HEAD", "FETCH_HEAD").split()) == 2
    pull("p0", "p2")
    merged = (repos["p0"] / DAILY).read_text(encoding="utf-8")
    assert BOTH_KEPT_NOTE_PREFIX not in merged and "<<<<<<<" not in merged
    assert merged.startswith("# Daily log\n\n- [09:00] p1 C\n")
    assert all(merged.count(line) in (1, 2) for line in lines.values()), merged
    assert git(repos["p0"], "ls-files", "-u") == ""


def test_index_lines_for_one_file_survive_merges_both_ways(peers: tuple[Path, Path, Path]) -> None:
    """Two lines linking parts of one file (alice) and a peer's item (bob) merge through git on both
    machines with no line lost; then two machines' different lines for one new file both stay."""
    _, alice, bob = peers
    staging = "- [Deploy: staging](deploy.md#staging) — how staging is deployed\n"
    rollback = "- [Deploy: rollback](deploy.md#rollback) — how to roll back\n"
    write(alice, INDEX, staging + rollback, append=True)
    write(bob, INDEX, "- [Bob](bob.md) — from bob\n", append=True)
    commit(alice, "alice")
    commit(bob, "bob")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-edit")
    git(bob, "push", "-q")
    git(alice, "pull", "-q", "--no-edit")
    expected = INITIAL[INDEX] + "- [Bob](bob.md) — from bob\n" + staging + rollback
    for repo in (alice, bob):
        no_conflicts(repo)
        assert (repo / INDEX).read_text(encoding="utf-8") == expected
    assert tree(alice) == tree(bob)
    write(alice, INDEX, "- [Notes](notes.md) — alice's notes\n", append=True)
    write(bob, INDEX, "- [Notes](notes.md) — bob's notes, longer\n", append=True)
    commit(alice, "alice notes")
    commit(bob, "bob notes")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-edit")
    merged = (bob / INDEX).read_text(encoding="utf-8")
    assert (
        merged
        == expected + "- [Notes](notes.md) — alice's notes\n- [Notes](notes.md) — bob's notes, longer\n"
    )

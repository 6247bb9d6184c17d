"""Two machines (two HOMEs, each with its own config, one bare remote), each with a project folder `app`
without a git remote, and unrelated: their memory stays apart, whatever an older version stored under
the bare name `app`, until both users name the project (`memsync project alias PATH NAME`), when it
meets; what each synced under its machine's key is folded into the named one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.helpers import git
from tests.support.peers import Peer, sync

DAY = "daily/2026-11-30.md"


def app_role(peer: Peer) -> Path:
    """A role `qa` in `~/src/app` (a git checkout without a remote), tracked by its default store path."""
    project = peer.home / "src" / "app"
    role = project / ".agents" / "memory" / "qa"
    (role / "daily").mkdir(parents=True)
    git(project, "init", "-q")
    peer.add_track(role)
    return role


def remote_paths(remote: Path) -> set[str]:
    return set(git(remote, "ls-tree", "-r", "--name-only", "main").split())


@pytest.mark.slow
def test_projects_without_a_remote_meet_only_once_named(tmp_path: Path, remote: Path) -> None:
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    # An older version keyed both by the folder name: what it stored there stays, and is not handed on.
    old = a.home / "old-app-memory" / "qa"
    (old / "daily").mkdir(parents=True)
    (old / DAY).write_text("- [08:00] from an older version\n")
    a.add_track(old, "projects/app/qa")
    sync(a)
    role_a, role_b = app_role(a), app_role(b)
    (role_a / DAY).write_text("- [09:00] alice: the app is a shop\n")
    (role_b / DAY).write_text("- [09:30] bob: the app is a game\n")
    sync(a, b, a)

    assert (role_a / DAY).read_text() == "- [09:00] alice: the app is a shop\n"
    assert (role_b / DAY).read_text() == "- [09:30] bob: the app is a game\n"
    paths = remote_paths(remote)
    # Each machine's own key: folder name, host, a hash of the folder's path.
    assert f"projects/app/qa/{DAY}" in paths
    for host in ("alice", "bob"):
        assert len([p for p in paths if re.fullmatch(rf"projects/app@{host}-[0-9a-f]{{6}}/qa/{DAY}", p)]) == 1

    for peer, role in ((a, role_a), (b, role_b)):
        named = peer.cli("project", "alias", str(role.parents[2]), "acme/app")
        assert named.returncode == 0, named.stderr
        assert f"{role} syncs as projects/acme~app/qa in store main" in named.stdout
    sync(a, b, a, b)

    both = {"- [09:00] alice: the app is a shop\n", "- [09:30] bob: the app is a game\n"}
    for role in (role_a, role_b):
        assert set((role / DAY).read_text().splitlines(keepends=True)) == both
    assert f"projects/acme~app/qa/{DAY}" in remote_paths(remote)
    assert "older version" not in (role_b / DAY).read_text()


def test_a_bad_alias_is_refused_with_one_line(tmp_path: Path, remote: Path) -> None:
    a = Peer.create(tmp_path, "alice", remote, init_store=False)
    project = a.home / "src" / "app"
    project.mkdir(parents=True)
    before = a.config.read_bytes()
    for args, reason in (
        ((str(project), "../x"), "is not a project name"),
        ((str(a.home / "missing"), "app"), "is not a directory"),
        ((str(a.home), "app"), "not a project"),
    ):
        refused = a.main("project", "alias", *args)
        assert refused.returncode == 1 and reason in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    assert a.config.read_bytes() == before
    named = a.main("project", "alias", str(project), "acme/app")
    assert (
        named.returncode == 0 and "is 'acme/app' now: its memory syncs under the key acme~app" in named.stdout
    )
    assert "acme/app" in a.config.read_text() and a.main("config", "list").returncode == 0

"""A person who clones the remote memsync pushed to, with plain git, gets the memory (real bare remotes,
real `git clone`): the remote's HEAD names the branch memsync pushes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import cli_main, git, run_cli


def _plain_bare(path: Path, head: str) -> Path:
    """`git init --bare` as git 2.39 does it without init.defaultBranch: HEAD names ``head``."""
    git(path.parent, "-c", f"init.defaultBranch={head}", "init", "-q", "--bare", str(path))
    return path


def _clone(remote: Path, into: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "clone", str(remote), str(into)], capture_output=True, text=True, check=False, timeout=60
    )


def _first_machine(home: Path, remote: Path, *args: str) -> None:
    role = home / ".agents" / "memory" / "scout"
    role.mkdir(parents=True)
    (role / "MEMORY.md").write_text("# Memory index — scout\n")
    result = run_cli("init", "--remote", str(remote), *args)
    assert result.returncode == 0, result.stderr
    sync = run_cli("sync")
    assert sync.returncode == 0, sync.stderr


@pytest.mark.slow
@pytest.mark.parametrize("head", ["master", "trunk"])
def test_a_new_store_adopts_the_branch_an_empty_remotes_head_names(
    home: Path, tmp_path: Path, head: str
) -> None:
    remote = _plain_bare(tmp_path / "memory.git", head)
    _first_machine(home, remote)
    cloned = _clone(remote, tmp_path / "plain-clone")
    assert cloned.returncode == 0 and "nonexistent ref" not in cloned.stderr, cloned.stderr
    checked_out = tmp_path / "plain-clone" / "roles" / "scout" / "MEMORY.md"
    assert checked_out.read_text() == "# Memory index — scout\n"
    assert run_cli("config", "get", "stores.personal.branch").stdout == f"{head}\n"

    # A second machine joins without naming a branch either, and syncs the same branch.
    bob = tmp_path / "bob"
    env = isolated_env(bob)
    joined = run_cli("init", "--remote", str(remote), env=env)
    assert joined.returncode == 0, joined.stderr
    assert "cloned from origin" in joined.stdout
    assert run_cli("sync", env=env).returncode == 0
    assert (bob / ".agents" / "memory" / "scout" / "MEMORY.md").read_text() == "# Memory index — scout\n"


def test_an_explicit_branch_points_a_local_remotes_dangling_head_at_it(home: Path, tmp_path: Path) -> None:
    remote = _plain_bare(tmp_path / "memory.git", "master")
    _first_machine(home, remote, "--branch", "main")
    assert git(remote, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    cloned = _clone(remote, tmp_path / "plain-clone")
    assert cloned.returncode == 0 and "nonexistent ref" not in cloned.stderr, cloned.stderr
    assert (tmp_path / "plain-clone" / "roles" / "scout" / "MEMORY.md").is_file()


def test_a_remote_head_naming_an_existing_branch_is_left_alone(home: Path, tmp_path: Path) -> None:
    remote = _plain_bare(tmp_path / "memory.git", "master")
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(remote), str(seed))
    (seed / "README").write_text("someone else's branch\n")
    git(seed, "add", "README")
    git(seed, "commit", "-qm", "theirs")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/master")
    store = home / "stores" / "personal"
    (home / "stores").mkdir(parents=True)
    result = cli_main("init", "--remote", str(remote), "--branch", "memory", "--store", str(store))
    assert result.returncode == 0, result.stderr
    assert git(remote, "symbolic-ref", "HEAD").strip() == "refs/heads/master"
    assert git(remote, "rev-parse", "--verify", "refs/heads/memory").strip()

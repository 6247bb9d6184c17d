"""`memsync init --remote` / `store add --remote` onto a repository that is not a memsync store (a code
repository's pasted URL): refused in one line, nothing written or pushed; `--branch` gives memory a
branch of its own there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import cli_main, git, run_cli


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def _stores(home: Path) -> Path:
    return home / ".local" / "share" / "memsync" / "stores"


def _refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def _code_repo(tmp_path: Path, branch: str = "main", head: str = "main") -> Path:
    """A bare repository holding an ordinary project's history on ``branch``; its HEAD names ``head``."""
    remote = tmp_path / "code.git"
    git(tmp_path, "-c", f"init.defaultBranch={head}", "init", "-q", "--bare", str(remote))
    work = tmp_path / "code-work"
    git(tmp_path, "init", "-q", "-b", branch, str(work))
    (work / "README.md").write_text("# an app\n")
    (work / "main.py").write_text("print('hello')\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "first")
    git(work, "push", "-q", str(remote), f"{branch}:{branch}")
    return remote


def _memory(home: Path) -> None:
    role = home / ".agents" / "memory" / "qa"
    role.mkdir(parents=True)
    (role / "MEMORY.md").write_text("# Memory index — qa\n- personal note\n")


def _assert_refused(result_stderr: str, returncode: int, remote: Path) -> None:
    assert returncode == 1
    lines = result_stderr.strip().splitlines()
    assert len(lines) == 1, result_stderr
    assert str(remote) in lines[0] and "not a memsync store" in lines[0]
    assert "empty repository" in lines[0] and "--branch memsync" in lines[0]


def test_init_refuses_a_code_repository_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    _memory(home)
    remote = _code_repo(tmp_path)
    refs = _refs(remote)

    result = cli_main("init", "--remote", str(remote))

    _assert_refused(result.stderr, result.returncode, remote)
    assert _refs(remote) == refs
    assert not _config(home).exists()
    assert not (_stores(home) / "personal").exists()
    for made in (".config/memsync", ".local/share/memsync", ".local/state/memsync"):
        assert not (home / made).exists(), made  # not even an empty directory
    # The user's next step works: the same repository, memory on a branch of its own.
    again = cli_main("init", "--remote", str(remote), "--branch", "memsync")
    assert again.returncode == 0, again.stderr
    assert "which had no branch memsync" in again.stdout and "which was empty" not in again.stdout
    assert cli_main("sync").returncode == 0
    assert _refs(remote).count("refs/heads/main ") == 1 and git(remote, "rev-parse", "main") == git(
        tmp_path / "code-work", "rev-parse", "main"
    )
    # The memory branch has its own history: none of the code's files or commits.
    assert "roles/qa/MEMORY.md" in git(remote, "ls-tree", "-r", "--name-only", "memsync")
    assert "README.md" not in git(remote, "ls-tree", "-r", "--name-only", "memsync")
    assert git(remote, "rev-list", "memsync").split()[-1] != git(remote, "rev-parse", "main").strip()
    assert not (_stores(home) / "personal" / "main.py").exists()


def test_init_refuses_a_code_repository_whose_head_names_another_branch(home: Path, tmp_path: Path) -> None:
    remote = _code_repo(tmp_path, branch="master", head="master")
    refs = _refs(remote)
    result = cli_main("init", "--remote", str(remote))
    _assert_refused(result.stderr, result.returncode, remote)
    assert _refs(remote) == refs and not _config(home).exists()


def test_init_refuses_a_repository_with_history_only_on_other_branches(home: Path, tmp_path: Path) -> None:
    remote = _code_repo(tmp_path, branch="develop", head="main")
    refs = _refs(remote)
    result = cli_main("init", "--remote", str(remote))
    _assert_refused(result.stderr, result.returncode, remote)
    assert "other branches" in result.stderr
    assert _refs(remote) == refs and not _config(home).exists()


def test_store_add_refuses_a_code_repository_and_keeps_the_config(home: Path, tmp_path: Path) -> None:
    assert cli_main("init").returncode == 0
    before = _config(home).read_bytes()
    remote = _code_repo(tmp_path)
    refs = _refs(remote)

    result = cli_main("store", "add", "team", "--remote", str(remote))

    _assert_refused(result.stderr, result.returncode, remote)
    assert _config(home).read_bytes() == before and _refs(remote) == refs
    assert not (_stores(home) / "team").exists()
    added = cli_main("store", "add", "team", "--remote", str(remote), "--branch", "memsync")
    assert added.returncode == 0, added.stderr
    assert "refs/heads/memsync " in _refs(remote)


def test_init_refuses_a_code_repository_as_the_remote_of_an_existing_store(
    home: Path, tmp_path: Path
) -> None:
    _memory(home)
    assert cli_main("init").returncode == 0
    assert cli_main("sync").returncode == 0
    config = _config(home).read_bytes()
    store = _stores(home) / "personal"
    head = git(store, "rev-parse", "HEAD")
    remote = _code_repo(tmp_path)
    refs = _refs(remote)

    result = cli_main("init", "--remote", str(remote))

    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(remote) in result.stderr and "not a memsync store" in result.stderr
    assert "memsync config set stores.personal.branch memsync" in result.stderr
    assert _config(home).read_bytes() == config and _refs(remote) == refs
    assert git(store, "rev-parse", "HEAD") == head and "main.py" not in git(store, "ls-files")
    assert cli_main("sync").returncode == 0 and _refs(remote) == refs


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_an_existing_store_still_joins_another_memsync_store(home: Path, tmp_path: Path) -> None:
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    other = isolated_env(tmp_path / "other")
    assert run_cli("init", "--remote", str(remote), env=other).returncode == 0
    _memory(home)
    assert run_cli("init").returncode == 0

    joined = run_cli("init", "--remote", str(remote))

    assert joined.returncode == 0, joined.stderr
    assert run_cli("sync").returncode == 0
    assert "roles/qa/MEMORY.md" in git(remote, "ls-tree", "-r", "--name-only", "main")

"""The README's second machine, step by step through the real CLI: a machine that already used memsync
alone (local history, memory of its own) joins the first machine's remote and nothing is lost; a fresh
machine joins an encrypted store with the commands the README and `memsync join` name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, run_cli


def _role(home: Path, name: str, line: str) -> Path:
    role = home / ".agents" / "memory" / name
    (role / "daily").mkdir(parents=True)
    (role / "MEMORY.md").write_text(f"# Memory index — {name}\n")
    (role / "daily" / "2026-01-05.md").write_text(f"# Daily log — 2026-01-05\n\n{line}")
    return role


@pytest.mark.slow
@pytest.mark.parametrize("join", [("init", "--remote"), ("remote", "add", "origin")])
def test_a_machine_with_its_own_history_joins_and_both_keep_everything(
    tmp_path: Path, join: tuple[str, ...]
) -> None:
    remote = bare_remote(tmp_path / "memory.git")
    alice, bob = isolated_env(tmp_path / "alice"), isolated_env(tmp_path / "bob")
    alice_home, bob_home = tmp_path / "alice", tmp_path / "bob"
    _role(alice_home, "scout", "- [09:00] alice: the CI cache is flaky\n")
    assert run_cli("init", "--remote", str(remote), env=alice).returncode == 0
    assert run_cli("sync", env=alice).returncode == 0

    # bob used memsync on his own first: a local store with history, the same role and one of his own.
    _role(bob_home, "scout", "- [10:00] bob: deploys need a ticket\n")
    _role(bob_home, "writer", "- [11:00] bob: prefer short sentences\n")
    bob_fact = run_cli("remember", "Bob prefers tabs.", env=bob)
    assert bob_fact.returncode == 0, bob_fact.stderr
    assert run_cli("init", env=bob).returncode == 0
    assert run_cli("sync", env=bob).returncode == 0

    joined = run_cli(*join, str(remote), env=bob)
    assert joined.returncode == 0, joined.stderr
    assert run_cli("sync", env=bob).returncode == 0
    assert run_cli("sync", env=alice).returncode == 0

    for home in (alice_home, bob_home):
        log = (home / ".agents/memory/scout/daily/2026-01-05.md").read_text()
        assert "alice: the CI cache is flaky" in log and "bob: deploys need a ticket" in log
        writer = home / ".agents/memory/writer/daily/2026-01-05.md"
        assert "bob: prefer short sentences" in writer.read_text()
        assert "Bob prefers tabs." in next((home / ".agent-memory").glob("*.jsonl")).read_text()
    status = run_cli("status", env=bob).stdout
    assert "commits waiting to be pushed: 0" in status and "last error" not in status


def _ok(env: dict[str, str], *args: str) -> str:
    done = run_cli(*args, env=env)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def test_a_fresh_machine_joins_an_encrypted_store_as_the_readme_says(tmp_path: Path) -> None:
    remote = str(bare_remote(tmp_path / "memory.git"))
    alice, bob = isolated_env(tmp_path / "alice"), isolated_env(tmp_path / "bob")
    made = _ok(alice, "init", "--remote", remote, "--encrypt", "--host", "alice")
    assert "personal's remote receives ciphertext only (encrypted for its members' keys)" in made

    # A machine with no store yet is told to join with `init`, which tracks its memory folders too.
    joined = _ok(bob, "join", remote)
    assert f"then here: `memsync init --remote {remote} --encrypt`" in joined
    age, signing = joined.splitlines()[0].removeprefix("this device's key: ").split()
    added = _ok(alice, "key", "add", age, signing)
    alice_code = added.splitlines()[2].split()[3]
    assert f"this device's code: {alice_code} " in added
    assert "takes the history only if device" in _ok(bob, "join", remote, "--member", alice_code)
    taken = _ok(bob, "init", "--remote", remote, "--encrypt", "--host", "bob")
    assert "cloned from origin" in taken and "receives ciphertext only" in taken
    assert "tracking " + str(tmp_path / "bob" / ".agent-memory") in taken

    _ok(alice, "remember", "Deploys go through the staging cluster first.")
    _ok(alice, "sync")
    _ok(bob, "sync")
    _ok(bob, "remember", "Use plain English in commit messages.")
    _ok(bob, "sync")
    _ok(alice, "sync")
    for env in (alice, bob):
        shown = _ok(env, "show")
        assert "Deploys go through the staging cluster" in shown and "Use plain English" in shown
    tree = subprocess.run(
        ["git", "-C", remote, "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert tree.stdout.split() == [".memsync/format", "data.age"]  # ciphertext only


def test_a_fresh_machine_that_forgets_encrypt_is_told_how_to_join(tmp_path: Path) -> None:
    remote = str(bare_remote(tmp_path / "memory.git"))
    _ok(isolated_env(tmp_path / "alice"), "init", "--remote", remote, "--encrypt")
    refused = run_cli("init", "--remote", remote, env=isolated_env(tmp_path / "bob"))
    assert refused.returncode == 1
    assert "it holds encrypted memory and this store is not set to encrypt" in refused.stderr
    assert "Add --encrypt to `memsync init` or `memsync store add`" in refused.stderr
    assert not (tmp_path / "bob" / ".config" / "memsync" / "config.toml").exists()

"""A machine without a git identity commits as its memsync host name; `init` says how to set an author."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import git, run_cli


def test_without_a_git_identity_commits_are_authored_by_the_host(home: Path) -> None:
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")  # no [user]
    init = run_cli("init", "--host", "lap")
    assert init.returncode == 0, init.stderr
    assert "author: lap <memsync@lap> (of the commits; `memsync config set author.name NAME`" in init.stdout
    assert run_cli("remember", "Commits name this machine.").returncode == 0
    assert run_cli("sync").returncode == 0
    store = home / ".local" / "share" / "memsync" / "stores" / "personal"
    authors = set(git(store, "log", "--format=%an <%ae>").split("\n")) - {""}
    assert authors == {"lap <memsync@lap>"}

    assert run_cli("config", "set", "author.name", "Ada").returncode == 0
    again = run_cli("init")
    assert "author: Ada <memsync@lap>" in again.stdout

"""A machine without a git identity commits as its memsync host name; `init` says how to set an author."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import cli_main, git


def test_without_a_git_identity_commits_are_authored_by_the_host(home: Path) -> None:
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")  # no [user]
    init = cli_main("init", "--host", "lap")
    assert init.returncode == 0, init.stderr
    assert "author: lap <memsync@lap> (of the commits; `memsync config set author.name NAME`" in init.stdout
    assert cli_main("remember", "Commits name this machine.").returncode == 0
    assert cli_main("sync").returncode == 0
    store = home / ".local" / "share" / "memsync" / "stores" / "personal"
    authors = set(git(store, "log", "--format=%an <%ae>").split("\n")) - {""}
    assert authors == {"lap <memsync@lap>"}

    assert cli_main("config", "set", "author.name", "Ada").returncode == 0
    again = cli_main("init")
    assert "author: Ada <memsync@lap>" in again.stdout

"""Typos a newcomer makes are refused before anything is written: a path whose directory does not exist,
a remote URL git cannot use, a remote name git refuses. One line naming the argument, exit 1. A number
out of its option's range is a usage error naming the option, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import bare_remote, cli_main, run_cli


def _config(home: Path) -> Path:
    return home / ".config" / "memsync" / "config.toml"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def initialised(home: Path) -> Path:
    """The config `memsync init` writes on a fresh HOME (its store is not needed here)."""
    _config(home).parent.mkdir(parents=True)
    _config(home).write_text(
        '[stores.personal]\n[[stores.personal.track]]\npath = "~/.agents/memory"\n\n'
        '[[stores.personal.track]]\npath = "~/.agent-memory"\n'
    )
    return home


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("remember", "A fact.", "--file", "{missing}/x.jsonl"), "--file {missing}/x.jsonl"),
        (("track", "{missing}/role"), "PATH {missing}/role"),
        (("init", "--track", "{missing}/notes.jsonl"), "--track {missing}/notes.jsonl"),
        (("handoff", "{home}/.agent-memory", "{missing}/receiver"), "TO {missing}/receiver"),
        (("remote", "add", "backup", "{missing}/backup.git"), "URL {missing}/backup.git"),
    ],
)
def test_a_path_whose_directory_does_not_exist_is_refused_and_nothing_is_written(
    initialised: Path, tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    missing = tmp_path / "no" / "such" / "dir"
    (initialised / ".agent-memory").mkdir(exist_ok=True)
    before = _snapshot(initialised)
    values = {"missing": str(missing), "home": str(initialised)}
    result = run_cli(*(arg.format(**values) for arg in args))
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith(f"memsync: {named.format(**values)}: its directory ")
    assert "does not exist" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "no").exists()
    assert _snapshot(initialised) == before


def test_a_path_that_does_not_exist_yet_under_an_existing_directory_is_tracked_and_said(
    initialised: Path, tmp_path: Path
) -> None:
    later = tmp_path / "later-role"
    result = cli_main("track", str(later))
    assert result.returncode == 0, result.stderr
    assert f"{later} does not exist yet: memsync picks it up when it is created" in result.stdout


def test_a_memory_file_whose_store_path_meets_the_default_folder_gets_a_way_out(
    initialised: Path, tmp_path: Path
) -> None:
    """A *.jsonl anywhere maps to memory/<name>.jsonl, inside the tracked ~/.agent-memory's `memory`."""
    notes = tmp_path / "notes.jsonl"
    result = cli_main("track", str(notes))
    assert result.returncode == 1
    assert result.stderr.startswith(f"memsync: cannot track {notes}: its store path memory/notes.jsonl meets")
    assert "--as notes/notes.jsonl" in result.stderr and "config" not in result.stderr
    again = cli_main("track", str(notes), "--as", "notes/notes.jsonl")
    assert again.returncode == 0, again.stderr
    assert f"tracking {notes} in store personal as notes/notes.jsonl" in again.stdout


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("htps:/bad", "looks like a URL with a slash missing"),
        ("htps://bad.example/x.git", "git has no transport for (no git-remote-htps helper)"),
        ("nohelper::somewhere", "needs the git-remote-nohelper helper"),
        ("bad host:path", "is neither a URL, a host:path address nor a path"),
    ],
)
def test_a_remote_url_git_cannot_use_is_refused(initialised: Path, url: str, why: str) -> None:
    before = _config(initialised).read_bytes()
    result = cli_main("remote", "add", "bad2", url)
    assert result.returncode == 1
    assert result.stderr.startswith(f"memsync: URL {url!r} ") and why in result.stderr
    assert result.stderr.count("\n") == 1
    assert _config(initialised).read_bytes() == before


def test_urls_git_can_use_are_accepted(initialised: Path, tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "ok.git")
    for name, url in (
        ("a", "git@github.com:ada/memory.git"),
        ("b", "ssh://git@example.org:2222/srv/memory.git"),
        ("c", "https://example.org/ada/memory.git"),
        ("d", "server:/srv/memory.git"),
        ("e", f"file://{bare}"),
    ):
        result = cli_main("remote", "add", name, url)
        assert result.returncode == 0, (url, result.stderr)


def test_a_relative_remote_path_is_stored_absolute(initialised: Path, tmp_path: Path) -> None:
    bare_remote(tmp_path / "shared" / "memory.git")
    result = run_cli("remote", "add", "backup", "shared/memory.git", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f'backup = "{tmp_path}/shared/memory.git"' in _config(initialised).read_text()


@pytest.mark.parametrize("name", ["bad name", "a..b", "x.lock", "-dash"])
def test_a_remote_name_git_refuses_is_refused_naming_it_not_the_config(
    initialised: Path, tmp_path: Path, name: str
) -> None:
    before = _config(initialised).read_bytes()
    result = cli_main("remote", "add", "--", name, str(bare_remote(tmp_path / "r.git")))
    assert result.returncode == 1
    assert result.stderr.startswith(f"memsync: remote name {name!r} ")
    assert "config" not in result.stderr and result.stderr.count("\n") == 1
    assert _config(initialised).read_bytes() == before


@pytest.mark.parametrize(
    ("args", "named", "bound"),
    [
        (("ui", "--port", "99999", "--no-browser"), "'--port'", "less than or equal to 65535"),
        (("ui", "--port", "-1", "--no-browser"), "'--port'", "greater than or equal to 0"),
        (("prompt", "--max-bytes", "-1"), "'--max-bytes'", "greater than or equal to 1"),
        (("snapshot", "{home}", "--max-bytes", "0"), "'--max-bytes'", "greater than or equal to 1"),
        (("handoff", "a", "b", "--max-bytes", "0"), "'--max-bytes'", "greater than or equal to 1"),
        (("recall", "fact", "--limit", "101"), "'--limit' / '-n'", "less than or equal to 100"),
        (("held", "allow", "{home}/x.jsonl", "0"), "'LINE'", "greater than or equal to 1"),
    ],
)
def test_a_number_out_of_its_range_is_a_usage_error_naming_the_option(
    initialised: Path, args: tuple[str, ...], named: str, bound: str
) -> None:
    before = _snapshot(initialised)
    result = cli_main(*(arg.format(home=initialised) for arg in args))
    assert result.returncode == 2, result.stderr
    assert f"Invalid value for {named}: Input should be {bound}" in result.stderr
    assert "unexpected error" not in result.stderr and "Traceback" not in result.stderr
    assert _snapshot(initialised) == before


@pytest.mark.parametrize(("url", "said"), [("", "is empty"), ("{tmp}/nonexistent.git", "nothing is there")])
def test_join_refuses_an_empty_url_or_a_local_path_where_nothing_is_and_makes_no_key(
    home: Path, tmp_path: Path, url: str, said: str
) -> None:
    url = url.format(tmp=tmp_path)
    result = cli_main("join", url)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"memsync: URL {url!r}") and said in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (home / ".config").exists()

"""Secrets the scanner used to let through (DESIGN I6): a password stated in prose with what it is for,
``user:password@host`` without a scheme, a token wrapped over lines of a curated entry (a blockquote,
a hard break, three lines), and a token remembered in two halves by two `remember` calls (the second
is refused and says so). Prose about passwords still passes."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memsync.base.paths import config_path
from memsync.cli import main
from memsync.secrets import scan_text
from memsync.secrets.files import scan_appended, scan_whole
from memsync.tracks.resolve import load_stores
from tests.support.helpers import cli_main, git

TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"  # made up, in GitHub's shape
CURATED = "---\nname: CI\ndescription: how CI pushes\ntype: reference\n---\n\n"


@pytest.mark.parametrize(
    "text",
    [
        "the password for prod is Tr0ub4dor3",
        "The password for the staging db was 'Tr0ub4dor3'.",
        "admin:Tr0ub4dor3x@host/repo",
        "clone from deploy:Tr0ub4dor3x@git.example.com:team/repo",
    ],
)
def test_a_password_in_prose_or_before_a_host_is_found(text: str) -> None:
    assert scan_text(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in vault",
        "password: see 1Password",
        "the password for prod is stored in vault",
        "the password for this account is documented in the wiki",
        "git@github.com:org/repo",
        "write to mailto:John1234X@example.com",
        "note:john.doe1@corp.com",
        "The staging database\nwas rebuilt overnight\nby\nthe nightly job.",
    ],
)
def test_prose_about_passwords_passes(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize(
    "body",
    [
        f"> The token is {TOKEN[:15]}\n> {TOKEN[15:]} for CI.\n",
        f"The token is {TOKEN[:15]}\\\n{TOKEN[15:]} for CI.\n",
        f"The token is {TOKEN[:15]}  \n{TOKEN[15:]} for CI.\n",
        f"The token is {TOKEN[:12]}\n{TOKEN[12:24]}\n{TOKEN[24:]}\nfor CI.\n",
    ],
)
def test_a_token_wrapped_over_lines_of_a_curated_entry_is_found(body: str) -> None:
    found = scan_whole((CURATED + body).encode())
    assert found is not None and found[1] == "GitHub Token (split over two lines)"


@settings(deadline=None)  # the first example imports the detectors
@given(
    st.sets(st.integers(6, len(TOKEN) - 2), min_size=1, max_size=3),
    st.sampled_from(["", "> ", "  "]),
    st.sampled_from(["", "  ", "\\"]),
)
def test_a_token_wrapped_anywhere_over_up_to_four_lines_is_found(
    cuts: set[int], lead: str, tail: str
) -> None:
    edges = [0, *sorted(cuts), len(TOKEN)]
    assume(all(b - a >= 2 for a, b in pairwise(edges)))  # a one-character line is no word to glue
    pieces = [TOKEN[a:b] for a, b in pairwise(edges)]
    body = f"{tail}\n{lead}".join(pieces)
    found = scan_whole(f"{CURATED}{lead}The token is {body}\n{lead}for CI.\n".encode())
    assert found is not None and found[1].startswith("GitHub Token")


@settings(deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=6), st.lists(st.binary(max_size=80), max_size=2))
def test_the_scanners_of_peer_content_never_raise(lines: list[bytes], context: list[bytes]) -> None:
    scan_whole(b"\n".join(lines))
    scan_appended("memory/ada.jsonl", [line + b"\n" for line in lines], [line + b"\n" for line in context])
    scan_appended("roles/qa/daily/2026-11-30.md", [line + b"\n" for line in lines])


def test_a_curated_entry_with_a_wrapped_token_stays_on_this_machine(home: Path) -> None:
    assert cli_main("init").returncode == 0
    role = home / ".agents" / "memory" / "ops"
    role.mkdir(parents=True)
    (role / "ci.md").write_text(CURATED + f"The token is {TOKEN[:12]}\n{TOKEN[12:24]}\n{TOKEN[24:]}\n")
    (role / "notes.md").write_text(CURATED + "CI pushes with the bot's token, kept in the vault.\n")
    assert cli_main("sync").returncode == 0
    [store] = load_stores(config_path()).stores.values()
    committed = git(store.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "roles/ops/notes.md" in committed and "roles/ops/ci.md" not in committed
    status = json.loads(cli_main("status", "--json").stdout)
    held = [item["file"] for s in status["stores"].values() for item in s["held_back_secrets"]]
    assert held == [str(role / "ci.md")]


def test_a_token_remembered_in_two_halves_refuses_the_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = tmp_path / "ada.jsonl"
    assert main(["remember", f"The CI token begins {TOKEN[:16]}", "--file", str(memory)]) == 0
    before = memory.read_bytes()
    capsys.readouterr()
    assert main(["remember", f"{TOKEN[16:]} is how it ends", "--file", str(memory)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert "completes what looks like a secret split over two entries (GitHub Token)" in line
    assert memory.read_bytes() == before
    # What follows the first half in plain words is no secret.
    assert main(["remember", "The CI runs on Fridays only", "--file", str(memory)]) == 0


def test_a_github_token_in_a_header_is_held_back_as_a_github_token(home: Path) -> None:
    assert cli_main("init").returncode == 0
    role = home / ".agents" / "memory" / "ops"
    role.mkdir(parents=True)
    (role / "ci.md").write_text(CURATED + f"CI calls the API with `Authorization: token {TOKEN}`.\n")
    said = cli_main("sync")
    assert said.returncode == 0, said.stderr
    # The token's own name, not its context's ("Authorization header"): the one warning says it.
    [warning] = said.stderr.splitlines()
    assert warning.endswith(f"{role / 'ci.md'}: line 7 held back, it looks like a secret (GitHub Token)")

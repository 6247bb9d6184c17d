"""Passwords and tokens the scanner let through (DESIGN I6): a password given in any phrasing (what it is
for, a colon or a dash, a short word, another language), on a curl or login line, in a URL with no user;
a token split by a space, over list items, table rows, the frontmatter and the body, or over two
`remember` calls with words around the halves; a password phrase and its value a line or a paragraph
apart. Prose about passwords still passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.base.paths import config_path
from memsync.secrets import scan_text
from memsync.secrets.files import scan_whole
from memsync.tracks.resolve import load_stores
from tests.support.helpers import cli_main, git

HALF, REST = "ghp_1234567890abcdefghij", "ABCDEFGHIJ123456"  # made up: together GitHub's shape
CURATED = "---\nname: CI\ndescription: how CI pushes\ntype: reference\n---\n\n"


@pytest.mark.parametrize(
    "text",
    [
        "password for the staging db: Tr0ub4dor3",
        "prod pw is Tr0ub4dor3",
        "the pass for root is Tr0ub4dor3x",
        "prod's passwd Tr0ub4dor3",
        "password for prod — Tr0ub4dor3",
        "ssh root@10.0.0.5 with password Tr0ub4dor3",
        "curl -u admin:Tr0ub4dor3x https://host/api",
        "redis://:Tr0ub4dor3x@cache:6379",
        "login admin / Tr0ub4dor3 on the prod box",
        "the vault passphrase: Tr0ub4dor3-horse",
        "le mot de passe est Tr0ub4dor3",
        "das Passwort ist Tr0ub4dor3",
        "la contraseña es Tr0ub4dor3",
        "a senha é Tr0ub4dor3",
        "パスワードは Tr0ub4dor3",
        "door pin: 4829Xk1q",
        f"{HALF} {REST}",
    ],
)
def test_a_password_or_token_in_any_phrasing_is_found(text: str) -> None:
    assert scan_text(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "tests pass with Node20LTS now",
        "pin actions/checkout@v4 in CI",
        "the password for prod is in the vault under its name",
        "password: see 1Password",
        "password: ${DB_PASSWORD}",
        "password reset for PROJ-1234 fixed",
        "Password policy: min 12 chars, mixed case required",
        "passwd -l root locks the account",
        "docker run -u 1000:1000 img",
        "read / write access for the admin role",
        "the ghp_ prefix marks GitHub tokens; rotate them in Settings",
    ],
)
def test_prose_about_passwords_and_tokens_passes(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"- token part one: {HALF}\n  - {REST} is the rest\n",
        f"| part | value |\n|---|---|\n| one | {HALF} |\n| two | {REST} |\n",
        "the password for prod is\n\nTr0ub4dor3zz\n",
        f"- the CI bot uses {HALF}\n\n{REST}\n",
    ],
)
def test_a_secret_split_over_a_curated_entry_is_found(text: str) -> None:
    assert scan_whole((CURATED + text).encode()) is not None


def test_a_token_split_between_the_frontmatter_and_the_body_is_found() -> None:
    text = f"---\nname: CI\ndescription: the CI bot uses {HALF}\ntype: reference\n---\n\nand {REST}\n"
    assert scan_whole(text.encode()) is not None


@settings(deadline=None)  # the first example imports the detectors
@given(
    st.integers(8, 30),
    st.sampled_from([" ", "\n", "\n- ", "\n\n", " | ", "\nand then "]),
)
def test_a_token_cut_anywhere_with_anything_between_is_found(cut: int, between: str) -> None:
    token = HALF + REST
    assert scan_text(f"the CI token {token[:cut]}{between}{token[cut:]} ends here") != []


@pytest.mark.parametrize(
    "first, second",
    [("the password for prod is", "Tr0ub4dor3zz"), (f"the token starts {HALF}", f"and ends {REST}")],
)
def test_a_secret_remembered_in_two_calls_with_words_is_refused(
    tmp_path: Path, first: str, second: str
) -> None:
    memory = tmp_path / "ada.jsonl"
    assert cli_main("remember", first, "--file", str(memory)).returncode == 0
    before = memory.read_bytes()
    refused = cli_main("remember", second, "--file", str(memory))
    assert refused.returncode == 1
    assert "completes what looks like a secret split over two entries" in refused.stderr
    assert memory.read_bytes() == before


def test_a_curated_entry_split_over_list_items_stays_on_this_machine(home: Path) -> None:
    assert cli_main("init").returncode == 0
    role = home / ".agents" / "memory" / "qa"
    role.mkdir(parents=True)
    (role / "ci.md").write_text(CURATED + f"- token part one: {HALF}\n  - {REST} is the rest\n")
    (role / "notes.md").write_text(CURATED + "- the password for prod is kept in the vault\n")
    assert cli_main("remember", "password for the staging db: Tr0ub4dor3").returncode == 1
    assert cli_main("sync").returncode == 0
    [store] = load_stores(config_path()).stores.values()
    committed = git(store.path, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "roles/qa/notes.md" in committed and "roles/qa/ci.md" not in committed
    status = json.loads(cli_main("status", "--json").stdout)
    held = [item["file"] for s in status["stores"].values() for item in s["held_back_secrets"]]
    assert held == [str(role / "ci.md")]

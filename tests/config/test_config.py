"""config.toml: load, validate, defaults, ``~`` expansion, edit_config keeping unrelated keys (issue 4)."""

from __future__ import annotations

import re
import socket
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.base.paths import config_path
from memsync.config.file import Config, Identity, Track, default_store_dir, edit_config, load_config
from memsync.errors import MemsyncError
from memsync.projects.identity import local_key
from memsync.projects.store_paths import default_store_path_for, legacy_store_paths_for
from memsync.tracks.resolve import load_tracks
from tests.support.helpers import git

FULL = """\
host = "laptop"
debounce_s = 2
max_delay_s = 20.5
pull_interval_s = 30.0
partial_line_grace_s = 60.0

[author]
name = "Ada"
email = "ada@example.org"

[stores.personal]
path = "~/stores/personal"
branch = "memory"

[stores.personal.remotes]
origin = "git@example.org:ada/memory.git"
laptop = "~/bare.git"

[[stores.personal.track]]
path = "~/.agents/memory/python-dev"

[[stores.personal.track]]
path = "~/notes/lessons.jsonl"
as = "memory/mine.jsonl"

[stores.team]
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_full_config_loads_with_expanded_paths(home: Path, tmp_path: Path) -> None:
    config = load_tracks(_write(tmp_path / "config.toml", FULL))
    assert config.host == "laptop"
    assert (config.debounce_s, config.max_delay_s, config.pull_interval_s, config.partial_line_grace_s) == (
        2.0,
        20.5,
        30.0,
        60.0,
    )
    assert (config.author_name, config.author_email) == ("Ada", "ada@example.org")
    assert list(config.stores) == ["personal", "team"]
    personal = config.stores["personal"]
    assert personal.path == home / "stores" / "personal"
    assert personal.branch == "memory"
    assert dict(personal.remotes) == {"origin": "git@example.org:ada/memory.git", "laptop": "~/bare.git"}
    assert personal.tracks == (
        Track(live=home / ".agents" / "memory" / "python-dev", store_path="roles/python-dev"),
        Track(live=home / "notes" / "lessons.jsonl", store_path="memory/mine.jsonl"),
    )
    team = config.stores["team"]
    assert (team.path, team.branch, dict(team.remotes), team.tracks) == (
        default_store_dir("team"),
        "main",
        {},
        (),
    )


def test_empty_config_is_valid_with_defaults(home: Path, tmp_path: Path) -> None:
    config = load_config(_write(tmp_path / "config.toml", ""))
    assert config == Config(path=tmp_path / "config.toml", host=socket.gethostname())
    assert (config.debounce_s, config.max_delay_s, config.pull_interval_s, config.partial_line_grace_s) == (
        1.0,
        10.0,
        10.0,
        300.0,
    )
    assert dict(config.stores) == {}


def test_config_path_and_store_dir_follow_env_and_xdg(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_path() == home / ".config" / "memsync" / "config.toml"
    assert default_store_dir("team") == home / ".local" / "share" / "memsync" / "stores" / "team"
    monkeypatch.setenv("MEMSYNC_CONFIG", "~/elsewhere.toml")
    assert config_path() == home / "elsewhere.toml"
    _write(home / "elsewhere.toml", 'host = "from-env"\n')
    assert load_config().host == "from-env"


def test_missing_file_says_run_init(tmp_path: Path) -> None:
    with pytest.raises(MemsyncError) as raised:
        load_config(tmp_path / "nope.toml")
    assert str(raised.value) == "no memsync store here yet: run `memsync init` (or `memsync up`)"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("debounce_s = 'soon'\n", "debounce_s"),
        ("max_delay_s = -1\n", "max_delay_s"),
        ("pull_interval_s = true\n", "pull_interval_s"),
        ("host = 3\n", "host"),
        ("author = 'ada'\n", "author"),
        ("[author]\nemail = ''\n", "author.email"),
        ("stores = 1\n", "stores"),
        ("[stores.'my store']\n", "stores.my store"),
        ("[stores.p]\nbranch = 'a..b'\n", "stores.p.branch"),
        ("[stores.p]\npath = 7\n", "stores.p.path"),
        ("[stores.p.remotes]\norigin = 5\n", "stores.p.remotes.origin"),
        ("[stores.p.remotes]\n'bad/name' = 'x'\n", "stores.p.remotes.bad/name"),
        ("[stores.p]\ntrack = 'x'\n", "stores.p.track"),
        ("[[stores.p.track]]\nas = 'roles/x'\n", "stores.p.track[0].path"),
        ("[[stores.p.track]]\npath = '/x'\nas = '../up'\n", "stores.p.track[0].as"),
        ("[[stores.p.track]]\npath = '/x'\nas = '/abs'\n", "stores.p.track[0].as"),
        ("[[stores.p.track]]\npath = '/x'\nas = '.git/hooks'\n", "stores.p.track[0].as"),
    ],
)
def test_invalid_values_name_the_key_and_the_file(tmp_path: Path, text: str, key: str) -> None:
    path = _write(tmp_path / "config.toml", text)
    with pytest.raises(MemsyncError) as caught:
        load_config(path)
    message = str(caught.value)
    assert f"`{key}`" in message
    assert str(path) in message
    assert "\n" not in message


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "config.toml", "host = \n")
    with pytest.raises(MemsyncError, match=r"invalid config .*config\.toml: not valid TOML"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "key", "table"),
    [
        ("future_knob = 1\n" + FULL, "future_knob", "at the top level"),
        (FULL.replace("[author]\n", '[author]\nnickname = "A"\n'), "author.nickname", "in table [author]"),
        (FULL + "colour = 'blue'\n", "stores.team.colour", "in table [stores.team]"),
        (
            FULL + "[[stores.team.track]]\npath = '/m.jsonl'\nalias = 'x'\n",
            "stores.team.track[0].alias",
            "in table [stores.team.track[0]]",
        ),
    ],
)
def test_an_unknown_key_in_any_table_is_an_error_naming_the_key_and_the_table(
    home: Path, tmp_path: Path, text: str, key: str, table: str
) -> None:
    path = _write(tmp_path / "config.toml", text)
    expected = f"invalid config {path}: `{key}` is not a known key {table}"
    with pytest.raises(MemsyncError, match=re.escape(expected)):
        load_config(path)

    def add_remote(raw: dict[str, Any]) -> None:
        raw["stores"]["team"]["remotes"] = {"origin": "/srv/team.git"}

    with pytest.raises(MemsyncError, match=re.escape(expected)):
        edit_config(path, add_remote)
    assert path.read_text() == text  # nothing written


def test_a_setting_written_under_the_remotes_table_is_refused_with_a_hint(home: Path, tmp_path: Path) -> None:
    """Appending `host = ...` to a config that ends in [stores.x.remotes] made a remote named host."""
    text = '[stores.personal.remotes]\norigin = "/srv/me.git"\nhost = "desk"\n'
    path = _write(tmp_path / "config.toml", text)
    with pytest.raises(MemsyncError, match=r"stores\.personal\.remotes\.host` = 'desk'.*go before the first"):
        load_config(path)


def test_an_edit_that_would_make_the_config_invalid_names_the_key_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "config.toml"

    def bad(raw: dict[str, Any]) -> None:
        raw["colour"] = "blue"

    with pytest.raises(MemsyncError) as caught:
        edit_config(path, bad)
    message = str(caught.value)
    assert message.startswith("cannot change the config: `colour` is not a known key at the top level")
    assert str(path) not in message and not path.exists()


def test_edit_config_creates_the_file_and_refuses_invalid_results(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"

    def init(raw: dict[str, Any]) -> None:
        raw["host"] = "desk"
        raw.setdefault("stores", {})["personal"] = {"remotes": {"origin": "/srv/me.git"}}

    config = edit_config(path, init)
    assert config.host == "desk" and config.stores["personal"].path == default_store_dir("personal")
    before = path.read_bytes()

    def break_it(raw: dict[str, Any]) -> None:
        raw["debounce_s"] = 0

    with pytest.raises(MemsyncError, match="`debounce_s`"):
        edit_config(path, break_it)
    assert path.read_bytes() == before


def test_identity_prefers_config_then_git_then_host(home: Path, tmp_path: Path) -> None:
    text = "host = 'h1'\n[author]\nname = 'Ada'\nemail = 'a@x'\n"
    configured = load_config(_write(tmp_path / "a.toml", text))
    assert configured.identity() == Identity("Ada", "a@x")
    from_git = load_config(_write(tmp_path / "b.toml", "host = 'h1'\n"))
    assert from_git.identity() == Identity("Test User", "test@example.invalid")
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    assert from_git.identity() == Identity("h1", "memsync@h1")


def test_default_store_paths(home: Path, tmp_path: Path) -> None:
    assert default_store_path_for(home / ".agents" / "memory" / "qa") == "roles/qa"
    assert default_store_path_for(Path("~/.agents/memory/qa")) == "roles/qa"
    assert default_store_path_for(home / ".agents" / "memory") == "roles"
    assert default_store_path_for(home / "x" / "lessons.jsonl") == "memory/lessons.jsonl"
    assert default_store_path_for(home / ".claude" / "memory") == "claude/memory"
    assert default_store_path_for(home / ".agent-memory") == "memory"
    assert default_store_path_for(Path("/opt/notes")) == "paths/notes"

    plain = tmp_path / "plain-project"
    (plain / ".agents" / "memory" / "dev").mkdir(parents=True)
    # Without a remote, a project is this machine's own: its old shared key is not folded in.
    here = local_key(plain)
    assert default_store_path_for(plain / ".agents" / "memory" / "dev") == f"projects/{here}/dev"

    cloned = tmp_path / "checkout-dir"
    cloned.mkdir()
    git(cloned, "init", "-q")
    git(cloned, "remote", "add", "origin", "git@github.com:acme/shop.git")
    # The project's identity (its remote's normalised URL) keys it; the old key is folded in (legacy).
    assert default_store_path_for(cloned / ".agents" / "memory" / "qa") == "projects/github.com~acme~shop/qa"
    assert legacy_store_paths_for(cloned / ".agents" / "memory" / "qa") == ("projects/shop/qa",)
    assert legacy_store_paths_for(plain / ".agents" / "memory" / "dev") == ()


_TOML_SCALARS = st.one_of(
    st.text(max_size=20),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
    lambda key: (
        key
        not in {
            "host",
            "author",
            "stores",
            "path",
            "branch",
            "remotes",
            "track",
            "debounce_s",
            "max_delay_s",
            "pull_interval_s",
            "partial_line_grace_s",
        }
    )
)


@settings(max_examples=40, deadline=None)
@given(
    top=st.dictionaries(_KEYS, _TOML_SCALARS, max_size=2),
    in_store=st.dictionaries(_KEYS, st.lists(st.text(max_size=10), max_size=3), max_size=2),
)
def test_any_unknown_key_is_refused_naming_it_and_the_file_is_left_as_it_was(
    top: dict[str, Any], in_store: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "config.toml"
        text = tomli_w.dumps({**top, "stores": {"p": {"path": "/s", **in_store}}})
        path.write_text(text)
        unknown = [*top, *(f"stores.p.{key}" for key in in_store)]

        def add_remote(raw: dict[str, Any]) -> None:
            raw["stores"]["p"]["remotes"] = {"origin": "/srv/p.git"}

        if not unknown:
            edit_config(path, add_remote)
            assert tomllib.loads(path.read_text())["stores"]["p"]["remotes"] == {"origin": "/srv/p.git"}
            return
        for attempt in (lambda: load_config(path), lambda: edit_config(path, add_remote)):
            with pytest.raises(MemsyncError) as caught:
                attempt()
            assert f"`{unknown[0]}` is not a known key" in str(caught.value)
        assert path.read_text() == text

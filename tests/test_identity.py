"""A project's identity: one key for every spelling of its git remote, else its folder's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.identity import identity_name, normalise_remote_url, project_identity, project_key
from tests.helpers import git

SHOP = [
    "git@github.com:org/shop.git",
    "https://github.com/org/shop",
    "ssh://git@github.com/org/shop",
    "ssh://git@github.com:22/org/shop.git/",
    "https://ada:secret@GitHub.com/Org/Shop.git",
    "git+ssh://git@github.com/org/shop.git",
    "https://github.com/org/shop/?tab=readme#top",
    "github.com:org/shop",
]


@pytest.mark.parametrize("url", SHOP)
def test_every_spelling_of_one_remote_is_one_project(url: str) -> None:
    assert normalise_remote_url(url) == "github.com/org/shop"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://gitlab.example.org/group/sub/shop.git", "gitlab.example.org/group/sub/shop"),
        ("ssh://git@[::1]:2222/org/shop", "::1/org/shop"),
        ("git@gitlab.com:org/other.git", "gitlab.com/org/other"),
    ],
)
def test_other_hosts_keep_their_whole_path(url: str, expected: str) -> None:
    assert normalise_remote_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "/srv/git/shop.git",
        "./shop",
        "file:///srv/git/shop.git",
        "C:\\repos\\shop",
        "https://host/",
    ],
)
def test_local_paths_and_hostless_urls_name_no_host(url: str) -> None:
    assert normalise_remote_url(url) is None


def test_the_store_path_component_cannot_nest_or_hide() -> None:
    assert identity_name("gitlab.com/group/sub/shop") == "gitlab.com~group~sub~shop"
    assert identity_name("gitlab.com/group/sub") == "gitlab.com~group~sub"  # a sibling, not a parent
    assert identity_name(".git") == "git"
    assert identity_name("My Shop (old)") == "my-shop-old-"
    assert identity_name("") == "project"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_url_gives_a_safe_name_or_none(url: str) -> None:
    normalised = normalise_remote_url(url)
    name = identity_name(normalised if normalised is not None else url)
    assert name and "/" not in name and not name.startswith(".")
    assert set(name) <= set("abcdefghijklmnopqrstuvwxyz0123456789._~-")


def _repo(path: Path, **remotes: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for name, url in remotes.items():
        git(path, "remote", "add", name, url)
    return path


def test_two_checkouts_with_different_spellings_share_one_key(tmp_path: Path) -> None:
    ada = _repo(tmp_path / "home/ada/src/shop", origin="git@github.com:org/shop.git")
    mac = _repo(tmp_path / "Users/ada/code/shop-main", origin="https://github.com/org/shop")
    assert project_key(ada) == project_key(mac) == "github.com~org~shop"


def test_origin_wins_then_the_first_remote_with_a_host_then_the_folder(tmp_path: Path) -> None:
    both = _repo(tmp_path / "both", upstream="https://github.com/up/shop", origin="git@github.com:me/shop")
    assert project_identity(both) == "github.com/me/shop"
    fork = _repo(tmp_path / "fork", local="/srv/git/shop.git", upstream="https://github.com/up/shop")
    assert project_identity(fork) == "github.com/up/shop"
    alone = _repo(tmp_path / "alone-dir")
    assert project_identity(alone) == "alone-dir"
    assert project_identity(tmp_path / "not-a-repo") == "not-a-repo"


def test_an_enclosing_repository_is_not_the_project(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer", origin="git@github.com:org/outer.git")
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    assert project_identity(inner) == "lib"

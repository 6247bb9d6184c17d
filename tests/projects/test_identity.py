"""A project's identity: one key for every spelling of its git remote and none for two remotes; no
password ever in it; a project without a remote keyed on this machine alone unless the user names it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.base.paths import config_path
from memsync.base.remote_url import is_local_path
from memsync.projects.identity import (
    identity_name,
    legacy_keys,
    local_key,
    normalise_remote_url,
    project_identity,
    project_key,
)
from tests.support.helpers import git

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
        ("ssh://git@[::1]:2222/org/shop", "[::1]:2222/org/shop"),
        ("ssh://git@[::1]/org/shop", "::1/org/shop"),
        ("git@gitlab.com:Org/Other.git", "gitlab.com/org/other"),
        ("https://Bitbucket.org/Org/Shop", "bitbucket.org/org/shop"),
        ("https://Git.Example.org/Org/Shop.git", "git.example.org/Org/Shop"),
        ("ssh://git@git.example.org:2222/org/shop", "git.example.org:2222/org/shop"),
        ("https://git.example.org:443/org/shop", "git.example.org/org/shop"),
        ("https://git.example.org:8443/org/shop", "git.example.org:8443/org/shop"),
    ],
)
def test_other_hosts_keep_their_whole_path_port_and_case(url: str, expected: str) -> None:
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
    assert project_identity(alone) is None and project_key(alone) == local_key(alone)
    assert project_identity(tmp_path / "not-a-repo") is None


def test_an_enclosing_repository_is_not_the_project(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer", origin="git@github.com:org/outer.git")
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    assert project_identity(inner) is None and project_key(inner) == local_key(inner)


@pytest.mark.parametrize(
    "url",
    [
        "https://user:AbC+GhI=jKl9@host.example/org/repo",
        "https://user:AbC@GhI=jKl9@host.example:443/org/repo.git",
        "ssh://user:AbC:Gh@I=jKl9@host.example/org/repo",
        "user:AbC/dEf+GhI=jKl9@host.example:org/repo",
        "user:AbC@dEf:GhI@host.example:org/repo.git",
        "persistent-https::https://user:AbC;dEf@host.example/org/repo",
        "https://host.example/org/repo.git;password=Hunter2Secret",
        "https://host.example/org/repo?password=Hunter2Secret#Hunter2Secret",
    ],
)
def test_a_password_never_reaches_the_identity(url: str) -> None:
    assert normalise_remote_url(url) == "host.example/org/repo"


@pytest.mark.parametrize(
    "url",
    [
        # git ends the authority at the first `/`, `?` or `#`: these name the host `user`, with a port
        # that is no number, so no host at all.
        "https://user:AbC/dEf+GhI=jKl9@host.example/org/repo",
        "ssh://user:AbC/dEf:Gh@I=jKl9@host.example/org/repo",
        "https://user:p?a#s@host.example/org/repo",
    ],
)
def test_a_url_git_cannot_parse_names_no_host(url: str) -> None:
    assert normalise_remote_url(url) is None


def test_an_at_sign_in_the_path_is_no_userinfo() -> None:
    assert normalise_remote_url("https://a.example/x@corp/repo") == "a.example/x@corp/repo"
    assert normalise_remote_url("https://b.example/y@corp/repo") == "b.example/y@corp/repo"
    # git reads a backslash literally: `host\` is the user name, the host is SECRET.
    assert normalise_remote_url("https://host\\@SECRET/x") == "secret/x"


# What git reads as userinfo: any printable byte but those that end the authority.
_USERINFO = st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#"), min_size=1, max_size=30
)
_TAIL = st.tuples(st.sampled_from(";?#"), st.text(st.characters(min_codepoint=33, max_codepoint=126)))
_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=10)
_SEGMENT = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=12
)


@settings(max_examples=300, deadline=None)
@given(
    scheme=st.sampled_from(["https://", "http://", "ssh://", "git://", "git+ssh://", "ftp://", "scp"]),
    userinfo=_USERINFO,
    host=st.lists(_LABEL, min_size=1, max_size=3).map(".".join),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    path=st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
    tail=st.one_of(st.just(("", "")), _TAIL),
)
def test_no_userinfo_byte_reaches_a_store_path(
    scheme: str, userinfo: str, host: str, port: int | None, path: str, tail: tuple[str, str]
) -> None:
    """Whatever a user name and password hold (``:``, ``@``, ``;``...), the identity is the host, port
    and path alone: nothing of the userinfo, of ``;params``, query or fragment reaches a store path."""
    path_tail = path + "".join(tail)
    if scheme == "scp":
        url = f"{userinfo}@{host}:{path_tail}"
        # A slash before the first colon (git reads a local path) or a drive letter: no identity.
        if is_local_path(url) or url[1:2] == ":":
            assert normalise_remote_url(url) in (None, f"{host}/{path}")
            return
        port = None
    else:
        url = f"{scheme}{userinfo}@{host}{'' if port is None else f':{port}'}/{path_tail}"
    normalised = normalise_remote_url(url)
    defaults = {"https://": 443, "http://": 80, "ssh://": 22, "git+ssh://": 22, "git://": 9418}
    authority = host if port is None or defaults.get(scheme) == port else f"{host}:{port}"
    assert normalised == f"{authority}/{path.removesuffix('.git')}"


def test_remotes_differing_in_port_or_case_are_two_projects(tmp_path: Path) -> None:
    one = _repo(tmp_path / "a/shop", origin="ssh://git@git.example.org:2222/org/shop.git")
    two = _repo(tmp_path / "b/shop", origin="ssh://git@git.example.org:2223/org/shop.git")
    upper = _repo(tmp_path / "c/shop", origin="https://git.example.org/Org/Shop")
    lower = _repo(tmp_path / "d/shop", origin="git@git.example.org:org/shop.git")
    keys = [project_key(project) for project in (one, two, upper, lower)]
    assert len(set(keys)) == 4
    assert keys[0] == "git.example.org-2222~org~shop" and keys[3] == "git.example.org~org~shop"
    # Keys earlier versions gave them: port dropped and letters lowered; folded into the new ones.
    assert legacy_keys(one) == legacy_keys(upper) == ("git.example.org~org~shop",)
    assert legacy_keys(lower) == ()
    hub = _repo(tmp_path / "e/shop", origin="https://github.com/Org/Shop")
    assert project_key(hub) == "github.com~org~shop" and legacy_keys(hub) == ()


def test_projects_without_a_remote_meet_only_by_a_named_alias(tmp_path: Path, home: Path) -> None:
    config = config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('host = "laptop-a"\n')
    shop = _repo(tmp_path / "src/shop")
    assert project_key(shop).startswith("shop@laptop-a-") and legacy_keys(shop) == ()
    other = _repo(tmp_path / "elsewhere/shop")  # another folder of that name here: another project
    assert project_key(other).startswith("shop@laptop-a-") and project_key(other) != project_key(shop)
    config.write_text(f'host = "laptop-b"\n[projects]\n"{shop}" = "acme/shop"\n')
    assert project_identity(shop) == "acme/shop" and project_key(shop) == "acme~shop"
    assert legacy_keys(shop) == (local_key(shop),) and local_key(shop).startswith("shop@laptop-b-")


def test_an_at_sign_in_an_scp_path_is_the_paths_not_the_userinfos() -> None:
    """scp-like ``[userinfo@]host:path``: the host follows the last ``@`` that a host and a colon follow."""
    assert normalise_remote_url("git@example.com:org/a@b.git") == "example.com/org/a@b"
    assert normalise_remote_url("u:p@ss@example.com:org/shop;@") == "example.com/org/shop"
    assert normalise_remote_url("0@0:0;@") == "0/0"

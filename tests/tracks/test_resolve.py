"""memsync.tracks.resolve: a store's tracks resolved from the config as read (store paths, overlaps, Claude
Code's project folders), while ``load_config`` reads the file alone and runs no git."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from memsync.config.file import TrackEntry, load_config
from memsync.errors import MemsyncError
from memsync.hosts.claude_code import sanitize
from memsync.tracks.resolve import load_tracks
from tests.support.claude_fixtures import checkout, claude_folder


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "[[stores.p.track]]\npath = '/a'\nas = 'roles'\n"
            "[[stores.p.track]]\npath = '/b'\nas = 'roles/b'\n",
            "stores.p.track[1].as",
        ),
        (
            "[[stores.p.track]]\npath = '/a'\nas = 'x'\n[[stores.p.track]]\npath = '/a/b'\nas = 'y'\n",
            "stores.p.track[1].path",
        ),
        ("[stores.p]\npath = '/s'\n[[stores.p.track]]\npath = '/s/inside'\n", "stores.p.track[0].path"),
    ],
)
def test_overlapping_tracks_name_the_key_and_the_file(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(MemsyncError) as caught:
        load_tracks(path)
    message = str(caught.value)
    assert f"`{key}`" in message
    assert str(path) in message
    assert "\n" not in message


def _git_that_logs(bin_dir: Path, log: Path) -> None:
    """A ``git`` first on PATH that notes each start in ``log``, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_load_config_runs_no_git_while_the_tracks_it_names_need_git(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = checkout(tmp_path / "src" / "shop", "git@github.com:org/shop.git")
    claude_folder(home, shop)
    (shop / ".agents" / "memory" / "qa").mkdir(parents=True)
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f'[stores.personal]\npath = "{tmp_path / "store"}"\n'
        '[[stores.personal.track]]\npath = "~/.claude/projects"\n'
        f'[[stores.personal.track]]\npath = "{shop}/.agents/memory/qa"\nexclude = ["old"]\n'
    )
    log = tmp_path / "git.log"
    _git_that_logs(tmp_path / "bin", log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    store = load_config(config_file).stores["personal"]

    assert not log.exists()  # no git started: not for the checkout, not for the projects folder
    qa = shop / ".agents" / "memory" / "qa"
    assert store.entries == (
        TrackEntry(home / ".claude" / "projects"),
        TrackEntry(qa, None, (qa / "old",)),
    )
    assert (store.tracks, store.host_roots) == ((), ())

    resolved = load_tracks(config_file).stores["personal"]

    assert log.read_text()  # the store paths are the projects' identities, read from their git config
    root = home / ".claude" / "projects"
    assert {track.store_path: track.live for track in resolved.tracks} == {
        "claude/projects/github.com~org~shop": root / sanitize(str(shop)) / "memory",
        "projects/github.com~org~shop/qa": qa,
    }
    assert [(r.live, r.prefix) for r in resolved.host_roots] == [(root, "claude/projects")]

"""config.example.toml: every key, and it loads and validates through load_config (issue 5)."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from memsync.config.file import Config
from memsync.tracks.resolve import load_tracks
from tests.support.helpers import REPO_ROOT

EXAMPLE = REPO_ROOT / "config.example.toml"


def test_example_loads_without_warnings(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        config = load_tracks(EXAMPLE)
    assert caplog.records == []  # no unknown key
    assert list(config.stores) == ["personal", "team"]
    assert [t.store_path for t in config.stores["personal"].tracks] == [
        "roles/python-dev",
        "memory/lessons.jsonl",
        "claude/memory",
    ]
    assert config.stores["team"].tracks[0].store_path == "projects/shop/qa-engineer"


def test_example_states_the_real_defaults() -> None:
    """The example's durations are the defaults it documents, so copying it changes nothing by accident."""
    config = load_tracks(EXAMPLE)
    defaults = {f.name: f.default for f in dataclasses.fields(Config) if f.name.endswith("_s")}
    assert defaults and {name: getattr(config, name) for name in defaults} == defaults
    text = EXAMPLE.read_text()
    for key in (*defaults, "host", "[author]", "name", "email", "path", "branch", "remotes", "track", "as"):
        assert f"{key}" in text

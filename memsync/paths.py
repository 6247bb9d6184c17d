"""Where memsync's config file is, without importing the config machinery (the agent-host hooks ask it on
every turn and must return at once)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["config_path"]


def config_path() -> Path:
    """Where the config lives: ``$MEMSYNC_CONFIG`` if set, else ``<user config dir>/memsync/config.toml``."""
    override = os.environ.get("MEMSYNC_CONFIG")
    if override:
        return Path(override).expanduser()
    return platformdirs.user_config_path("memsync") / "config.toml"

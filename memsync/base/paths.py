"""Where things are: memsync's config file (without importing the config machinery: the agent-host hooks
ask it on every turn and must return at once), and the layout of a store on disk (DESIGN "Layers":
store)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["STATE_DB", "STATUS_FILE", "StoreLayout", "config_path", "state_dir"]

# The files of a store's meta dir, spelled here only.
STATE_DB = "state.sqlite"
STATUS_FILE = "status.json"


def config_path() -> Path:
    """Where the config lives: ``$MEMSYNC_CONFIG`` if set, else ``<user config dir>/memsync/config.toml``."""
    override = os.environ.get("MEMSYNC_CONFIG")
    if override:
        return Path(override).expanduser()
    return platformdirs.user_config_path("memsync") / "config.toml"


def state_dir() -> Path:
    """memsync's per-user state directory (``$XDG_STATE_HOME/memsync``): daemon locks and pid files, writer
    locks, the recall index, the installs record, the crash log."""
    return platformdirs.user_state_path("memsync")


@dataclass(frozen=True)
class StoreLayout:
    """The files of the store whose working tree is ``worktree``: its git dir, memsync's meta dir in it
    (state, status, locks; never part of history), the sync state database and the status file."""

    worktree: Path

    @property
    def git_dir(self) -> Path:
        """The store's git directory (``<worktree>/.git``)."""
        return self.worktree / ".git"

    @property
    def meta_dir(self) -> Path:
        """memsync's own directory inside the git dir (``<worktree>/.git/memsync``)."""
        return self.git_dir / "memsync"

    @property
    def state_db(self) -> Path:
        """The sync state database (``<meta dir>/state.sqlite``)."""
        return self.meta_dir / STATE_DB

    @property
    def status_file(self) -> Path:
        """The last cycle's facts, for `memsync status` (``<meta dir>/status.json``)."""
        return self.meta_dir / STATUS_FILE

    @property
    def exists(self) -> bool:
        """True when a repository is there: the git dir is a directory (memsync's or not)."""
        return self.git_dir.is_dir()

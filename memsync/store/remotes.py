"""Remote-head bookkeeping: the last head memsync integrated from or pushed to each remote (how a history
rewritten under memsync is told from one that only moved on: DESIGN "Hostile input"), and where a local
remote lives (its refs are watched, so a peer's push is seen at once)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from memsync.base.fsio import atomic_write
from memsync.store.repo import StoreGit

_STATE_FILE = "remotes.json"


def local_remote_path(url: str) -> Path | None:
    """The directory of a remote whose URL is a local path or ``file://`` URL, else None (ssh, https).

    Used to watch a local remote's refs so a peer's push is seen at once. Never raises.
    """
    if url.startswith("file://"):
        return Path(unquote(urlparse(url).path))
    if "://" in url or re.match(r"^[^/]+:", url):
        return None
    return Path(url).expanduser()


def _state(g: StoreGit) -> dict[str, Any]:
    try:
        data = json.loads((g.meta_dir / _STATE_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def seen(g: StoreGit, remote: str) -> str | None:
    """The last head of ``remote`` memsync integrated or pushed, None when none is recorded for its
    current URL and branch."""
    entry = _state(g).get(remote)
    if (
        not isinstance(entry, dict)
        or entry.get("url") != g.cfg.remotes[remote]
        or entry.get("branch") != g.cfg.branch
    ):
        return None
    head = entry.get("seen")
    return head if isinstance(head, str) else None


def set_seen(g: StoreGit, remote: str, head: str | None) -> None:
    """Record ``head`` as the last remote head memsync integrated or pushed (None: forget it, so the next
    exchange trusts whatever the remote holds)."""
    state = _state(g)
    state[remote] = {"url": g.cfg.remotes[remote], "branch": g.cfg.branch, "seen": head}
    atomic_write(g.meta_dir / _STATE_FILE, json.dumps(state, indent=1, sort_keys=True).encode())

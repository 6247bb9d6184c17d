"""The MCP server's resources: tracked memory, readable as ``memsync://<store>/<store path>``.

URI scheme (the same on every machine, since store paths are):

- ``memsync://personal/memory/ada.jsonl``: a tracked memory file; reads as its view, one entry per
  line as canonical JSON (``application/x-ndjson``): no tombstoned, superseded or expired entry.
- ``memsync://personal/roles/python-dev``: a tracked role directory; reads as its snapshot text
  (``text/markdown``: index, curated entries, the latest daily logs; what ``memsync prompt`` prints).
- ``memsync://personal/roles/python-dev/daily/2026-11-30.md``: one file of a tracked role directory,
  as it is (``text/markdown``).

Only tracked paths of this machine are served, never a path outside them: ``..`` segments, symlinks
out of the tracked directory, ``.git`` and the files memsync ignores (``snapshot.md``, editor temp files)
are refused (DESIGN I8: peer content is data, never a path elsewhere).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit

from memsync.base.layout import IGNORED_DIRS, is_ignored
from memsync.config.file import Config
from memsync.errors import MemsyncError
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.markdown.roledir import role_prompt
from memsync.tracks.tracked import Tracked, tracked_memory

SCHEME = "memsync"
URI_TEMPLATE = f"{SCHEME}://{{store}}/{{+path}}"
JSONL_MIME = "application/x-ndjson"
MARKDOWN_MIME = "text/markdown"


class UnknownResource(MemsyncError):
    """A URI that names no tracked memory here."""


@dataclass(frozen=True)
class Listing:
    """One resource as listed: its ``uri``, ``name``, ``description`` and ``mime_type``."""

    uri: str
    name: str
    description: str
    mime_type: str


def uri_of(item: Tracked) -> str:
    """The URI of a tracked memory file or role directory (``item.store`` must be set)."""
    return f"{SCHEME}://{item.store}/{quote(item.store_path.strip('/'))}"


def listings(config: Config | None) -> list[Listing]:
    """One listing per tracked memory file and role directory (untracked memory is not a resource)."""
    found = []
    for item in tracked_memory(config):
        if item.store is None:
            continue
        if item.format == "jsonl":
            description = f"memory file {item.live}: its live entries, one JSON object per line"
            mime = JSONL_MIME
        else:
            description = f"role directory {item.live}: index, curated entries and latest daily logs"
            mime = MARKDOWN_MIME
        found.append(Listing(uri_of(item), f"{item.store}:{item.store_path}", description, mime))
    return found


def _parse(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    path = unquote(parts.path).strip("/")
    if parts.scheme != SCHEME or not parts.netloc or not path or parts.query or parts.fragment:
        raise UnknownResource(f"read {uri}: not a memsync URI. Use {URI_TEMPLATE}, as resources/list gives")
    segments = PurePosixPath(path).parts
    if "\0" in path or any(s in ("..", ".") for s in segments) or any(s in IGNORED_DIRS for s in segments):
        raise UnknownResource(f"read {uri}: the path is not a plain store path. Use one resources/list gives")
    return unquote(parts.netloc), path


def read(config: Config | None, uri: str) -> tuple[str, str]:
    """The text and MIME type of the resource at ``uri`` (see the module doc). Raises UnknownResource
    when it names no tracked memory here, MemsyncError when the file cannot be read."""
    store, path = _parse(uri)
    items = [item for item in tracked_memory(config) if item.store == store]
    for item in items:
        if item.store_path.strip("/") == path:
            if item.format == "jsonl":
                view = read_memory(item.live).view(datetime.now(UTC))
                return "".join(canonical_json(e.to_obj()).decode() + "\n" for e in view), JSONL_MIME
            return role_prompt(item.live), MARKDOWN_MIME
    for item in items:
        prefix = item.store_path.strip("/") + "/"
        if item.format == "role" and path.startswith(prefix):
            return _role_file(uri, item.live, path[len(prefix) :]), MARKDOWN_MIME
    raise UnknownResource(f"read {uri}: no tracked memory file or role directory there. See resources/list")


def _role_file(uri: str, root: Path, rel: str) -> str:
    """The text of the file ``rel`` of the role directory ``root`` (bad UTF-8 replaced)."""
    file = root / rel
    real_root = Path(os.path.realpath(root))
    if is_ignored(rel) or not Path(os.path.realpath(file)).is_relative_to(real_root) or not file.is_file():
        raise UnknownResource(f"read {uri}: no such file in {root}. See resources/list")
    try:
        return file.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise MemsyncError(f"read {uri}: {exc.strerror or exc}. Check {file}") from None

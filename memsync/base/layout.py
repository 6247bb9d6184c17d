"""What a path in a role directory or store is: which merge driver owns it, whether it is append-only,
whether memsync ignores it (DESIGN "Vocabulary", "One sync cycle" step 1, "Merge drivers")."""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath
from typing import Literal

from memsync.base.fsio import TEMP_PREFIX

Kind = Literal["jsonl", "daily", "index", "entry", "appended"]
# The hosts' append-mostly memory files (Gemini CLI's, Qwen Code's), merged by the appended driver.
APPENDED_NAMES = ("GEMINI.md", "QWEN.md")

# [0-9] and \Z, not \d and $: the gitattributes pattern for the daily driver must match exactly this.
DAILY_LOG = re.compile(r"(?:^|/)daily/[0-9]{4}-[0-9]{2}-[0-9]{2}\.md\Z")

# Editor swap/backup/probe files, emacs locks, our own temp files, the locally generated snapshot.
IGNORED_NAMES = (
    "*.swp",
    "*.swo",
    "*.swx",
    "*.swpx",
    "*~",
    ".#*",
    "#*#",
    "*.tmp",
    "4913",
    f"{TEMP_PREFIX}*",
    "snapshot.md",
    ".DS_Store",
)
IGNORED_DIRS = (".git",)
# memsync's own files in a store (format version, purge records): no track maps them (config refuses a
# store path through it), so they are never delivered, and `status` does not list them as unmapped.
STORE_META_DIR = ".memsync"
# The trailer naming the machine in every commit memsync makes in a store: ``Memsync-Host: <host>``.
HOST_TRAILER = "Memsync-Host"
# A host name is one trailer value and one line of `status`: bounded, without control characters (a line
# break in it would forge a second trailer and credit another machine).
HOST_MAX = 64


def host_problem(host: str) -> str | None:
    """Why ``host`` cannot name a machine in commits (too long, or a control character), else None."""
    if len(host) > HOST_MAX:
        return f"is {len(host)} characters long (at most {HOST_MAX})"
    if not host.isprintable():
        return "holds a control character (a line break, a tab, ...)"
    return None


def trailer_host(host: str) -> str:
    """``host`` as a trailer value: one line, whatever the config held (its checks refuse such a name;
    this keeps a commit's trailers honest even so)."""
    return "".join(ch if ch.isprintable() else "?" for ch in host)[:HOST_MAX]


def kind_of(rel_path: str) -> Kind:
    """The merge driver kind of a store-relative POSIX path: jsonl, daily, index (MEMORY.md), appended
    (``APPENDED_NAMES``) or entry."""
    name = PurePosixPath(rel_path).name
    if name.endswith(".jsonl"):
        return "jsonl"
    if DAILY_LOG.search(rel_path):
        return "daily"
    if name == "MEMORY.md":
        return "index"
    if name in APPENDED_NAMES:
        return "appended"
    return "entry"


def is_append_only(rel_path: str) -> bool:
    """True for memory files and daily logs: writers only ever append to them (DESIGN "Vocabulary")."""
    return kind_of(rel_path) in ("jsonl", "daily")


def is_ignored(rel_path: str) -> bool:
    """True for paths memsync never publishes or watches: editor temp files, ``snapshot.md``, ``.git``."""
    parts = PurePosixPath(rel_path).parts
    if any(part in IGNORED_DIRS for part in parts):
        return True
    return bool(parts) and any(fnmatch.fnmatchcase(parts[-1], pattern) for pattern in IGNORED_NAMES)


def is_store_meta(rel_path: str) -> bool:
    """True for a store path under :data:`STORE_META_DIR` (memsync's own files, not memory)."""
    parts = PurePosixPath(rel_path).parts
    return bool(parts) and parts[0] == STORE_META_DIR


ASIDE_MARK = "conflict-file"
_ASIDE = re.compile(rf"\.{ASIDE_MARK}(?:-[0-9]+)?(?:\.[^./]*)?\Z")


def aside_name(rel_path: str, attempt: int = 1) -> str:
    """Where a merge puts the file ``rel_path`` when the other side made a directory of that name (DESIGN
    I1, I4): a sibling both peers derive alike, ``notes.md`` -> ``notes.conflict-file.md``, then
    ``notes.conflict-file-2.md`` for ``attempt`` 2 when the first is taken, and so on.

    The name is always a whole file (kind "entry", ``x.jsonl`` -> ``x.jsonl.conflict-file``): a note for
    the user, who can delete it once settled (an append-only file would be restored) and which no
    ignore pattern hides for a name memsync stores. Pure; ``attempt`` >= 1.
    """
    path = PurePosixPath(rel_path)
    mark = ASIDE_MARK if attempt == 1 else f"{ASIDE_MARK}-{attempt}"
    candidate = path.with_name(f"{path.stem}.{mark}{path.suffix}").as_posix()
    if kind_of(candidate) != "entry" or is_ignored(candidate):
        candidate = path.with_name(f"{path.name}.{mark}").as_posix()
    return candidate


def is_aside(rel_path: str) -> bool:
    """True for a name ``aside_name`` gives: a file a merge moved out of a directory's way."""
    return bool(_ASIDE.search(PurePosixPath(rel_path).name))

"""The registration of memsync's merge drivers in a store's git dir (DESIGN "Merge drivers", "Git facts":
a driver is configured in ``.git/config``, never cloned, and registered on every start; invariant I8).
"""

from __future__ import annotations

import json
import os
import shlex
import site
import sys
from pathlib import Path

import memsync
from memsync.base import git
from memsync.base.layout import APPENDED_NAMES
from memsync.merge.kinds import KINDS

_ATTRIBUTES_BEGIN = "# memsync merge drivers: begin (managed by memsync, rewritten on every start)"
_ATTRIBUTES_END = "# memsync merge drivers: end"
# Later lines win in gitattributes; the order mirrors memsync.base.layout.kind_of's precedence (jsonl first).
# info/attributes outranks in-tree .gitattributes, so a peer cannot reassign drivers or make git
# rewrite content on checkout (eol/ident/encoding conversions, filters): DESIGN I8.
_ATTRIBUTES = (
    "* -text -ident -filter -working-tree-encoding",
    "* merge=memsync-entry",
    "**/daily/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md merge=memsync-daily",
    "MEMORY.md merge=memsync-index",
    *(f"{name} merge=memsync-appended" for name in APPENDED_NAMES),
    "*.jsonl merge=memsync-jsonl",
)


def driver_import_paths() -> list[str]:
    """The directories the driver's interpreter, started without ``site``, imports from: the one holding
    this ``memsync`` package (site-packages for a wheel, the source tree for an editable install) first,
    then the site-packages ``site`` would add (for a third-party module a rare path imports)."""
    paths = [os.path.dirname(os.path.dirname(os.path.abspath(memsync.__file__))), *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        paths.append(site.getusersitepackages())
    return list(dict.fromkeys(path for path in paths if os.path.isdir(path)))


def driver_command(kind: str) -> str:
    """The shell command registered for driver ``kind``: the absolute interpreter running memsync now,
    with ``-S`` and the import paths of :func:`driver_import_paths` instead of ``site`` (which costs
    about as much as the rest of a bare start, more with an editable install's import hook), and ``-P``
    so that git's cwd, the store's working tree, is never on ``sys.path`` (peer content is data, I8)."""
    code = (
        f"import sys; sys.path += {json.dumps(driver_import_paths())}; "  # a JSON list is a Python one
        "from memsync.merge.driver import main; sys.exit(main())"
    )
    return f"{shlex.quote(sys.executable)} -S -P -c {shlex.quote(code)} {kind} %O %A %B %P"


def install_merge_drivers(git_dir: Path) -> None:
    """Register memsync's merge drivers in the repository whose git dir is ``git_dir``.

    Writes ``merge.memsync-KIND.name`` and ``.driver`` into ``<git_dir>/config`` (via ``git config
    --file``; the absolute interpreter path, quoted) and a managed block in ``<git_dir>/info/attributes``
    that gives every path a memsync driver (``*`` entry, ``**/daily/YYYY-MM-DD.md`` daily, ``MEMORY.md``
    index, ``GEMINI.md`` and ``QWEN.md`` appended, ``*.jsonl`` jsonl — the same kinds as
    :func:`memsync.base.layout.kind_of`). Peers cannot change either file (DESIGN I8). Idempotent; lines
    outside the managed block are kept. Raises ``memsync.base.git.GitError`` when ``git config`` fails,
    ``OSError`` on I/O errors.
    """
    config = git_dir / "config"
    for kind in KINDS:
        for key, value in (("name", f"memsync {kind} merge"), ("driver", driver_command(kind))):
            git.check(["config", "--file", str(config), f"merge.memsync-{kind}.{key}", value], timeout=30)
    attributes = git_dir / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    try:
        lines = attributes.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    if _ATTRIBUTES_BEGIN in lines and _ATTRIBUTES_END in lines[lines.index(_ATTRIBUTES_BEGIN) :]:
        begin = lines.index(_ATTRIBUTES_BEGIN)
        end = lines.index(_ATTRIBUTES_END, begin)
        lines[begin : end + 1] = []
    text = "\n".join([*lines, _ATTRIBUTES_BEGIN, *_ATTRIBUTES, _ATTRIBUTES_END]) + "\n"
    if not attributes.exists() or attributes.read_text(encoding="utf-8") != text:
        attributes.write_text(text, encoding="utf-8")

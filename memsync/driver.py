"""The light entry point git runs as memsync's merge driver, and its registration in a store's git dir.

git runs ``<python> -P -m memsync.driver KIND %O %A %B %P`` once per file and merge (DESIGN "Merge
drivers", "Git facts"; issue 3), so this module imports only the merge functions: no CLI, no typer, no
GitPython. ``-P`` keeps the store's working tree (git's cwd for the driver) off ``sys.path``: peer
content is never imported (DESIGN I8).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from memsync.merge import (
    BOTH_KEPT_NOTE_PREFIX,
    merge_daily,
    merge_entry,
    merge_index,
    merge_jsonl_files,
)

__all__ = ["BOTH_KEPT_NOTE_PREFIX", "KINDS", "install_merge_drivers", "main", "run_merge_driver"]

KINDS = ("entry", "daily", "index", "jsonl")
# Starts with memsync.fsio.TEMP_PREFIX (so layout.is_ignored skips it) without importing fsio's locks.
_TEMP_PREFIX = ".memsync-tmp-merge-"
_ATTRIBUTES_BEGIN = "# memsync merge drivers: begin (managed by memsync, rewritten on every start)"
_ATTRIBUTES_END = "# memsync merge drivers: end"
# Later lines win in gitattributes; the order mirrors memsync.layout.kind_of's precedence (jsonl first).
# info/attributes outranks in-tree .gitattributes, so a peer cannot reassign drivers or make git
# rewrite content on checkout (eol/ident/encoding conversions, filters): DESIGN I8.
_ATTRIBUTES = (
    "* -text -ident -filter -working-tree-encoding",
    "* merge=memsync-entry",
    "**/daily/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md merge=memsync-daily",
    "MEMORY.md merge=memsync-index",
    "*.jsonl merge=memsync-jsonl",
)


def _merge_into(kind: str, base: Path, ours: Path, theirs: Path, out_path: Path) -> None:
    with out_path.open("wb") as out:
        if kind == "jsonl":
            merge_jsonl_files(base, ours, theirs, out)
            return
        merge = {"entry": merge_entry, "daily": merge_daily, "index": merge_index}[kind]
        out.write(merge(base.read_bytes(), ours.read_bytes(), theirs.read_bytes()))


def run_merge_driver(kind: str, base: Path, ours: Path, theirs: Path, rel_path: str) -> int:
    """Merge git's temp files ``base`` (%O), ``ours`` (%A), ``theirs`` (%B) with driver ``kind`` (one of
    :data:`KINDS`) and replace ``ours`` with the result atomically (temp file + rename, mode kept).

    ``rel_path`` (%P) is only used in messages. Returns the exit code for git: 0 merged; 1 on any
    failure, after one line on stderr, with ``ours`` untouched so git reports a conflict instead of
    losing data. The result is not fsynced: git reads it back at once and stores it as an object.
    """
    tmp: Path | None = None
    try:
        if kind not in KINDS:
            raise ValueError(f"unknown driver kind {kind!r} (expected one of {', '.join(KINDS)})")
        # A fresh name created exclusively, without tempfile's import cost at every driver start.
        tmp = ours.parent / f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        _merge_into(kind, base, ours, theirs, tmp)
        os.chmod(tmp, ours.stat().st_mode & 0o7777)
        os.replace(tmp, ours)
        tmp = None
        return 0
    except Exception as exc:  # the driver's edge: any failure becomes a git conflict, never lost data
        print(
            f"memsync merge-driver: merging {rel_path} ({kind}) failed: {exc!r}. The file is left as"
            " this side had it and git reports a conflict; memsync aborts the merge and retries.",
            file=sys.stderr,
        )
        return 1
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m memsync.driver KIND %O %A %B [%P]``: run :func:`run_merge_driver`; returns the exit
    code (2 with a usage line on stderr for a wrong argument count)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (4, 5):
        print("usage: python -m memsync.driver KIND BASE OURS THEIRS [PATH]", file=sys.stderr)
        return 2
    kind, base, ours, theirs = args[:4]
    return run_merge_driver(kind, Path(base), Path(ours), Path(theirs), args[4] if len(args) == 5 else ours)


def driver_command(kind: str) -> str:
    """The shell command registered for driver ``kind``: the absolute interpreter running memsync now."""
    return f"{shlex.quote(sys.executable)} -P -m memsync.driver {kind} %O %A %B %P"


def install_merge_drivers(git_dir: Path) -> None:
    """Register memsync's merge drivers in the repository whose git dir is ``git_dir``.

    Writes ``merge.memsync-KIND.name`` and ``.driver`` into ``<git_dir>/config`` (via ``git config
    --file``; the absolute interpreter path, quoted) and a managed block in ``<git_dir>/info/attributes``
    that gives every path a memsync driver (``*`` entry, ``**/daily/YYYY-MM-DD.md`` daily, ``MEMORY.md``
    index, ``*.jsonl`` jsonl — the same kinds as :func:`memsync.layout.kind_of`). Peers cannot change
    either file (DESIGN I8). Idempotent; lines outside the managed block are kept. Raises
    ``memsync.git.GitError`` when ``git config`` fails, ``OSError`` on I/O errors.
    """
    from memsync import git  # here, not at the top: git runs this module for every merged file

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


if __name__ == "__main__":
    raise SystemExit(main())

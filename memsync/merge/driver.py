"""The light entry point git runs as memsync's merge driver (DESIGN "Merge drivers", "Git facts").

git runs the command :func:`.registration.driver_command` registered, ``<python> -S -P -c '<memsync's
import paths>; from memsync.merge.driver import main ...' KIND %O %A %B %P``, once per file and merge,
so this module imports only the driver of that KIND (:func:`.kinds.merge_function`): no CLI, no typer,
no store, no other driver, and neither pathlib, dataclasses nor typing. ``-P`` keeps the store's
working tree (git's cwd for the driver) off ``sys.path``: peer content is never imported (DESIGN I8).
``python -P -m memsync.merge.driver ...`` runs the same :func:`main`.
"""

from __future__ import annotations

import os
import sys

from memsync.merge.kinds import KINDS, merge_function

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from os import PathLike

    FilePath = PathLike[str] | str

# Starts with memsync.base.fsio.TEMP_PREFIX (so layout.is_ignored skips it) without importing fsio's locks.
_TEMP_PREFIX = ".memsync-tmp-merge-"


def _read(path: FilePath) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def _merge_into(kind: str, base: FilePath, ours: FilePath, theirs: FilePath, out_path: str) -> None:
    # Paths as str and os calls, not pathlib: its import is a third of a bare interpreter's start.
    if kind == "jsonl":
        from memsync.merge.jsonl import merge_jsonl_files  # streams the files: no whole copy in memory

        with open(out_path, "wb") as out:
            merge_jsonl_files(base, ours, theirs, out)
        return
    sides = _read(base), _read(ours), _read(theirs)
    if kind == "entry":  # the one driver that labels what it keeps with who wrote it
        from memsync.merge.entry import merge_entry
        from memsync.merge.labels import labels_from

        merged = merge_entry(*sides, labels=labels_from(os.environ))
    else:
        merged = merge_function(kind)(*sides)
    with open(out_path, "wb") as out:
        out.write(merged)


def run_merge_driver(kind: str, base: FilePath, ours: FilePath, theirs: FilePath, rel_path: str) -> int:
    """Merge git's temp files ``base`` (%O), ``ours`` (%A), ``theirs`` (%B) with driver ``kind`` (one of
    :data:`KINDS`) and replace ``ours`` with the result atomically (temp file + rename, mode kept).

    ``rel_path`` (%P) is only used in messages. The entry driver labels the versions it keeps with the
    hosts and times that memsync named in the environment (:mod:`.labels`). Returns the exit code for
    git: 0 merged; 1 on any failure, after one line on stderr, with ``ours`` untouched so git reports a
    conflict instead of losing data. The result is not fsynced: git reads it back at once and stores it
    as an object.
    """
    tmp: str | None = None
    try:
        if kind not in KINDS:
            raise ValueError(f"unknown driver kind {kind!r} (expected one of {', '.join(KINDS)})")
        # A fresh name created exclusively, without tempfile's import cost at every driver start.
        folder = os.path.dirname(os.fspath(ours))
        tmp = os.path.join(folder, f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}")
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        _merge_into(kind, base, ours, theirs, tmp)
        os.chmod(tmp, os.stat(ours).st_mode & 0o7777)
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
            try:  # noqa: SIM105 (contextlib's import would cost the start-up more than the merge)
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def main(argv: list[str] | None = None) -> int:
    """``python -m memsync.merge.driver KIND %O %A %B [%P]``: run :func:`run_merge_driver`; returns the exit
    code (2 with a usage line on stderr for a wrong argument count)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (4, 5):
        print("usage: python -m memsync.merge.driver KIND BASE OURS THEIRS [PATH]", file=sys.stderr)
        return 2
    kind, base, ours, theirs = args[:4]
    return run_merge_driver(kind, base, ours, theirs, args[4] if len(args) == 5 else ours)


if __name__ == "__main__":
    raise SystemExit(main())

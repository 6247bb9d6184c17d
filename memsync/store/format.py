"""The store's format version: a file committed with the store, so a memsync never writes a store (or
merges a remote) made by a newer one it cannot read (DESIGN "Hostile input")."""

from __future__ import annotations

from memsync.crypt.vault import SEALED_FORMAT
from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit

FORMAT_VERSION = 1
FORMAT_FILE = ".memsync/format"


def check_format(g: StoreGit) -> None:
    """Refuse the store when its working tree's format file names a newer or unreadable version (no
    file: a store not started yet). Raises ``MemsyncError``."""
    path = g.worktree / FORMAT_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as exc:
        raise MemsyncError(
            f"cannot open store {g.name!r}: {path} is unreadable ({exc}). Restore it with git"
        ) from exc
    _refuse_format(text, f"store {g.name!r} at {g.worktree}")


def check_remote_format(g: StoreGit, commit: str, remote: str) -> None:
    """Refuse ``remote``'s history at ``commit`` when its format file names a newer or unreadable
    version. Raises ``MemsyncError``."""
    shown = g.run("show", f"{commit}:{FORMAT_FILE}")
    if shown.status == 0:
        _refuse_format(shown.out.strip(), f"remote {remote!r} of store {g.name!r}")


def is_store(g: StoreGit, commit: str) -> bool:
    """True when ``commit`` is a memsync store's (it has the format file)."""
    return g.run("cat-file", "-e", f"{commit}:{FORMAT_FILE}").status == 0


def _refuse_format(text: str, what: str) -> None:
    if text == SEALED_FORMAT:
        raise MemsyncError(
            f"cannot use {what}: it holds encrypted memory and this store is not set to encrypt. "
            "Add --encrypt to `memsync init` or `memsync store add` (an existing store: `memsync encrypt "
            "STORE`), then have a member add this device's key (`memsync join URL` prints it)"
        )
    if not text.isdigit():
        raise MemsyncError(
            f"cannot use {what}: its format version {text!r} is not a number. Restore {FORMAT_FILE} with git"
        )
    if int(text) > FORMAT_VERSION:
        raise MemsyncError(
            f"cannot use {what}: it uses store format {text}, this memsync supports up to "
            f"{FORMAT_VERSION}. Upgrade memsync on this machine"
        )

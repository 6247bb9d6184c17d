"""Registering memsync's merge drivers in a store (DESIGN "Merge drivers"; I8: peers cannot change the
registration, which lives in the git dir, never in history)."""

from __future__ import annotations

from memsync.driver import install_merge_drivers
from memsync.errors import MemsyncError
from memsync.git import GitError
from memsync.store.repo import StoreGit


def register(g: StoreGit) -> None:
    """Write the drivers' git config and attributes block (``driver.install_merge_drivers``). Raises
    ``MemsyncError`` naming what failed."""
    try:
        install_merge_drivers(g.git_dir)
    except (OSError, GitError) as exc:
        said = exc.stderr if isinstance(exc, GitError) else ""
        why = said.strip().splitlines()[-1:] or [str(exc)]
        raise MemsyncError(
            f"cannot open store {g.name!r}: registering the merge drivers "
            f"failed ({why[0]}). Check that {g.git_dir} is writable"
        ) from exc

"""Building blocks for store tests: real bare remotes and real stores in tmp dirs (no mocks)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, Unpack

from memsync.config.file import Identity, StoreConfig
from memsync.store.facade import Store
from tests.support.helpers import git


def store_config(
    path: Path, remotes: Mapping[str, str | Path] | None = None, name: str = "personal", branch: str = "main"
) -> StoreConfig:
    """A StoreConfig for a store at ``path`` with ``remotes`` (name -> URL or path)."""
    return StoreConfig(
        name=name,
        path=path,
        branch=branch,
        remotes={key: str(value) for key, value in (remotes or {}).items()},
    )


def identity(host: str) -> Identity:
    """The commit identity of peer ``host``."""
    return Identity(name=f"{host} user", email=f"{host}@example.invalid")


def new_store(
    path: Path, host: str, remotes: Mapping[str, str | Path] | None = None, **kwargs: float
) -> Store:
    """``Store.init_or_clone`` for a peer called ``host``."""
    return Store.init_or_clone(store_config(path, remotes), identity(host), host, **kwargs)


class OpenBounds(TypedDict, total=False):
    """The bounds ``Store.open`` takes, in seconds."""

    network_timeout_s: float
    lock_wait_s: float


def reopen(store: Store, **kwargs: Unpack[OpenBounds]) -> Store:
    """``Store.open`` with the same config, host and identity (what a daemon restart does)."""
    return Store.open(store.cfg, store.host, store.identity, **kwargs)


# Per store worktree, the paths the tests wrote since their last `commit`: what publish records in the
# sync state for `Store.commit_all` (only those may be committed).
_written: dict[Path, set[str]] = {}


def write(store: Store, rel: str, text: str) -> None:
    """Write ``text`` to the store file ``rel`` (creating directories), as publish would (recorded for
    ``commit``)."""
    path = store.worktree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _written.setdefault(store.worktree, set()).add(rel)


def append(store: Store, rel: str, text: str) -> None:
    """Append ``text`` to the store file ``rel`` (recorded for ``commit``)."""
    with (store.worktree / rel).open("a", encoding="utf-8") as out:
        out.write(text)
    _written.setdefault(store.worktree, set()).add(rel)


def remove(store: Store, rel: str) -> None:
    """Delete the store file ``rel``, as publish does for a deletion (recorded for ``commit``)."""
    (store.worktree / rel).unlink()
    _written.setdefault(store.worktree, set()).add(rel)


def commit(store: Store, message: str, *also: str) -> str | None:
    """``store.commit_all`` of what ``write``/``append`` wrote since the last ``commit`` and the store
    paths ``also`` (say, files a test deleted), as the cycle commits what publish wrote."""
    written = _written.pop(store.worktree, set()) | set(also)
    return store.commit_all(message, written)


def read(store: Store, rel: str) -> str:
    """The text of the store file ``rel``."""
    return (store.worktree / rel).read_text(encoding="utf-8")


def commit_count(repo: Path, ref: str = "HEAD") -> int:
    """How many commits ``ref`` of the repository at ``repo`` (worktree or bare) has."""
    return int(git(repo, "rev-list", "--count", ref))


def worktree_clean(store: Store) -> bool:
    """No uncommitted change, no unmerged path, no merge in progress."""
    status = git(store.worktree, "status", "--porcelain")
    return status == "" and not (store.git_dir / "MERGE_HEAD").exists()

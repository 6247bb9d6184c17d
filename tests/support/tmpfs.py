"""Small size-limited tmpfs mounts for the full-disk tests (DESIGN "Hostile input"): mounted by the test
(root only; the test skips, saying why, elsewhere), filled to the last few bytes, freed again."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


class Tmpfs:
    """A tmpfs mounted at ``path``; ``fill`` leaves only ``leave`` bytes free, ``free`` undoes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / ".filler"

    def fill(self, leave: int = 0) -> None:
        """Fill the file system until at most ``leave`` bytes are free."""
        with self._filler.open("ab", buffering=0) as out:
            while (free := shutil.disk_usage(self.path).free) > leave:
                try:
                    out.write(b"\0" * min(free - leave, 1 << 20))
                except OSError:
                    break

    def free(self) -> None:
        """Give the space the filler took back."""
        self._filler.unlink(missing_ok=True)

    def read_only(self, on: bool = True) -> None:
        """Remount read-only (``on``) or read-write again."""
        subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", str(self.path)], check=True)


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Tmpfs]:
    """Mount a tmpfs of ``size`` (``mount -o size=``, e.g. "2m") at the directory ``path`` (made if
    missing); unmounted at the end. Skips the test where it cannot be mounted (not root)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here: {done.stderr.strip()}")
    try:
        yield Tmpfs(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def move_onto(directory: Path, place: Path) -> Path:
    """Move ``directory`` (content and all) into ``place`` (a mount, say) and leave a symlink to it in its
    old place: that part of a store or a home then lives on another disk. Returns the new directory."""
    target = place / directory.name
    shutil.copytree(directory, target, symlinks=True)
    shutil.rmtree(directory)
    directory.symlink_to(target)
    return target

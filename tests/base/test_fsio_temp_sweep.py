"""Temp files a killed write left behind (``fsio.TEMP_PREFIX``) are removed by a full reconcile (`memsync
sync`) and by `memsync purge`: old ones only, regular files only, symlinks never followed (real CLI)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memsync.base.fsio import STALE_TEMP_S, TEMP_PREFIX
from tests.support.helpers import bare_remote
from tests.support.peers import Peer

SECRET = "door code 48151623 for the lab"
OLD_S = STALE_TEMP_S + 3600


def age(path: Path, seconds: float) -> None:
    """Set ``path``'s atime and mtime ``seconds`` into the past (the link itself for a symlink)."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def plant(path: Path, data: bytes, old: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if old:
        age(path, OLD_S)
    return path


def tree(*roots: Path) -> dict[str, bytes | str]:
    """Every entry under ``roots`` (not entering symlinks or ``.git``): file bytes, link targets, "dir"."""
    found: dict[str, bytes | str] = {}
    for root in roots:
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in [*dirs, *files]:
                path = Path(here) / name
                if path.is_symlink():
                    found[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_dir():
                    found[str(path)] = "dir"
                else:
                    found[str(path)] = path.read_bytes()
    return found


def test_sync_removes_old_temp_files_only(tmp_path: Path) -> None:
    """`memsync sync` removes the old temp files in the tracked directory tree, beside a tracked file, in
    the store worktree and its meta dir; a fresh one (a write in progress), other files, a directory with
    the prefix, a symlink with the prefix and what symlinks point to stay, byte for byte."""
    alice = Peer.create(tmp_path, "alice", bare_remote(tmp_path / "remote.git"))
    alice.write_curated("harbor", "The harbor site blocks requests without a user agent.\n")
    alice.append_entry("first lesson")
    assert alice.main("sync").returncode == 0
    outside = tmp_path / "outside"
    old = [
        plant(alice.role_dir / f"{TEMP_PREFIX}a1b2c3d4", SECRET.encode()),
        plant(alice.role_dir / "daily" / f"{TEMP_PREFIX}removed-2026-11-30.md", SECRET.encode()),
        plant(alice.memory_file.parent / f"{TEMP_PREFIX}x9y8z7w6", SECRET.encode()),
        plant(alice.store / "roles" / "qa" / f"{TEMP_PREFIX}merge-12-ab", SECRET.encode()),
        plant(alice.store / ".git" / "memsync" / f"{TEMP_PREFIX}q1w2e3r4", b"{}"),
    ]
    fresh = plant(alice.role_dir / f"{TEMP_PREFIX}inprogress", SECRET.encode(), old=False)
    plant(alice.role_dir / "notes.tmp", b"an editor's file", old=True)
    target = plant(outside / f"{TEMP_PREFIX}target", SECRET.encode())
    plant(outside / "deep" / f"{TEMP_PREFIX}behind-link", SECRET.encode())
    link = alice.role_dir / f"{TEMP_PREFIX}link"
    link.symlink_to(target)
    age(link, OLD_S)
    (alice.role_dir / "linked").symlink_to(outside / "deep", target_is_directory=True)
    plant(alice.role_dir / f"{TEMP_PREFIX}dir" / "inside.md", b"kept", old=True)
    age(alice.role_dir / f"{TEMP_PREFIX}dir", OLD_S)
    roots = (alice.role_dir, alice.memory_file.parent, alice.store, alice.store / ".git" / "memsync", outside)
    before = tree(*roots)
    commits = alice.commits()

    result = alice.main("-v", "sync")

    assert result.returncode == 0, result.stderr
    assert "removed 5 memsync temp files" in result.stderr
    assert not any(path.exists() for path in old)
    expected = {path: data for path, data in before.items() if Path(path) not in old}
    rewritten = ("status.json", "cycle.json")  # each cycle's status and the record of its lock's holder
    meta = alice.store / ".git" / "memsync"
    assert tree(*roots) == {**expected, **{str(meta / n): (meta / n).read_bytes() for n in rewritten}}
    assert fresh.read_bytes() == SECRET.encode()
    assert alice.commits() == commits


def test_purge_removes_old_temp_files_holding_the_text(tmp_path: Path) -> None:
    """A temp file left by a killed write holds a whole copy of memory text: `memsync purge` removes it
    along with the text in the live files and history."""
    alice = Peer.create(tmp_path, "alice", bare_remote(tmp_path / "remote.git"))
    alice.append_entry(SECRET)
    assert alice.main("sync").returncode == 0
    leftover = plant(alice.role_dir / f"{TEMP_PREFIX}k1l2m3n4", alice.memory_file.read_bytes())

    result = alice.main("purge", "48151623", "--yes")

    assert result.returncode == 0, result.stderr
    assert not leftover.exists()
    assert b"48151623" not in alice.memory_file.read_bytes()

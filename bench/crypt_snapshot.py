"""What a periodic snapshot of an encrypted remote buys and costs, measured in one run on the store API
(real git, real bare remotes), to choose when a member makes one (``memsync.store.sealed``):

- the remote: after N one-entry cycles, the sealed bytes of each bundle and of a whole-history bundle
  (a snapshot) made at N, and both remotes after ``git gc`` (plaintext and encrypted, as in
  ``bench/crypt.py``);
- a device restored from ``key export`` (the same key, a new store) that starts reading after the N
  bundles: the objects and bytes its first fetch leaves in its ciphertext repository and the seconds it
  takes, reading every bundle since the history sealed when it was added, and again from a snapshot made
  at N.

From those, the remote's bytes and that device's first read at other cycle counts for each snapshot
interval, computed from the per-bundle figures (the bundles weigh the same at any count; a snapshot is
the whole history, padded to a power of two).

Run: ``python bench/crypt_snapshot.py [--cycles 300]``.
"""

from __future__ import annotations

import argparse
import crypt as design_a  # bench/crypt.py: this script's folder comes first on sys.path
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memsync.crypt import envelope  # after sys.path
from memsync.crypt.vault import DATA
from memsync.store import sealed
from memsync.store.facade import Store


def sealed_sizes(remote: Path) -> list[int]:
    """The size of each commit's sealed bundle on the remote's ciphertext branch, oldest first."""
    shas = subprocess.run(
        ["git", "-C", str(remote), "rev-list", "--reverse", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    asked = "".join(f"{sha}:{DATA}\n" for sha in shas).encode()
    listed = subprocess.run(
        ["git", "-C", str(remote), "cat-file", "--batch-check=%(objectsize)"],
        input=asked,
        capture_output=True,
        check=True,
    ).stdout.split()
    return [int(size) for size in listed]


def late_device(root: Path, name: str, remote: Path) -> tuple[float, int, int, str]:
    """A device with this process's key and a new store on ``remote``: seconds its first exchange took,
    the objects and bytes then in its ciphertext repository, and its memory file."""
    started = time.perf_counter()
    s = design_a.store(root, name, remote, True)
    spent = time.perf_counter() - started
    git_dir = sealed.vault(s.git, "origin").git_dir
    return spent, objects(git_dir)[0], design_a.size(git_dir), _memory(s)


def objects(git_dir: Path) -> tuple[int, int]:
    """How many objects the repository ``git_dir`` holds, loose and packed, and their packs' bytes."""
    counted = subprocess.run(
        ["git", "--git-dir", str(git_dir), "count-objects", "-v"], capture_output=True, text=True, check=True
    ).stdout
    fields = dict(line.split(": ") for line in counted.splitlines())
    return int(fields["count"]) + int(fields["in-pack"]), int(fields["size-pack"]) * 1024


def _memory(s: Store) -> str:
    return (s.worktree / design_a.FILE).read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300)
    args = parser.parse_args()
    n = args.cycles
    with tempfile.TemporaryDirectory(prefix="memsync-snapshot-bench-") as tmp:
        root = Path(tmp)
        os.environ["MEMSYNC_CONFIG"] = str(root / "config" / "config.toml")  # one key: a restored device
        figures = design_a.cycles(root / "cycles", n)
        remote = root / "cycles" / "remote-True.git"
        sizes = sealed_sizes(remote)
        bundles = sizes[1:]  # the first: the history sealed when the writer started
        plain, packed = figures[False][3], figures[True][3]
        # What git adds to each sealed bundle on the remote once packed (its commit and tree), per commit.
        overhead = (objects(remote)[1] - sum(sizes)) / len(sizes)
        print(
            f"after {n} cycles: {len(bundles)} bundles of {sum(bundles) / len(bundles):.0f} B sealed "
            f"(min {min(bundles)}, max {max(bundles)}), {overhead:.0f} B of commit and tree each, packed; "
            f"remote packed: plaintext {plain / 1024:.0f} KiB, encrypted {packed / 1024:.0f} KiB "
            f"({packed / plain:.2f}x)",
            flush=True,
        )
        spent, fetched, size, text = late_device(root, "late", remote)
        print(
            f"late device, no snapshot: first exchange {spent:.2f} s, {fetched} objects, "
            f"{size / 1024:.0f} KiB in its ciphertext repository",
            flush=True,
        )
        writer = design_a.store(root / "cycles", "wTrue", remote, True)  # the bench's writer, opened again
        history = len(sealed._bundle(writer.git, writer.git.check("rev-parse", "HEAD").out.strip(), None))
        sealed.snapshot_next(writer.git)
        design_a.write(writer, "snapshot")
        assert writer.exchange()[0].status == "ok"
        snapshot = sealed_sizes(remote)[-1]
        spent_from, objects_from, size_from, text_from = late_device(root, "later", remote)
        assert text_from.count("\n") == text.count("\n") + 1
        per_read = (spent - spent_from) / n
        print(
            f"late device, snapshot at {n}: the history bundles to {history / 1024:.0f} KiB, sealed "
            f"{snapshot / 1024:.0f} KiB; first exchange {spent_from:.2f} s, {objects_from} objects, "
            f"{size_from / 1024:.0f} KiB in its ciphertext repository; {per_read * 1000:.1f} ms a bundle",
            flush=True,
        )
        # Projected to other counts: a bundle weighs the same at any count, the history (and the plaintext
        # remote) grows as over the first n cycles, a snapshot is the history padded to its bucket.
        bundle = sum(bundles) / len(bundles) + overhead
        for cycles in (1000, 5000, 10000):
            for every in (1000, 5000, None):
                at = [] if every is None else list(range(every, cycles + 1, every))
                snaps = sum(envelope.bucket(history * k // n) + overhead for k in at)
                total = packed + bundle * (cycles - n) + snaps
                since = cycles - (at[-1] if at else 0)
                print(
                    f"{cycles:6} cycles, snapshot every {every or 'none':>5}: remote {total / 1024:7.0f} KiB "
                    f"({total / (plain * cycles / n):.2f}x plaintext); a late device reads {since} bundles, "
                    f"{since * bundle / 1024:.0f} KiB, ~{since * per_read:.0f} s",
                    flush=True,
                )


if __name__ == "__main__":
    main()

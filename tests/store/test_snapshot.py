"""Snapshots of an encrypted remote's ciphertext branch (``memsync.store.sealed``): a whole-history
bundle pushed as one more fast-forward, when one is due (after ``memsync compact``, or a bundle sealed for
another member list), never by a count of pushes. On the store API, real stores, real git, a real bare
remote: a new device's first fetch takes the tip alone and deepens only to the latest snapshot; a device
that read everything before a snapshot skips it without writing a pack; snapshots made while others push
at once lose nothing."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from memsync.crypt.vault import DATA
from memsync.store import sealed
from memsync.store.facade import Store
from tests.store.test_sealed import FILE, device, entry
from tests.support.helpers import bare_remote
from tests.support.stores import commit_count, read


def objects(git_dir: Path) -> int:
    """How many objects the repository ``git_dir`` holds, loose and packed."""
    counted = subprocess.run(
        ["git", "--git-dir", str(git_dir), "count-objects", "-v"], capture_output=True, text=True, check=True
    ).stdout
    fields = dict(line.split(": ") for line in counted.splitlines())
    return int(fields["count"]) + int(fields["in-pack"])


def whole_bundles(remote: Path) -> int:
    """How many commits of the remote's ciphertext branch hold a whole-history bundle: told apart by
    size, a snapshot of several entries being the one bundle above the smallest bucket's ciphertext."""
    shas = subprocess.run(
        ["git", "-C", str(remote), "rev-list", "main"], capture_output=True, text=True, check=True
    ).stdout.split()
    sizes = [
        int(
            subprocess.run(
                ["git", "-C", str(remote), "cat-file", "-s", f"{sha}:{DATA}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for sha in shas
    ]
    return sum(1 for size in sizes if size > 2048)


def vault_dir(store: Store) -> Path:
    """The ciphertext repository of ``store``'s remote origin."""
    return sealed.vault(store._g, "origin").git_dir


def test_pushes_make_no_snapshot_however_many_bundles_went_by(tmp_path: Path, home: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer = device(tmp_path, "writer", remote, encrypt=True)
    entry(writer, "entry-0")
    assert writer.exchange()[0].status == "ok"
    # The count of bundles since the last snapshot that memsync kept before, 999 here: it made the next
    # push a snapshot too, the whole history again on a remote that keeps everything.
    (vault_dir(writer) / "memsync-since-snapshot").write_text("999")
    before = commit_count(remote, "main")
    for i in range(1, 4):
        entry(writer, f"entry-{i}")
        assert writer.exchange()[0].status == "ok"
    # One commit a push, its bundle: no snapshot among them.
    assert commit_count(remote, "main") == before + 3
    sizes = subprocess.run(
        ["git", "-C", str(remote), "cat-file", "--batch-check=%(objectsize)"],
        input="".join(f"main~{i}:{DATA}\n" for i in range(3)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(int(size) < 2048 for size in sizes)  # each in the smallest bucket


@pytest.mark.slow
def test_a_new_device_starts_from_the_latest_snapshot_and_fetches_less(tmp_path: Path, home: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer = device(tmp_path, "writer", remote, encrypt=True)
    lines = []
    for i in range(50):
        lines.append(entry(writer, f"entry-{i:02d}"))
        assert writer.exchange()[0].status == "ok"
    before = device(tmp_path, "before", remote, encrypt=True)
    assert read(before, FILE) == "".join(lines)
    fetched_before = objects(vault_dir(before))
    # Ten more bundles, the last after a `memsync compact`: its push makes a snapshot on top.
    for i in range(50, 60):
        if i == 59:
            sealed.snapshot_next(writer.git)
        lines.append(entry(writer, f"entry-{i:02d}"))
        assert writer.exchange()[0].status == "ok"
    assert whole_bundles(remote) == 1
    after = device(tmp_path, "after", remote, encrypt=True)
    assert read(after, FILE) == "".join(lines)
    # The tip is the snapshot: its commit, tree, format tree, two blobs and the member list kept, not the
    # 61 commits before.
    assert objects(vault_dir(after)) <= 6 < fetched_before
    # It syncs on from there both ways: its bundle builds on the snapshot's head.
    lines.append(entry(after, "from the new device"))
    assert after.exchange()[0].status == "ok"
    assert writer.exchange()[0].status == "ok" and before.exchange()[0].status == "ok"
    assert read(writer, FILE) == read(before, FILE) == "".join(lines)


def test_a_device_that_read_everything_skips_a_snapshot_without_writing_objects(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer, reader = (
        device(tmp_path, "writer", remote, encrypt=True),
        device(tmp_path, "reader", remote, encrypt=True),
    )
    lines = []
    for i in range(2):
        lines.append(entry(writer, f"entry-{i}"))
        assert writer.exchange()[0].status == "ok"
        assert reader.exchange()[0].status == "ok"
    sealed.snapshot_next(writer.git)
    lines.append(entry(writer, "the third"))
    assert writer.exchange()[0].status == "ok"  # its bundle, then a snapshot on top
    assert whole_bundles(remote) == 1
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert reader.exchange()[0].status == "ok"
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    started = [json.loads(line) for line in trace.read_text().splitlines()]
    # Started by memsync (a git's own children, whose sid nests under their parent's, are not: a fetch's).
    written = [e["argv"][1] for e in started if e["event"] == "start" and "/" not in e["sid"]]
    # One bundle's objects written (the third entry's), the snapshot's not at all.
    assert written.count("unpack-objects") + written.count("index-pack") == 1, written
    assert read(reader, FILE) == "".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_snapshots_made_while_others_push_lose_nothing(tmp_path: Path, home: Path, seed: int) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    peers = [device(tmp_path, f"peer{i}", remote, encrypt=True) for i in range(3)]
    for peer in peers:
        assert peer.exchange()[0].status == "ok"
    written: list[str] = []

    def run(peer: Store, n: int) -> None:
        for i in range(6):
            if i % (2 + seed) == 1:  # as after a `memsync compact` there
                sealed.snapshot_next(peer.git)
            written.append(entry(peer, f"peer{n}-{i}-{seed}"))
            peer.exchange()

    threads = [threading.Thread(target=run, args=(peer, n)) for n, peer in enumerate(peers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for _ in range(3):
        for peer in peers:
            assert peer.exchange()[0].status == "ok"
    assert whole_bundles(remote) >= 2
    texts = [read(peer, FILE) for peer in peers]
    assert texts[0] == texts[1] == texts[2]
    assert sorted(texts[0].splitlines(keepends=True)) == sorted(written)
    # A device starting now, from the latest snapshot, holds the same.
    assert read(device(tmp_path, "late", remote, encrypt=True), FILE) == texts[0]

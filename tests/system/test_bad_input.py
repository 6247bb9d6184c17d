"""The bad input catalogue (issue 7): one test per kind of bad input, driven through `memsync sync` (one
cycle each, through the CLI's entry point in-process: ``Peer.main``) between two peers and a bare remote,
and one test that throws the file-level ones at a running daemon. Each case checks what memsync says, that
nothing is lost, and that nothing is written outside the tracked paths, the store and memsync's own state.

The table in the final report ("input | what memsync does") is read off these tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import bare_remote, git, remote_blobs, wait_for
from tests.support.peers import DAY, HEADER, MEMORY_FILE, MEMORY_STORE, ROLE_STORE, Peer
from tests.support.tmpfs import tmpfs

DAILY = f"daily/{DAY}.md"


@pytest.fixture
def pair(tmp_path: Path, remote: Path) -> Iterator[tuple[Peer, Peer]]:
    """alice and bob, stores made; every test ends by checking nothing was written outside."""
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    before = outside_files(tmp_path, (alice, bob))
    yield alice, bob
    for peer in (alice, bob):
        if not peer.proc_dead():
            peer.kill()
    assert outside_files(tmp_path, (alice, bob)) == before, "memsync wrote outside its paths"


def outside_files(root: Path, peers: tuple[Peer, ...]) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under ``root`` that is not a tracked path, a store, memsync's state or
    config, the remote or a daemon log: what memsync must never write."""
    allowed = [root / "remote.git", root / "tools"]
    for peer in peers:
        allowed += [
            peer.store,
            peer.role_dir,
            peer.memory_file,
            peer.home / ".local" / "state",
            peer.config.parent,
            peer.log_path,
        ]
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not any((here / d) == a for a in allowed)]
        for name in filenames:
            path = here / name
            if any(path == a or path.is_relative_to(a) for a in allowed):
                continue
            stat = path.lstat()
            found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def sync(peer: Peer, expect: int = 0) -> str:
    """`memsync sync` on ``peer``; returns its stderr. The exit code must be ``expect``."""
    result = peer.main("sync")
    assert result.returncode == expect, f"{peer.name}: exit {result.returncode}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result.stderr


def both_sync(alice: Peer, bob: Peer) -> str:
    """alice syncs, then bob: what alice wrote reaches bob's live files. Returns alice's stderr."""
    said = sync(alice)
    sync(bob)
    return said


def lines(data: bytes) -> Counter[bytes]:
    """The lines of ``data`` as a multiset (a memory file's line order is not part of its meaning)."""
    return Counter(data.splitlines(keepends=True))


def store_blobs(peer: Peer, rel: str) -> list[bytes]:
    """Every committed version of store path ``rel`` in ``peer``'s store."""
    shas = peer.store_git("log", "--all", "--format=%H", "--", rel).split()
    return [
        subprocess.run(
            ["git", "show", f"{sha}:{rel}"], cwd=peer.store, capture_output=True, check=False
        ).stdout
        for sha in shas
    ]


# --- memory file content -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("malformed JSON line", b'{"id": "broken", "kind": "lesson", "text": \n'),
        ("JSON that is not an object", b'["a", "list", "not", "an", "entry"]\n'),
        ("a NUL byte", b'{"id":"nul","text":"before\x00after"}\n'),
    ],
)
def test_a_bad_memory_line_is_kept_verbatim_and_the_lines_around_it_sync(
    pair: tuple[Peer, Peer], name: str, bad: bytes
) -> None:
    alice, bob = pair
    before = alice.append_entry(f"good line before the {name}")
    with alice.memory_file.open("ab") as out:
        out.write(bad)
    after = alice.append_entry(f"good line after the {name}")
    both_sync(alice, bob)
    assert (
        lines(bob.read_live(MEMORY_FILE))
        == lines(alice.read_live(MEMORY_FILE))
        == lines(HEADER + before + bad + after)
    )
    check = bob.main("check", str(bob.memory_file))
    assert check.returncode == 1 and len(check.stdout.splitlines()) == 1
    assert check.stdout.startswith(f"{bob.memory_file}:")
    shown = bob.main("show", str(bob.memory_file))
    assert shown.returncode == 0 and "1 problem in" in shown.stderr and "good line after" in shown.stdout


def test_text_that_is_not_utf8_stays_local_and_is_reported(pair: tuple[Peer, Peer]) -> None:
    """A line of an append-only file, or a whole file, that memsync cannot read as UTF-8 is never
    published as text (no scanner can say what it holds: UTF-16 text hid a key): it is held back like a
    secret, `status` lists it, `check` names it; everything around it syncs."""
    alice, bob = pair
    latin1 = b'{"id":"latin1","kind":"fact","text":"caf\xe9 \xff\xfe","created_at":"2026-11-30T00:00:00Z"}\n'
    before = alice.append_entry("good line before the latin-1 one")
    with alice.memory_file.open("ab") as out:
        out.write(latin1)
    after = alice.append_entry("good line after the latin-1 one")
    alice.append_daily("- [09:00] fine\n")
    with (alice.role_dir / DAILY).open("ab") as out:
        out.write(b"- [09:01] caf\xe9\n- [09:02] also fine\n")
    (alice.role_dir / "utf16.md").write_bytes(
        "---\nname: x\n---\n\nkey AKIAQ3EGRTYXPL7NMB2D\n".encode("utf-16")
    )
    said = both_sync(alice, bob)
    # Held for what it is, not called a secret (it may be one: no scanner can say).
    assert f"{alice.memory_file}: line 3 held back: not UTF-8 text. Re-save it as UTF-8" in said
    assert "looks like a secret" not in said
    listed = alice.cli_ok("status").stdout
    assert f"held back (not UTF-8 text): {alice.role_dir / DAILY}:2 (re-save it as UTF-8)" in listed
    assert "held back (secret)" not in listed
    assert lines(bob.read_live(MEMORY_FILE)) == lines(HEADER + before + after)
    assert bob.read_live(DAILY) == b"- [09:00] fine\n- [09:02] also fine\n"
    assert not (bob.role_dir / "utf16.md").exists()
    assert all(b"\xe9" not in blob and b"\xff\xfe" not in blob for blob in remote_blobs(bob.remote))
    held = {
        (item["file"], item["line"], item["detector"])
        for item in alice.status()["stores"]["main"]["held_back_secrets"]
    }
    assert held == {
        (str(alice.memory_file), 3, "not UTF-8 text"),
        (str(alice.role_dir / DAILY), 2, "not UTF-8 text"),
        (str(alice.role_dir / "utf16.md"), 1, "not UTF-8 text"),
    }
    check = alice.main("check", str(alice.memory_file))
    assert check.returncode == 1 and check.stdout == f"{alice.memory_file}:3: not valid UTF-8 (byte 41)\n"


@pytest.mark.slow
def test_a_10_mb_single_line_syncs_whole(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    # Prose-like text: a 10 MB run of base64 also syncs, but the secret scanner needs ~1 s per MB of it.
    text = ("lorem ipsum dolor sit amet " * (10 * 1024 * 1024 // 27 + 1))[: 10 * 1024 * 1024]
    entry = json.dumps({"id": "big", "kind": "fact", "text": text, "created_at": "2026-11-30T00:00:00Z"})
    with alice.memory_file.open("ab") as out:
        out.write(entry.encode() + b"\n")
    alice.append_daily(f"- [09:00] {text}\n")
    both_sync(alice, bob)
    assert lines(bob.read_live(MEMORY_FILE)) == lines(alice.read_live(MEMORY_FILE))
    assert entry.encode() + b"\n" in bob.read_live(MEMORY_FILE)
    assert bob.read_live(DAILY) == alice.read_live(DAILY) == f"- [09:00] {text}\n".encode()


def test_a_nul_byte_in_a_daily_log_and_a_curated_entry_syncs_byte_exact(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    alice.append_daily("- [09:00] a line with a \x00 NUL inside\n")
    curated = alice.write_curated("binaryish", "before\x00after\n")
    both_sync(alice, bob)
    assert bob.read_live(DAILY) == b"- [09:00] a line with a \x00 NUL inside\n"
    assert bob.read_live("binaryish.md") == curated


def test_an_empty_memory_file_daily_log_and_entry(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote, memory_header=False)
    bob = Peer.create(tmp_path, "bob", remote, memory_header=False)
    alice.memory_file.write_bytes(b"")
    (alice.role_dir / "daily").mkdir()
    (alice.role_dir / DAILY).write_bytes(b"")
    (alice.role_dir / "empty.md").write_bytes(b"")
    both_sync(alice, bob)
    assert bob.read_live("empty.md") == b"" and (bob.role_dir / "empty.md").is_file()
    line = alice.append_entry("the first entry of a file that started empty")
    alice.append_daily("- [09:00] first line\n")
    both_sync(alice, bob)
    assert bob.read_live(MEMORY_FILE) == line
    assert bob.read_live(DAILY) == b"- [09:00] first line\n"


def test_a_file_that_is_only_a_header(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    both_sync(alice, bob)
    assert bob.read_live(MEMORY_FILE) == HEADER
    assert bob.main("show", str(bob.memory_file)).returncode == 0


def test_a_duplicate_header(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    with alice.memory_file.open("ab") as out:
        out.write(HEADER)
    line = alice.append_entry("after the second header")
    both_sync(alice, bob)
    # The writer's file keeps both headers; a peer's merge keeps one copy of an identical line.
    assert alice.read_live(MEMORY_FILE) == HEADER + HEADER + line
    assert lines(bob.read_live(MEMORY_FILE)) == lines(HEADER + line)
    shown = bob.main("show", str(bob.memory_file))
    assert shown.returncode == 0 and "after the second header" in shown.stdout


# --- tracked paths that change shape -------------------------------------------------------------


@pytest.mark.slow
def test_a_tracked_memory_file_deleted_while_tracked_is_restored_from_the_store(
    pair: tuple[Peer, Peer],
) -> None:
    alice, bob = pair
    written = [alice.append_entry(f"entry {i}") for i in range(3)]
    both_sync(alice, bob)
    alice.memory_file.unlink()
    sync(alice)
    assert lines(alice.read_live(MEMORY_FILE)) == lines(HEADER + b"".join(written))
    sync(bob)
    assert lines(bob.read_live(MEMORY_FILE)) == lines(HEADER + b"".join(written))


def test_a_curated_entry_deleted_while_tracked_is_a_deletion_that_syncs(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    alice.write_curated("gone_soon", "temporary\n")
    both_sync(alice, bob)
    assert (bob.role_dir / "gone_soon.md").exists()
    (alice.role_dir / "gone_soon.md").unlink()
    both_sync(alice, bob)
    assert not (bob.role_dir / "gone_soon.md").exists()
    assert any(b"temporary" in blob for blob in store_blobs(bob, f"{ROLE_STORE}/gone_soon.md"))


def test_a_tracked_file_replaced_by_a_directory(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    line = alice.append_entry("kept through the mishap")
    both_sync(alice, bob)
    alice.memory_file.unlink()
    alice.memory_file.mkdir()
    (alice.memory_file / "stray.txt").write_text("not memory\n")
    said = alice.main("sync")
    assert "Traceback" not in said.stderr
    assert said.returncode in (0, 1, 75)
    assert line in alice.read_store(MEMORY_STORE)
    sync(bob)
    assert lines(bob.read_live(MEMORY_FILE)) == lines(HEADER + line)
    assert not (alice.store / MEMORY_STORE).is_dir()
    shutil.rmtree(alice.memory_file)
    sync(alice)
    assert alice.read_live(MEMORY_FILE) == HEADER + line


def test_a_curated_entry_replaced_by_a_directory(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    entry = alice.write_curated("soon_a_dir", "kept in the store\n")
    both_sync(alice, bob)
    (alice.role_dir / "soon_a_dir.md").unlink()
    (alice.role_dir / "soon_a_dir.md").mkdir()
    line = alice.append_entry("still syncs")
    both_sync(alice, bob)
    assert line in bob.read_live(MEMORY_FILE)
    assert bob.read_live("soon_a_dir.md") in (entry, b"")  # kept, or deleted like any deletion
    assert any(blob == entry for blob in store_blobs(bob, f"{ROLE_STORE}/soon_a_dir.md"))


def test_a_symlink_to_the_role_directory_itself_is_not_followed(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    (alice.role_dir / "up").symlink_to(alice.role_dir)
    (alice.role_dir / "parent").symlink_to("..")
    entry = alice.write_curated("real_entry", "still syncs\n")
    both_sync(alice, bob)
    assert bob.read_live("real_entry.md") == entry
    assert sorted(p.name for p in bob.role_dir.iterdir()) == ["real_entry.md"]
    assert [p for p in git(alice.store, "ls-files").split() if p.startswith(ROLE_STORE)] == [
        f"{ROLE_STORE}/real_entry.md"
    ]


def test_a_symlink_loop_inside_a_role_directory(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    (alice.role_dir / "loop_a").symlink_to(alice.role_dir / "loop_b")
    (alice.role_dir / "loop_b").symlink_to(alice.role_dir / "loop_a")
    (alice.role_dir / "self.md").symlink_to("self.md")
    entry = alice.write_curated("real_entry", "still syncs\n")
    both_sync(alice, bob)
    assert bob.read_live("real_entry.md") == entry
    assert [p for p in git(alice.store, "ls-files").split() if p.startswith(ROLE_STORE)] == [
        f"{ROLE_STORE}/real_entry.md"
    ]


@pytest.mark.slow
def test_a_role_directory_with_10000_files(pair: tuple[Peer, Peer]) -> None:
    """10,000 new files arrive whole at the peer. How long the first sync takes is a figure of
    bench/first_sync_bench.py (against cp + git in the same run), not a bound here: on a loaded machine a
    bound only flakes."""
    alice, bob = pair
    notes = alice.role_dir / "notes"
    notes.mkdir()
    for i in range(10_000):
        (notes / f"n{i:05d}.md").write_bytes(b"note %d\n" % i)
    result = alice.cli("sync", timeout=600)
    assert result.returncode == 0, result.stderr
    sync(bob)
    arrived = sorted((bob.role_dir / "notes").iterdir())
    assert len(arrived) == 10_000
    assert arrived[-1].read_bytes() == b"note 9999\n"


@pytest.fixture
def world_root() -> Iterator[Path]:
    """A directory every user may enter (pytest's tmp dirs are private to root)."""
    root = Path(tempfile.mkdtemp(prefix="memsync-perm-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root to drop to an unprivileged user with setpriv (as root, chmod 000 "
    "hides nothing, so the test would prove nothing)",
)
def test_permissions_removed_on_a_tracked_file(world_root: Path) -> None:
    remote = bare_remote(world_root / "remote.git")
    alice = Peer.create(world_root, "alice", remote)
    alice.append_entry("readable before")
    alice.write_curated("locked", "soon unreadable\n")
    subprocess.run(["chown", "-R", "nobody:nogroup", str(world_root)], check=True)
    as_nobody = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
        sys.executable,
        "-m",
        "memsync",
        "sync",
    ]

    def sync_as_nobody() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            as_nobody,
            env={**os.environ, **alice.env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert sync_as_nobody().returncode == 0
    later = alice.append_entry("appended before the chmod")
    alice.write_curated("open", "this one stays readable\n")
    for path in (alice.memory_file, alice.role_dir / "locked.md"):
        path.chmod(0)
    said = sync_as_nobody()
    assert "Traceback" not in said.stderr and said.returncode in (1, 75), said.stderr
    assert "Permission denied" in said.stderr, said.stderr
    for path in (alice.memory_file, alice.role_dir / "locked.md"):
        path.chmod(0o644)
    assert sync_as_nobody().returncode == 0
    pushed = git(
        world_root, "-c", "safe.directory=*", "--git-dir", str(remote), "show", f"main:{MEMORY_STORE}"
    ).encode()
    assert later in pushed
    assert git(
        world_root, "-c", "safe.directory=*", "--git-dir", str(remote), "show", f"main:{ROLE_STORE}/open.md"
    ).endswith("this one stays readable\n")


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs (skips, visibly, where mounting is not allowed)."""
    with tmpfs(tmp_path / "tiny", "3m") as disk:
        yield disk.path


def _fill_store_disk(
    tmp_path: Path, remote: Path, mount: Path
) -> tuple[Peer, bytes, bytes, subprocess.CompletedProcess[str]]:
    """A peer whose store lives on the tiny tmpfs: one entry synced, then the disk filled and a big entry
    appended and synced. Returns (peer, first line, big line, the failed sync)."""
    alice = Peer.create(tmp_path, "alice", remote, init_store=False)
    alice.config.write_text(alice.config.read_text().replace(str(alice.store), str(mount / "store")))
    alice.store = mount / "store"
    alice.init_store()
    first = alice.append_entry("fits on the disk")
    sync(alice)
    (mount / "filler").write_bytes(b"\0" * max(0, shutil.disk_usage(mount).free - 8 * 1024))
    big = alice.append_entry("x" * 200_000)
    return alice, first, big, alice.main("sync")


def test_disk_full_during_a_commit_loses_nothing(tmp_path: Path, remote: Path, small_tmpfs: Path) -> None:
    alice, first, big, said = _fill_store_disk(tmp_path, remote, small_tmpfs)
    assert said.returncode != 0 and "Traceback" not in said.stderr
    assert len(said.stderr.strip().splitlines()) == 1
    assert alice.read_live(MEMORY_FILE) == HEADER + first + big
    (small_tmpfs / "filler").unlink()
    sync(alice)
    git(alice.store, "fsck", "--no-progress")
    bob = Peer.create(tmp_path, "bob", remote)
    sync(bob)
    assert lines(bob.read_live(MEMORY_FILE)) == lines(HEADER + first + big)


def test_disk_full_during_a_commit_says_so(tmp_path: Path, remote: Path, small_tmpfs: Path) -> None:
    _alice, _first, _big, said = _fill_store_disk(tmp_path, remote, small_tmpfs)
    assert said.returncode == 1, said.stderr
    assert "No space left" in said.stderr or "disk is full" in said.stderr or "disk full" in said.stderr


# --- what a peer pushes --------------------------------------------------------------------------


def peer_push(remote: Path, tmp_path: Path, change: str) -> None:
    """Act as a hostile or broken peer: clone the remote, run the shell ``change`` in it, commit, push."""
    work = tmp_path / "tools" / "hostile"
    if work.exists():
        shutil.rmtree(work)
    git(tmp_path, "clone", "-q", str(remote), str(work))
    subprocess.run(change, shell=True, cwd=work, check=True)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "hostile change")
    git(work, "push", "-q", "origin", "HEAD:main")


def test_a_peer_pushes_gitattributes_assigning_other_drivers(
    pair: tuple[Peer, Peer], remote: Path, tmp_path: Path
) -> None:
    alice, bob = pair
    alice.append_daily("- [09:00] base line\n")
    both_sync(alice, bob)
    peer_push(
        remote,
        tmp_path,
        "printf '* merge=union\\n*.jsonl merge=binary\\n* text eol=crlf\\n"
        "* filter=evil\\n' > .gitattributes && "
        f"printf -- '- [09:05] hostile line\\n' >> {ROLE_STORE}/{DAILY} && "
        f'printf \'{{"id":"h1","kind":"fact","text":"from the peer",'
        f'"created_at":"2026-11-30T00:00:00Z"}}\\n\' >> {MEMORY_STORE}',
    )
    ours = alice.append_entry("written here at the same time")
    alice.append_daily("- [09:06] alice line\n")
    sync(alice)
    memory, daily = alice.read_live(MEMORY_FILE), alice.read_live(DAILY)
    assert ours in memory and b'"id":"h1"' in memory
    assert b"hostile line" in daily and b"alice line" in daily
    assert b"\r\n" not in memory + daily
    for blob in store_blobs(alice, f"{ROLE_STORE}/{DAILY}") + store_blobs(alice, MEMORY_STORE):
        assert b"<<<<<<<" not in blob and b"\r\n" not in blob
    assert b"memsync-jsonl" in (alice.store / ".git" / "info" / "attributes").read_bytes()


def test_a_peer_pushes_an_absolute_symlink_into_a_role_directory(
    pair: tuple[Peer, Peer], remote: Path, tmp_path: Path
) -> None:
    alice, _ = pair
    target = tmp_path / "tools" / "outside"
    target.mkdir(parents=True)
    (target / "victim.md").write_text("must stay untouched\n")
    peer_push(
        remote,
        tmp_path,
        f"mkdir -p {ROLE_STORE} && ln -s {target} {ROLE_STORE}/escape && "
        f"ln -s {target}/victim.md {ROLE_STORE}/victim.md && "
        f"ln -s /etc/passwd {ROLE_STORE}/passwd.md",
    )
    alice.write_curated("local", "written here\n")
    sync(alice)
    assert (target / "victim.md").read_text() == "must stay untouched\n"
    assert sorted(p.name for p in target.iterdir()) == ["victim.md"]
    for name in ("escape", "victim.md", "passwd.md"):
        live = alice.role_dir / name
        assert not live.is_symlink()
        links = (str(target).encode(), f"{target}/victim.md".encode(), b"/etc/passwd")
        assert not live.exists() or live.read_bytes() in links
    alice.write_curated("victim", "alice writes her own victim.md\n")
    sync(alice)
    assert (target / "victim.md").read_text() == "must stay untouched\n"


def test_a_peer_pushes_a_path_with_dot_dot(pair: tuple[Peer, Peer], remote: Path, tmp_path: Path) -> None:
    alice, _ = pair
    work = tmp_path / "tools" / "crafted"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=work,
            input=b"escaped\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    inner = (
        subprocess.run(
            ["git", "mktree", "--missing"],
            cwd=work,
            capture_output=True,
            check=True,
            input=f"100644 blob {blob}\tescaped.md\n".encode(),
        )
        .stdout.decode()
        .strip()
    )
    tree = subprocess.run(
        ["git", "mktree", "--missing"],
        cwd=work,
        capture_output=True,
        check=False,
        input=f"040000 tree {inner}\t..\n".encode(),
    )
    if tree.returncode != 0:
        pytest.skip(f"this git refuses to build a tree with '..': {tree.stderr.decode().strip()}")
    head = git(work, "rev-parse", "HEAD").strip()
    commit = git(work, "commit-tree", tree.stdout.decode().strip(), "-p", head, "-m", "dot dot").strip()
    pushed = subprocess.run(
        ["git", "push", "-q", str(remote), f"{commit}:refs/heads/main"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    if pushed.returncode != 0:
        pytest.skip(f"the remote refused the crafted tree: {pushed.stderr.strip()}")
    line = alice.append_entry("local work goes on")
    said = alice.main("sync")
    assert "Traceback" not in said.stderr
    assert not (alice.store.parent / "escaped.md").exists()
    assert not (tmp_path / "escaped.md").exists()
    assert line in alice.read_store(MEMORY_STORE)
    assert said.returncode in (0, 75)


def test_a_peer_whose_history_was_rewritten(pair: tuple[Peer, Peer], remote: Path, tmp_path: Path) -> None:
    alice, bob = pair
    first = alice.append_entry("before the rewrite")
    both_sync(alice, bob)
    work = tmp_path / "tools" / "rewriter"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    git(work, "checkout", "-q", "--orphan", "rewritten")
    git(work, "commit", "-q", "-m", "history rewritten by someone")
    git(work, "push", "-q", "--force", "origin", "rewritten:main")
    mine = alice.append_entry("written after the rewrite")
    said = alice.main("sync")
    assert said.returncode == 75, said.stderr
    assert "rewritten" in said.stderr and "memsync resync origin" in said.stderr
    assert first in alice.read_store(MEMORY_STORE) and mine in alice.read_store(MEMORY_STORE)
    status = alice.status()["stores"]["main"]["remotes"]["origin"]
    assert status["status"] == "diverged" and "memsync resync origin" in status["last_error"]
    resynced = alice.main("resync", "origin")
    assert resynced.returncode == 0, resynced.stderr
    assert mine in git(remote, "show", f"main:{MEMORY_STORE}").encode()


# --- the daemon keeps running ---------------------------------------------------------------------


@pytest.mark.slow
def test_the_daemon_survives_the_file_level_bad_inputs(pair: tuple[Peer, Peer]) -> None:
    alice, bob = pair
    with alice.running(), bob.running():
        with alice.memory_file.open("ab") as out:
            out.write(b'{"broken": \n[1,2]\n\xff\xfe\n{"id":"n","text":"a\x00b"}\n' + HEADER)
        (alice.role_dir / "up").symlink_to(alice.role_dir)
        alice.append_daily("- [09:00] \xff not utf-8 as text, fine as bytes\n")
        line = alice.append_entry("the daemon still syncs after all that")
        wait_for(lambda: line in bob.read_live(MEMORY_FILE), timeout=20, what="the last line at bob")
        assert not alice.proc_dead() and not bob.proc_dead()
        # Everything but the line that is not UTF-8, which stays on alice's machine (status lists it).
        assert lines(bob.read_live(MEMORY_FILE)) == lines(alice.read_live(MEMORY_FILE)) - lines(b"\xff\xfe\n")
    assert "Traceback" not in alice.log() + bob.log()

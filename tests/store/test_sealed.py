"""The exchange with an encrypted remote on the store API (``memsync.store.sealed``): real stores, real
git, a real bare remote. What a cycle costs beyond a plaintext one, counted in git processes (git's own
trace2 events); the bundles a device reads do not pile up as packs; a bundle is taken from any bytes
without an exception, and one whose base this device lacks is named and nothing taken from it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.config.file import StoreConfig
from memsync.crypt.vault import Vault
from memsync.store import sealed
from memsync.store.facade import Store
from tests.support.helpers import bare_remote, git
from tests.support.stores import append, commit, identity, read

FILE = "memory/memory.jsonl"
HEAD = b"# v2 git bundle\n"
# The author, committer and message of every ciphertext commit.
GENERIC = ("memsync", "memsync@invalid", "memsync", "memsync@invalid", "sealed")
# Git processes an encrypted cycle may run beyond the plaintext one, those git starts itself included:
# writer (pack-objects, fast-import and its unpack-objects, tracking ref; the vault's refs read from
# their files when nothing new came), reader (vault cat-file with the new bundle, the objects written,
# tracking ref; its head known without a rev-parse). The vault's read mark is a file when only it moves;
# its fetch starts no automatic maintenance. Before: 7 and 6.
EXTRA_WRITER_GITS = 4
EXTRA_READER_GITS = 2


def device(root: Path, name: str, remote: Path, *, encrypt: bool) -> Store:
    """A store of peer ``name`` on the path ``remote``, encrypted or not."""
    cfg = StoreConfig(name, root / name, remotes={"origin": str(remote)}, encrypt=encrypt)
    return Store.init_or_clone(cfg, identity(name), name)


def entry(store: Store, text: str) -> str:
    """Append and commit one entry holding ``text``; returns its line."""
    line = f'{{"id":"{text}","kind":"lesson","text":"{text}"}}\n'
    (store.worktree / FILE).parent.mkdir(parents=True, exist_ok=True)
    append(store, FILE, line)
    commit(store, f"+1 entry {text}")
    return line


def started_gits(trace: Path) -> int:
    """How many git processes a cycle ran, from git's trace2 event file ``trace``: those memsync started
    and those they started themselves (the remote's side of a fetch or push, an automatic
    maintenance), their sid nested under their parent's. The `gc --auto` that one push in 16 (by its
    commit's id) runs in the ciphertext repository, and what it starts, are upkeep, not counted: which
    push runs it changes from run to run."""
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    starts = [event for event in events if event["event"] == "start"]
    upkeep = [event["sid"] for event in starts if event["argv"][1:2] == ["gc"]]
    return sum(1 for event in starts if not any(event["sid"].startswith(sid) for sid in upkeep))


def cycle_gits(root: Path, monkeypatch: pytest.MonkeyPatch, *, encrypt: bool) -> tuple[int, int]:
    """Git processes of one one-entry cycle on a writer and on a reader (after one to warm up),
    the reader checked to hold the entry."""
    remote = bare_remote(root / "remote.git")
    writer, reader = (
        device(root, "writer", remote, encrypt=encrypt),
        device(root, "reader", remote, encrypt=encrypt),
    )
    entry(writer, "warm")  # the first exchanges clone and make the key: not what a cycle costs
    assert writer.exchange()[0].status == "ok"
    assert reader.exchange()[0].status == "ok"
    counted = []
    for side in ("writer", "reader"):
        trace = root / f"trace-{side}"
        if side == "writer":
            line = entry(writer, "counted")
        monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
        outcome = (writer if side == "writer" else reader).exchange()[0]
        monkeypatch.delenv("GIT_TRACE2_EVENT")
        assert outcome.status == "ok", outcome.message
        counted.append(started_gits(trace))
    assert read(reader, FILE).endswith(line)
    return counted[0], counted[1]


@pytest.mark.slow
def test_an_encrypted_cycle_runs_few_git_processes_beyond_a_plaintext_one(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = cycle_gits(tmp_path / "plain", monkeypatch, encrypt=False)
    sealed_ = cycle_gits(tmp_path / "sealed", monkeypatch, encrypt=True)
    assert sealed_[0] - plain[0] <= EXTRA_WRITER_GITS, (plain, sealed_)
    assert sealed_[1] - plain[1] <= EXTRA_READER_GITS, (plain, sealed_)


def test_a_push_moves_no_ciphertext_ref_after_it_and_a_remote_rolled_back_is_still_refused(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer = device(tmp_path, "writer", remote, encrypt=True)
    entry(writer, "first")
    assert writer.exchange()[0].status == "ok"
    entry(writer, "second")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    assert writer.exchange()[0].status == "ok"
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    started = [
        event["argv"][1]
        for event in map(json.loads, trace.read_text().splitlines())
        if event["event"] == "start" and "/" not in event["sid"]
    ]
    # After the push only the store's tracking ref moves: the vault's read mark is a file. One push in 16
    # (by its commit's id) also runs `gc --auto` in the ciphertext repository, which moves no ref.
    after = [name for name in started[started.index("push") + 1 :] if name != "gc"]
    assert after == ["update-ref"], started
    # The host rolls its branch back behind that push: still a rewrite, nothing read from it.
    git(remote, "update-ref", "refs/heads/main", "main~1")
    entry(writer, "third")
    outcome = writer.exchange()[0]
    assert outcome.status == "conflict" and "ciphertext history" in outcome.message, outcome
    assert "was rewritten" in outcome.message and not outcome.pushed


def test_each_ciphertext_commit_is_dated_a_second_after_its_parent_whoever_appends_it(
    tmp_path: Path, home: Path
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer = device(tmp_path, "writer", remote, encrypt=True)
    # The same store opened again (a one-shot sync beside a daemon): its own ciphertext repository
    # object, which knows nothing of what the first one appended.
    again = Store.init_or_clone(writer.cfg, identity("writer"), "writer")
    reader = device(tmp_path, "reader", remote, encrypt=True)
    lines = []
    for store, text in ((writer, "first"), (again, "second"), (writer, "third"), (writer, "fourth")):
        lines.append(entry(store, text))
        assert store.exchange()[0].status == "ok"
    assert reader.exchange()[0].status == "ok"
    assert read(reader, FILE).endswith("".join(lines))
    # Dates rise by one second a commit (git's walks between two of them then stop at once); who made
    # them and when stays unsaid.
    dated = git(remote, "log", "--format=%ct %at %an %ae %cn %ce %s", "main").splitlines()
    seconds = [int(line.split()[0]) for line in dated]
    assert seconds == list(range(946684800 + len(dated) - 1, 946684799, -1)), dated
    assert {tuple(line.split()[1:]) == (line.split()[0], *GENERIC) for line in dated} == {True}


@settings(max_examples=15, deadline=None)
@given(date=st.one_of(st.integers(4102444800, 10**12 - 1).map(str), st.just("9" * 5000), st.just("x")))
def test_a_tip_with_a_date_no_later_commit_can_follow_is_appended_to_as_if_dated_first(
    tmp_path_factory: pytest.TempPathFactory, date: str
) -> None:
    root = tmp_path_factory.mktemp("vault")
    remote = bare_remote(root / "remote.git")
    vault = Vault(root / "vault.git", str(remote), "main", 30.0, None)
    first = vault.append(b"sealed")
    # A peer's commit on top, dated past 2100 or beyond any number git takes (or not at all): the remote's
    # bytes, whatever they are, must not stop the next push.
    tree = git(root / "vault.git", "rev-parse", f"{first}^{{tree}}").strip()
    odd = f"tree {tree}\nparent {first}\nauthor a <a> 1 +0000\ncommitter c <c> {date} +0000\n\nodd\n"
    made = subprocess.run(
        ["git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
        cwd=root / "vault.git",
        input=odd.encode(),
        capture_output=True,
        check=True,
    )
    tip = made.stdout.decode().strip()
    git(root / "vault.git", "push", "-q", str(remote), f"{tip}:refs/heads/main")
    assert vault.fetch() is None and vault.tip == tip
    after = vault.append(b"sealed again")
    shown = git(root / "vault.git", "cat-file", "commit", after)
    assert f"parent {tip}\n" in shown and " 946684801 +0000\n" in shown, shown  # the first date, plus one


@pytest.mark.slow
def test_bundles_read_do_not_pile_up_as_packs(tmp_path: Path, home: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer, reader = (
        device(tmp_path, "writer", remote, encrypt=True),
        device(tmp_path, "reader", remote, encrypt=True),
    )
    packs = reader.git_dir / "objects" / "pack"
    before = sorted(packs.glob("*.pack"))
    lines = []
    for i in range(4):
        lines.append(entry(writer, f"entry-{i}"))
        assert writer.exchange()[0].status == "ok"
        assert reader.exchange()[0].status == "ok"
    assert read(reader, FILE) == "".join(lines)
    # A small bundle's objects are written loose, as a fetch writes a small pack; gc packs them later.
    assert sorted(packs.glob("*.pack")) == before


def test_a_bundle_whose_base_this_device_lacks_is_named_and_nothing_taken(tmp_path: Path, home: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    writer, reader = (
        device(tmp_path, "writer", remote, encrypt=True),
        device(tmp_path, "reader", remote, encrypt=True),
    )
    entry(writer, "base")
    assert writer.exchange()[0].status == "ok"
    entry(writer, "on top")
    head = subprocess.run(
        ["git", "-C", str(writer.worktree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    bundle = subprocess.run(
        ["git", "-C", str(writer.worktree), "bundle", "create", "-q", "-", "main", "^HEAD~1"],
        capture_output=True,
        check=True,
    ).stdout
    problem = sealed.take(reader._g, "origin", bundle)
    assert problem is not None and problem.strip()
    assert reader._g.rev(sealed.tracking(reader._g, "origin")) != head
    assert sealed.take(writer._g, "origin", bundle) is None  # the writer holds the base: taken
    assert writer._g.rev(sealed.tracking(writer._g, "origin")) == head


@pytest.fixture(scope="module")
def bare_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A store without remotes: where bundles of any bytes are taken (hypothesis runs a test many times
    with the same fixtures)."""
    root = tmp_path_factory.mktemp("any-bytes")
    return Store.init_or_clone(StoreConfig("reader", root / "reader"), identity("reader"), "reader")


@settings(max_examples=60, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.binary(max_size=300).map(lambda tail: HEAD + tail),
        st.binary(max_size=300).map(lambda tail: HEAD + b"0" * 40 + b" refs/heads/main\n\n" + tail),
        st.binary(max_size=300).map(lambda tail: HEAD + b"a" * 40 + b" refs/heads/main\n\nPACK" + tail),
    )
)
def test_a_bundle_of_any_bytes_is_refused_in_words(bare_store: Store, data: bytes) -> None:
    ref = sealed.tracking(bare_store._g, "origin")
    problem = sealed.take(bare_store._g, "origin", data)
    assert problem is not None and problem.strip()
    assert bare_store._g.rev(ref) is None

"""A machine with a bad clock (DESIGN "Hostile input", "View semantics"): a superseding entry wins
whatever its date; `check`, `status` and `doctor` flag entries dated in the future of this machine's
clock, naming the host that committed them; memsync's own writers refuse to write while this clock runs
ahead of the peers that built on its commits. Real git stores, real `memsync` subprocesses; the bad clock
is real too (faketime), where it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.formats.jsonl.records import Entry
from memsync.formats.jsonl.view import build_view
from memsync.memoryfile.clock import TOLERANCE_S, clock_skew
from tests.support.helpers import git
from tests.support.peers import MEMORY_FILE, Peer

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FUTURE = "2099-01-01T00:00:00Z"
STAMPS = st.sampled_from(["2020-01-01T00:00:00Z", "2026-11-30T12:00:00Z", "2026-11-30T12:00:01Z", FUTURE])


def _entry(entry_id: str, created_at: str, supersedes: str | None = None, source: str = "user") -> Entry:
    return Entry(entry_id, "fact", f"text of {entry_id}", created_at, source=source, supersedes=supersedes)


def test_a_future_dated_version_outranks_a_later_version_of_the_same_id() -> None:
    """Why a correction must supersede: a new version of the same id loses to one dated 2099."""
    view = build_view([_entry("a", FUTURE), _entry("a", "2026-11-30T11:00:00Z")], NOW)
    assert [e.created_at for e in view] == [FUTURE]


@settings(max_examples=60, deadline=None)
@given(target=STAMPS, correction=STAMPS, later=STAMPS, inferred=st.booleans())
def test_a_superseding_entry_wins_whatever_the_dates(
    target: str, correction: str, later: str, inferred: bool
) -> None:
    """The superseded id drops out whatever the dates of the target, of the correction, and of a version
    of the target written after it; an inferred correction of an inferred entry counts the same."""
    source = "session:x" if inferred else "user"
    records = [
        _entry("old", target, source=source),
        _entry("new", correction, supersedes="old", source=source),
        _entry("old", later, source=source),
    ]
    for order in (records, records[::-1]):
        assert [e.id for e in build_view(order, NOW)] == ["new"]


def _commit(repo: Path, host: str, when: datetime, name: str) -> None:
    (repo / name).write_text(name)
    git(repo, "add", name)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    env = {"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    git(repo, "commit", "-q", "-m", f"{name}\n\nMemsync-Host: {host}", env=env)


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, Path]:
    """alice's store (the machine under test) and bob's and carol's clones, sharing a bare remote."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    alice = tmp_path / "alice"
    git(tmp_path, "init", "-q", "-b", "main", str(alice))
    git(alice, "remote", "add", "origin", str(remote))
    _commit(alice, "alice", NOW - timedelta(days=1), "first")
    git(alice, "push", "-q", "origin", "main")
    for peer in ("bob", "carol"):
        git(tmp_path, "clone", "-q", str(remote), str(tmp_path / peer))
    return {"alice": alice, "bob": tmp_path / "bob", "carol": tmp_path / "carol", "remote": remote}


def test_no_peer_after_this_machine_is_no_evidence(stores: dict[str, Path]) -> None:
    alice = stores["alice"]
    _commit(stores["bob"], "bob", NOW - timedelta(days=30), "old-bob")  # idle for a month: says nothing
    git(stores["bob"], "pull", "-q", "--no-rebase", "origin", "main")
    _commit(alice, "alice", NOW, "mine")
    git(alice, "fetch", "-q", "origin")
    assert clock_skew(alice, "alice") is None
    assert clock_skew(alice, "nobody") is None


def test_a_peer_that_built_on_this_machine_and_dated_it_earlier_shows_the_skew(
    stores: dict[str, Path],
) -> None:
    alice, bob, carol = stores["alice"], stores["bob"], stores["carol"]
    _commit(alice, "alice", NOW + timedelta(days=2), "ahead")  # this clock says two days later
    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q", "origin", "main")
    _commit(bob, "bob", NOW, "after-alice")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "fetch", "-q", "origin")
    skew = clock_skew(alice, "alice")
    assert skew is not None and skew.host == "bob"
    assert skew.ahead_s == pytest.approx(2 * 86400) and skew.ahead_s > TOLERANCE_S
    # A second peer whose clock agrees with this one clears it: it is bob's clock that is off.
    git(carol, "pull", "-q", "origin", "main")
    _commit(carol, "carol", NOW + timedelta(days=2, minutes=1), "carol-agrees")
    git(carol, "push", "-q", "origin", "main")
    git(alice, "fetch", "-q", "origin")
    assert clock_skew(alice, "alice") is None


def _future_line(text: str) -> bytes:
    """An entry line an agent on a machine with a bad clock wrote: dated 2099."""
    record = {"id": "f0f0f0f0f0f0", "kind": "fact", "text": text, "source": "user", "created_at": FUTURE}
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"


@pytest.mark.slow
def test_check_status_and_doctor_name_the_host_and_a_superseding_entry_corrects_it(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    with alice.memory_file.open("ab") as out:
        out.write(_future_line("deploys go through the old pipeline"))
    for peer in (alice, bob):
        assert peer.cli("sync").returncode == 0
    check = bob.cli("check", str(bob.memory_file))
    assert check.returncode == 1
    assert "entry f0f0f0f0f0f0 is dated 2099-01-01T00:00:00Z" in check.stdout
    assert "written by host alice" in check.stdout and "--supersedes f0f0f0f0f0f0" in check.stdout
    future = bob.status()["stores"]["main"]["future_entries"]
    assert [(e["file"], e["id"], e["host"]) for e in future] == [
        (str(bob.memory_file), "f0f0f0f0f0f0", "alice")
    ]
    assert "dated in the future:" in bob.cli("status").stdout
    doctor = bob.cli("doctor").stdout
    assert "WARN future entries in main: 1 entry dated in the future, written by alice" in doctor

    fixed = bob.cli(
        "remember",
        "deploys go through the new pipeline",
        "--supersedes",
        "f0f0f0f0f0f0",
        "-f",
        str(bob.memory_file),
    )
    assert fixed.returncode == 0 and "(supersedes f0f0f0f0f0f0)" in fixed.stdout
    for peer in (bob, alice):
        assert peer.cli("sync").returncode == 0
    for peer in (alice, bob):
        shown = peer.cli("show", str(peer.memory_file)).stdout
        assert "the new pipeline" in shown and "the old pipeline" not in shown
        assert peer.cli("check", str(peer.memory_file)).returncode == 0
        assert peer.status()["stores"]["main"]["future_entries"] == []


def _faked(peer: Peer, offset: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``memsync ARGS`` on ``peer`` with its clock ``offset`` ahead (faketime: git's too)."""
    return subprocess.run(
        ["faketime", "-f", offset, sys.executable, "-m", "memsync", *args],
        env={**os.environ, **peer.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime (apt-get install faketime)")
def test_a_machine_whose_clock_runs_ahead_is_flagged_then_stopped_then_corrected(
    tmp_path: Path, remote: Path
) -> None:
    alice, bob = Peer.create(tmp_path, "alice", remote), Peer.create(tmp_path, "bob", remote)
    for peer in (alice, bob):
        assert peer.cli("sync").returncode == 0
    # alice's clock jumps two days ahead: nothing says so yet, and what she writes is dated then.
    stale = _faked(alice, "+2d", "remember", "the staging host is db-old", "-f", str(alice.memory_file))
    assert stale.returncode == 0, stale.stderr
    stale_id = stale.stdout.split()[1]
    assert _faked(alice, "+2d", "sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    check = bob.cli("check", str(bob.memory_file))
    assert check.returncode == 1 and f"entry {stale_id} is dated" in check.stdout
    assert "2 days ahead of this machine's clock (written by host alice)" in check.stdout
    # bob writes after her commit: his commit, dated by a good clock, descends from hers.
    assert bob.cli("remember", "bob was here", "-f", str(bob.memory_file)).returncode == 0
    assert bob.cli("sync").returncode == 0
    assert _faked(alice, "+2d", "sync").returncode == 0
    before = alice.read_live(MEMORY_FILE)
    for refused in (
        _faked(alice, "+2d", "remember", "another stale fact", "-f", str(alice.memory_file)),
        _faked(alice, "+2d", "forget", stale_id, "-f", str(alice.memory_file)),
    ):
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert "this machine's clock looks 2 days ahead: host bob committed" in refused.stderr
        assert "Fix the clock" in refused.stderr
    assert alice.read_live(MEMORY_FILE) == before
    doctor = _faked(alice, "+2d", "doctor").stdout
    assert "FAIL clock vs peers of main: 2 days ahead: host bob" in doctor
    # bob corrects the entry with one that supersedes it; alice's clock is fixed and she writes again.
    fixed = bob.cli(
        "remember", "the staging host is db-new", "--supersedes", stale_id, "-f", str(bob.memory_file)
    )
    assert fixed.returncode == 0, fixed.stderr
    assert bob.cli("sync").returncode == 0
    assert alice.cli("sync").returncode == 0
    assert alice.cli("remember", "clock fixed", "-f", str(alice.memory_file)).returncode == 0
    for peer in (alice, bob):
        shown = peer.cli("show", str(peer.memory_file)).stdout
        assert "db-new" in shown and "db-old" not in shown

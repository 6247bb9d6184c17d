"""The two versions an entry merge keeps are labelled with the host and time of the commit that wrote each
(git tells its drivers nothing: memsync names the sides in the driver's environment), the same bytes
whichever direction the merge runs; `memsync conflicts` and the UI read the labels, and old unlabelled
files.
A sync that labels a conflict between two peers is in test_conflicts_cli."""

from __future__ import annotations

import calendar
import html
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.commands.conflicts import Versions, split_versions
from memsync.merge.entry import BOTH_KEPT_NOTE, merge_entry
from memsync.merge.labels import LABEL_TIME_FORMAT
from tests.support.helpers import bare_remote, git
from tests.support.peers import Peer
from tests.support.stores import commit, new_store, read, write

HEAD = "---\nname: deploys\ndescription: how we deploy\ntype: project\n---\n"
ALICE = "Deploy on Wednesdays, after the standup.\n"
BOB = "Deploy on Thursdays, never on Fridays.\n"


def _ok(peer: Peer, *args: str) -> str:
    done = peer.cli(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _utc(seconds: str) -> str:
    return time.strftime(LABEL_TIME_FORMAT, time.gmtime(int(seconds)))


def _kept(first: tuple[str, str], second: tuple[str, str]) -> str:
    """A body with both versions kept as the entry driver writes it: (label, text) in version order."""
    return (
        f"{BOTH_KEPT_NOTE}\n\n[memsync] version 1 of 2, from {first[0]}\n{first[1]}"
        f"[memsync] version 2 of 2, from {second[0]}\n{second[1]}"
    )


def test_merges_in_both_directions_write_the_same_labelled_bytes(tmp_path: Path) -> None:
    one, two = bare_remote(tmp_path / "one.git"), bare_remote(tmp_path / "two.git")
    alpha = new_store(tmp_path / "alpha", "alpha", {"one": one, "two": two})
    rel = "roles/dev/tools.md"
    write(alpha, rel, "Use the old tool.\n")
    commit(alpha, "dev: +tools")
    assert all(outcome.pushed for outcome in alpha.exchange())
    beta = new_store(tmp_path / "beta", "beta", {"one": one, "two": two})
    write(alpha, rel, "Use the new tool (alpha).\n")
    write(beta, rel, "Use the other tool (beta).\n")
    commit(alpha, "dev: tools by alpha")
    commit(beta, "dev: tools by beta")
    times = {store.host: git(store.worktree, "log", "-1", "--format=%at").strip() for store in (alpha, beta)}
    # Each pushes to its own remote first, then merges the other's commit: alpha merges beta's commit
    # into its own, beta merges alpha's into its own (no replay: each commit is on a remote already).
    assert alpha.exchange(["one"])[0].pushed and beta.exchange(["two"])[0].pushed
    assert alpha.exchange(["two"])[0].merged and beta.exchange(["one"])[0].merged

    assert (
        read(alpha, rel)
        == read(beta, rel)
        == _kept(
            (f"alpha at {_utc(times['alpha'])}", "Use the new tool (alpha).\n"),
            (f"beta at {_utc(times['beta'])}", "Use the other tool (beta).\n"),
        )
    )


_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=40)
_LABEL = st.none() | st.from_regex(
    r"[a-z]{1,8} at 2026-12-0[1-9] 1[0-9]:[0-5][0-9]:[0-5][0-9] UTC", fullmatch=True
)


@settings(max_examples=40, deadline=None)
@given(base=_TEXT, ours=_TEXT, theirs=_TEXT, labels=st.tuples(_LABEL, _LABEL))
def test_a_labelled_entry_merge_is_symmetric(
    base: str, ours: str, theirs: str, labels: tuple[str | None, str | None]
) -> None:
    sides = [text.encode("utf-8", "surrogateescape") for text in (base, ours, theirs)]
    forward = merge_entry(sides[0], sides[1], sides[2], labels)
    assert forward == merge_entry(sides[0], sides[2], sides[1], (labels[1], labels[0]))
    if b"[memsync] version 1 of 2" in forward:
        for label in labels:
            assert label is None or f"of 2, from {label}\n".encode() in forward


@pytest.mark.slow  # a sync, four CLI runs and a UI server: about 15 s on a loaded machine
def test_conflicts_reads_old_unlabelled_files_and_labelled_ones(tmp_path: Path, remote: Path) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    versions = "[memsync] version 1 of 2\nDeploy at 9.\n[memsync] version 2 of 2\nDeploy at 10.\n"
    old = f"{BOTH_KEPT_NOTE}\n\n{versions}"
    (alice.role_dir / "old.md").write_text(old)
    labelled = _kept(
        ("carol at 2026-01-02 03:04:05 UTC", "Test first.\n"), ("dave at 2026-01-02 03:04:06 UTC", "Ship.\n")
    )
    (alice.role_dir / "new.md").write_text(labelled)
    _ok(alice, "sync")

    listed = _ok(alice, "conflicts").splitlines()
    by_file = {listed[i]: listed[i + 1 : i + 3] for i in range(0, len(listed), 3)}
    new_labels = by_file[f"{alice.role_dir / 'new.md'} [main]"]
    written = calendar.timegm((2026, 1, 2, 3, 4, 5, 0, 0, 0))
    zone_time = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(written))
    assert new_labels[0] == f"    1: carol, {zone_time}", listed
    assert new_labels[1].startswith("    2: dave, 2026-01-0"), listed
    # An unlabelled file (merged before labels existed) is labelled from the commit that wrote each line.
    old_labels = by_file[f"{alice.role_dir / 'old.md'} [main]"]
    assert [label.split(",")[0] for label in old_labels] == ["    1: alice", "    2: alice"], listed
    # The UI's conflicts page shows the same hosts and times.
    ui = subprocess.Popen(
        [sys.executable, "-m", "memsync", "ui", "--no-browser"],
        env={**os.environ, **alice.env},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert ui.stdout is not None
        url = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", ui.stdout.readline())
        assert url, "no URL printed"
        with urllib.request.urlopen(f"{url[1]}/conflicts?token={url[2]}", timeout=30) as reply:
            page = html.unescape(reply.read().decode())
    finally:
        ui.terminate()
        ui.wait(timeout=20)
    assert f"<h3>1: carol, {zone_time}</h3>" in page and "<h3>2: dave, 2026-01-0" in page, page
    assert "<h3>1: alice, " in page
    assert str(alice.role_dir / "new.md") in page

    _ok(alice, "resolve", str(alice.role_dir / "old.md"), "--keep", "2")
    assert (alice.role_dir / "old.md").read_text() == "Deploy at 10.\n"
    _ok(alice, "resolve", str(alice.role_dir / "new.md"), "--keep", "1")
    assert (alice.role_dir / "new.md").read_text() == "Test first.\n"


def test_old_and_labelled_version_lines_both_split() -> None:
    old = f"---\nname: x\n---\n{BOTH_KEPT_NOTE}\n\n[memsync] version 1 of 2\na\n[memsync] version 2 of 2\nb\n"
    assert split_versions(old) == Versions("---\nname: x\n---\n", "a\n", "b\n", (None, None))
    labelled = _kept(("carol at 2026-01-02 03:04:05 UTC", "a\n"), ("dave at 2026-01-02 03:04:06 UTC", "b\n"))
    assert split_versions(labelled) == Versions(
        "", "a\n", "b\n", ("carol at 2026-01-02 03:04:05 UTC", "dave at 2026-01-02 03:04:06 UTC")
    )
    assert split_versions(labelled.replace("version 2 of 2", "version 3 of 2")) is None

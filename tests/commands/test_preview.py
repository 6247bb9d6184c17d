"""`memsync sync --dry-run` and `memsync diff`: what a sync would commit and push, per store and remote,
file by file, held-back lines named by file and line (never shown), and nothing changed: the stores,
the live files and the remotes stay byte for byte as they were."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.commands.preview import _appended, _file_change
from memsync.sync.files import TrackFile
from tests.support.handoff_fixtures import FAKE_TOKEN
from tests.support.helpers import bare_remote, git, run_cli


def _bytes_of(root: Path) -> dict[str, str]:
    """Every file under ``root`` (a store with its .git, a live folder, a bare remote) -> its sha256."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.slow  # a whole scenario through real CLI processes: the long tier
def test_dry_run_and_diff_show_what_a_sync_would_do_and_change_nothing(home: Path, tmp_path: Path) -> None:
    qa = home / ".agents" / "memory" / "qa"
    (qa / "daily").mkdir(parents=True)
    (qa / "MEMORY.md").write_text("# Memory index — qa\n")
    log = qa / "daily" / "2026-12-03.md"
    log.write_text("- [09:00] first\n")
    notes = home / "team-notes"
    notes.mkdir()
    (notes / "plan.md").write_text("---\nname: Plan\ndescription: the plan\ntype: project\n---\nShip it.\n")
    personal, team = bare_remote(tmp_path / "personal.git"), bare_remote(tmp_path / "team.git")
    assert run_cli("init", "--remote", str(personal)).returncode == 0
    assert run_cli("store", "add", "team", "--remote", str(team)).returncode == 0
    assert run_cli("track", str(notes), "--store", "team", "--as", "notes").returncode == 0
    assert run_cli("sync").returncode == 0
    # Local work since: two lines (the second holds a token), a new curated file, an edit in the team.
    with log.open("a") as stream:
        stream.write(f"- [10:00] second\n- [10:01] the deploy token is {FAKE_TOKEN}\n")
    (qa / "deploy.md").write_text("---\nname: Deploy\ndescription: how\ntype: project\n---\nRun make.\n")
    (notes / "plan.md").write_text(
        "---\nname: Plan\ndescription: the plan\ntype: project\n---\nShip it Friday.\n"
    )
    stores = home / ".local" / "share" / "memsync" / "stores"
    roots = [stores, home / ".agents", notes, personal, team]
    before = [_bytes_of(root) for root in roots]

    dry = run_cli("sync", "--dry-run")
    diff = run_cli("diff")

    assert dry.returncode == 0 and diff.returncode == 0, dry.stderr + diff.stderr
    assert [_bytes_of(root) for root in roots] == before
    assert dry.stdout.splitlines() == [
        "store personal: would commit 2 files",
        "  roles/qa/daily/2026-12-03.md: +1 line",
        "  roles/qa/daily/2026-12-03.md line 3: held back (GitHub Token), stays on this machine",
        "  roles/qa/deploy.md: new",
        f"  origin ({personal}): would push 1 commit (this sync's)",
        "store team: would commit 1 file",
        "  notes/plan.md: changed",
        f"  origin ({team}): would push 1 commit (this sync's)",
        "dry run: nothing was changed",
    ]
    assert "    +- [10:00] second" in diff.stdout.splitlines()
    assert "    +Ship it Friday." in diff.stdout.splitlines() and "    -Ship it." in diff.stdout.splitlines()
    assert "held back (GitHub Token)" in diff.stdout
    assert FAKE_TOKEN not in dry.stdout + dry.stderr + diff.stdout + diff.stderr

    # The sync itself commits and pushes what the preview named, and nothing else.
    assert run_cli("sync").returncode == 0
    pushed = git(personal, "diff", "--name-only", "main~1", "main").split()
    assert pushed == ["roles/qa/daily/2026-12-03.md", "roles/qa/deploy.md"]
    assert git(team, "diff", "--name-only", "main~1", "main").split() == ["notes/plan.md"]
    after = run_cli("sync", "--dry-run").stdout.splitlines()
    assert f"  origin ({personal}): nothing to push (as of the last fetch)" in after
    assert "store team: nothing to commit" in after


@settings(max_examples=200, deadline=None)
@given(
    store=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=6),
    added=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=6),
    tail=st.binary(max_size=6).map(lambda b: b.replace(b"\n", b"")),
)
def test_appended_lines_are_what_was_appended_with_their_line_numbers(
    store: list[bytes], added: list[bytes], tail: bytes
) -> None:
    """Appended after the store copy: exactly those lines, numbered in the live file; an unfinished
    tail (any bytes but a newline: a carriage return does not end a line) waits. Any other live file:
    only its own complete lines, every one the store lacks among them."""
    old = b"".join(store)
    new, unfinished = _appended(old + b"".join(added) + tail, old)
    assert new == [(len(store) + i, line) for i, line in enumerate(added, 1)]
    assert unfinished == bool(tail)
    rewritten, _ = _appended(b"".join(added) + tail, old)
    assert all(added[n - 1] == line for n, line in rewritten)
    assert {line for line in added if line not in store} <= {line for _, line in rewritten}


@settings(max_examples=100, deadline=None)
@given(
    rel=st.sampled_from(["roles/qa/daily/2026-12-03.md", "memory/a.jsonl", "roles/qa/notes.md"]),
    live=st.binary(max_size=300),
    store=st.none() | st.binary(max_size=300),
)
def test_any_bytes_on_either_side_are_previewed_without_an_exception(
    rel: str, live: bytes, store: bytes | None
) -> None:
    """A peer's store copy and a live file hold any bytes: the preview says something or nothing, never
    raises, and names held-back lines only by number."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "live").write_bytes(live)
        if store is not None:
            (root / "store").write_bytes(store)
        change = _file_change(TrackFile(rel, root / "live", root / "store", ""), shown=True)
    assert (change is None) == (live == store)
    if change is not None:
        assert all(isinstance(number, int) for number, _ in change.held)

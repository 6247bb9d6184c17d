"""The git entry point and its registration: attributes for every path kind, idempotence, the failure
contract (ours untouched, git reports a conflict), the hidden CLI command, and a light start-up."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memsync.base.fsio import TEMP_PREFIX
from memsync.base.layout import kind_of
from memsync.merge.driver import _TEMP_PREFIX
from memsync.merge.kinds import KINDS
from memsync.merge.registration import driver_command, install_merge_drivers
from tests.support.helpers import git, run_cli

PATHS = [
    "memory/dev.jsonl",
    "top.jsonl",
    "roles/dev/daily/2026-11-30.jsonl",
    "roles/dev/daily/2026-11-30.md",
    "daily/2026-11-30.md",
    "projects/p/role/daily/2026-01-02.md",
    "roles/dev/daily/notes.md",
    "roles/dev/daily/2026-1-30.md",
    "roles/dev/daily/2026-11-30.md.bak",
    "roles/dev/old/daily/2026-11-30.md",
    "roles/dev/MEMORY.md",
    "MEMORY.md",
    "claude/memory/MEMORY.md",
    "roles/dev/memory.md",
    "roles/dev/note.md",
    "roles/scout/.last-retrospective",
    "roles/dev/daily",
    "a b/ü🟥.md",
    ".memsync/purged.jsonl",  # memsync.commands.purge.PURGE_RECORD: purge records merge as JSON Lines (union)
]


def init_repo(path: Path) -> Path:
    git(path.parent, "init", "-q", "-b", "main", str(path))
    return path


def test_attributes_give_every_layout_kind_its_driver(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "store")
    install_merge_drivers(repo / ".git")
    out = git(repo, "check-attr", "-z", "merge", "--", *PATHS).split("\0")
    got = {out[i]: out[i + 2] for i in range(0, len(out) - 2, 3)}
    assert got == {path: f"memsync-{kind_of(path)}" for path in PATHS}


def test_peer_gitattributes_cannot_change_drivers_or_content(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "store")
    install_merge_drivers(repo / ".git")
    (repo / ".gitattributes").write_text("* merge=union text eol=crlf ident filter=evil\n")  # from a peer
    # text unset wins, and eol only acts on text files
    out = git(repo, "check-attr", "merge", "text", "eol", "ident", "filter", "--", "roles/dev/note.md")
    assert out.splitlines() == [
        "roles/dev/note.md: merge: memsync-entry",
        "roles/dev/note.md: text: unset",
        "roles/dev/note.md: eol: crlf",
        "roles/dev/note.md: ident: unset",
        "roles/dev/note.md: filter: unset",
    ]


def test_install_registers_absolute_interpreter_and_is_idempotent(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "store")
    attributes = repo / ".git" / "info" / "attributes"
    attributes.parent.mkdir(parents=True, exist_ok=True)
    attributes.write_text("*.bin -diff\n")
    install_merge_drivers(repo / ".git")
    config, attrs = (repo / ".git" / "config").read_text(), attributes.read_text()
    install_merge_drivers(repo / ".git")
    assert (repo / ".git" / "config").read_text() == config and attributes.read_text() == attrs
    assert attrs.startswith("*.bin -diff\n") and attrs.count("merge=memsync-entry") == 1
    for kind in KINDS:
        command = git(repo, "config", "--get", f"merge.memsync-{kind}.driver").strip()
        assert command == driver_command(kind)
        argv = shlex.split(command)
        assert argv[:4] == [sys.executable, "-S", "-P", "-c"] and argv[5:] == [kind, "%O", "%A", "%B", "%P"]
        assert "from memsync.merge.driver import main" in argv[4]
        assert Path(sys.executable).is_absolute()


def versions(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> tuple[Path, Path, Path]:
    paths = tmp_path / "O", tmp_path / "A", tmp_path / "B"
    for path, data in zip(paths, (base, ours, theirs), strict=True):
        path.write_bytes(data)
    return paths


def run_driver(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "memsync.merge.driver", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_driver_writes_the_merge_into_ours(tmp_path: Path) -> None:
    base, ours, theirs = versions(tmp_path, b"h\n", b"h\na\n", b"h\nb\n")
    ours.chmod(0o640)
    done = run_driver("daily", str(base), str(ours), str(theirs), "roles/x/daily/2026-11-30.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ours.read_bytes() == b"h\na\nb\n"
    assert ours.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A", "B", "O"]


def test_driver_failure_leaves_ours_and_says_why(tmp_path: Path) -> None:
    base, ours, theirs = versions(tmp_path, b"h\n", b"h\na\n", b"h\nb\n")
    for args in (
        ["bogus", str(base), str(ours), str(theirs), "p.md"],
        ["jsonl", str(tmp_path / "missing"), str(ours), str(theirs), "m.jsonl"],
    ):
        done = run_driver(*args, cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.startswith("memsync merge-driver: merging ") and "Traceback" not in done.stderr
        assert ours.read_bytes() == b"h\na\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["A", "B", "O"]
    assert run_driver("entry", cwd=tmp_path).returncode == 2


def test_failing_driver_makes_git_report_a_conflict_not_lose_data(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "store")
    install_merge_drivers(repo / ".git")
    (repo / "note.md").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "note.md").write_text("theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "note.md").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    broken = driver_command("entry").replace(" entry ", " no-such-kind ")
    git(repo, "config", "merge.memsync-entry.driver", broken)
    with pytest.raises(subprocess.CalledProcessError) as failed:
        git(repo, "merge", "--no-edit", "other")
    assert "memsync merge-driver: merging note.md" in failed.value.stderr
    assert git(repo, "ls-files", "-u") != ""
    assert (repo / "note.md").read_text() == "ours\n"


def test_peer_content_in_the_worktree_is_never_imported(tmp_path: Path) -> None:
    base, ours, theirs = versions(tmp_path, b"x\n", b"x\ny\n", b"x\nz\n")
    trap = tmp_path / "memsync"
    trap.mkdir()
    (trap / "__init__.py").write_text("raise SystemExit('peer code ran')\n")
    done = run_driver("entry", str(base), str(ours), str(theirs), "f", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_hidden_cli_command_runs_the_same_driver(tmp_path: Path) -> None:
    base, ours, theirs = versions(tmp_path, b"H\n", b'H\n{"id":"a"}\n', b'H\n{"id":"b"}\n')
    done = run_cli("merge-driver", "jsonl", str(base), str(ours), str(theirs), "m.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ours.read_bytes() == b'H\n{"id":"a"}\n{"id":"b"}\n'
    assert "merge-driver" not in run_cli("--help").stdout


def test_temp_files_are_ones_memsync_ignores() -> None:
    assert _TEMP_PREFIX.startswith(TEMP_PREFIX)


def test_entry_point_is_light(tmp_path: Path) -> None:
    probe = (
        "import sys, memsync.merge.driver; print([m for m in ('typer', 'git', 'click') if m in sys.modules])"
    )
    assert (
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "[]"
    )
    base, ours, theirs = versions(tmp_path, b"x\n", b"x\n", b"x\ny\n")
    # What the start-up costs is a figure of bench/merge_bench.py; here, that the light entry point works.
    done = run_driver("index", str(base), str(ours), str(theirs), "MEMORY.md", cwd=tmp_path)
    assert done.returncode == 0 and ours.read_bytes() == b"x\ny\n"

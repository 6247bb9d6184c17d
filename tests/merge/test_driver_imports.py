"""The merge driver as git runs it (the command registered in a store's git config): it starts without
``site``, finds the installed memsync whatever the environment and the working directory, and imports
only what a merge of its kind needs (no YAML, no CLI, no store or sync engine, no database)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from memsync.merge.kinds import merge_function
from memsync.merge.registration import driver_command

# Never needed by a merge of any kind; site is skipped on purpose (-S).
NEVER = {"site", "yaml", "sqlite3", "typer", "click", "rich", "filelock", "watchdog", "psutil", "tomllib"}
NEVER_MEMSYNC = {"memsync.store", "memsync.sync", "memsync.cli", "memsync.cycle", "memsync.commands"}
# What the kinds that never start git do without: the record model, pathlib, dataclasses, typing.
LIGHT = {
    "typing",
    "dataclasses",
    "pathlib",
    "datetime",
    "subprocess",
    "tempfile",
    "memsync.base.git",
    "memsync.errors",
    "memsync.formats.jsonl.records",
}
# A tiny merge of each kind where both sides changed the file (entry: the bodies conflict, so git
# merge-file runs, twice) and what it must leave out besides NEVER.
CASES = {
    "jsonl": (b"H\n", b'H\n{"id":"a"}\n', b'H\n{"id":"b"}\n', LIGHT),
    "daily": (b"x\n", b"x\ny\n", b"x\nz\n", LIGHT),
    "index": (
        b"- [a](a.md)\n",
        b"- [a](a.md)\n- [b](b.md)\n",
        b"- [a](a.md)\n- [c](c.md)\n",
        LIGHT,
    ),
    "entry": (b"x\n", b"x\ny\n", b"x\nz\n", {"typing", "datetime"}),
}


def run_registered(kind: str, folder: Path, *, python_flags: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """Run the registered command of ``kind`` as git does (``sh -c``, paths substituted and quoted) from a
    directory holding a trap ``memsync`` package, with a bare environment; (merged bytes, stderr)."""
    base, ours, theirs, _ = CASES[kind]
    paths = {"%O": folder / "O", "%A": folder / "A", "%B": folder / "B"}
    for path, data in zip(paths.values(), (base, ours, theirs), strict=True):
        path.write_bytes(data)
    trap = folder / "memsync"
    trap.mkdir(exist_ok=True)
    (trap / "__init__.py").write_text("raise SystemExit('peer code ran')\n")
    argv = shlex.split(driver_command(kind))
    argv[1:1] = python_flags
    command = " ".join(shlex.quote(arg) for arg in argv)
    for placeholder, path in (*paths.items(), ("%P", Path("dir/f"))):
        command = command.replace(placeholder, shlex.quote(str(path)))
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=folder,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return paths["%A"].read_bytes(), done.stderr


def imported(stderr: str) -> set[str]:
    """The module names a ``-X importtime`` run printed."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_registered_driver_finds_memsync_without_site_or_environment(kind: str, tmp_path: Path) -> None:
    merged, _ = run_registered(kind, tmp_path)
    base, ours, theirs, _ = CASES[kind]
    assert merged == merge_function(kind)(base, ours, theirs)
    assert len(merged) > len(ours)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_driver_imports_only_what_its_kind_needs(kind: str, tmp_path: Path) -> None:
    _, stderr = run_registered(kind, tmp_path, python_flags=("-X", "importtime"))
    names = imported(stderr)
    assert f"memsync.merge.{kind}" in names, stderr[-2000:]
    others = {f"memsync.merge.{other}" for other in CASES if other != kind}
    if kind == "daily":  # a daily log that was not only appended to is merged by the entry rules
        others.discard("memsync.merge.entry")
    absent = NEVER | NEVER_MEMSYNC | others | CASES[kind][3]
    unwanted = {
        name for name in names if name in absent or name.startswith(tuple(f"{p}." for p in NEVER_MEMSYNC))
    }
    assert not unwanted, unwanted
    if kind == "entry":
        assert "memsync.base.git" in names  # the conflicting bodies went through git merge-file

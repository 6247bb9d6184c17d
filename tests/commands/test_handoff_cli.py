"""`memsync handoff` and `memsync import`: output, exit codes, bad input in one line. A few cases run as
real subprocesses; the rest go through the same CLI edge (``memsync.cli.main``) in-process to keep the
suite fast (each subprocess pays the CLI's import time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.cli import main
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.markdown.roledir import RoleDir
from memsync.memoryfile.file import MemoryFile
from tests.support.handoff_fixtures import FAKE_TOKEN, LIVE, SECRET_ID, tree, write_memory, write_role
from tests.support.helpers import run_cli

KINDS = ("--kind", "fact", "--kind", "avoid", "--kind", "preference")


def test_handoff_writes_prints_the_summary_and_lists_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = write_memory(tmp_path / "giver.jsonl")
    target = tmp_path / "reviewer"
    result = run_cli("handoff", str(memory), str(target), *KINDS)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "giver -> reviewer: 4 handed, 0 already present, 1 skipped (1 possible secret)"
    assert f"skipped entry {SECRET_ID}: possible secret (GitHub Token, line 1)" in lines
    assert FAKE_TOKEN not in result.stdout + result.stderr
    assert len(RoleDir(target).entries()) == 4
    before = tree(target)
    assert main(["handoff", str(memory), str(target), *KINDS]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("giver -> reviewer: 0 handed, 4 already present")
    assert tree(target) == before


def test_prompt_goes_to_stdout_and_the_summary_to_stderr(tmp_path: Path) -> None:
    role = write_role(tmp_path / "scout")
    prompt = run_cli("handoff", str(role), "--format", "prompt", "--max-bytes", "200")
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stdout.startswith("# Memory\n") and len(prompt.stdout.encode()) <= 200
    assert "over --max-bytes" in prompt.stderr and "scout -> prompt:" in prompt.stderr
    assert prompt.stderr.splitlines()[-1] == (
        "scout -> prompt: 1 entry printed, 8 skipped (8 over --max-bytes); nothing written"
    )


def test_a_prompt_for_a_named_receiver_says_it_printed_and_wrote_nothing(tmp_path: Path) -> None:
    role = write_role(tmp_path / "scout")
    receiver = tmp_path / "coder.jsonl"
    prompt = run_cli("handoff", str(role), str(receiver), "--format", "prompt")
    assert prompt.returncode == 0, prompt.stderr
    assert prompt.stderr == "scout -> coder: 9 entries printed, 0 skipped; nothing written\n"
    assert prompt.stdout.count("\n- ") == 9 and not receiver.exists()


def test_a_curated_entry_is_handed_with_its_body(tmp_path: Path) -> None:
    role = tmp_path / "ops"
    role.mkdir()
    (role / "deploy.md").write_text(
        "---\nname: Deploy\ndescription: how to deploy\ntype: project\n---\n\n"
        "Deploy with ./deploy.sh --prod after tagging.\n"
    )
    (role / "build.md").write_text("---\ntype: project\n---\nRun make build; artifacts land in dist/.\n")
    target = tmp_path / "coder.jsonl"
    result = run_cli("handoff", str(role), str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "ops -> coder: 2 handed, 0 already present, 0 skipped"
    texts = sorted(e.text for e in MemoryFile(target).view())
    assert texts == [
        "Run make build; artifacts land in dist/.",
        "how to deploy\nDeploy with ./deploy.sh --prod after tagging.",
    ]


def test_out_then_import_with_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    role = write_role(tmp_path / "scout")
    out = tmp_path / "handed.jsonl"
    assert main(["handoff", str(role), "--out", str(out)]) == 0
    assert not read_memory(out).problems
    receiver = tmp_path / "receiver.jsonl"
    assert main(["import", str(out), "--to", str(receiver), "--dry-run"]) == 0
    assert "dry run:" in capsys.readouterr().out and not receiver.exists()
    assert main(["import", str(out), "--to", str(receiver)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("handed -> receiver: 9 handed, 0 already")
    assert [e.id for e in MemoryFile(receiver).view()] == [e.id for e in MemoryFile(out).view()]


def test_bad_input_in_a_subprocess_exits_1_with_one_line(tmp_path: Path) -> None:
    memory = write_memory(tmp_path / "giver.jsonl")
    result = run_cli("handoff", str(memory), "x.jsonl", "--kind", "tip", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("memsync: handoff: ")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("handoff", "no-such-agent", "x.jsonl"), "no tracked agent or path 'no-such-agent'"),
        (("handoff", "{memory}", "x.jsonl", "--kind", "tip"), "--kind 'tip' is not a kind"),
        (("handoff", "{memory}", "x.jsonl", "--since", "yesterday"), "--since 'yesterday' is not a date"),
        (("handoff", "{memory}", "x.jsonl", "--min-confidence", "2"), "outside [0, 1]"),
        (("handoff", "{memory}"), "no TO given"),
        (("handoff", "{memory}", "{memory}"), "FROM and TO are the same agent"),
        (("handoff", "{memory}", "--out", "{memory}"), "already exists"),
        (("import", "{role}", "--to", "x.jsonl"), "is not a memory file"),
    ],
)
def test_bad_input_exits_1_with_one_line(
    tmp_path: Path,
    args: tuple[str, ...],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    values = {"memory": write_memory(tmp_path / "giver.jsonl"), "role": write_role(tmp_path / "scout")}
    before = tree(tmp_path)
    assert main([arg.format(**values) for arg in args]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("memsync: ") and message in line
    assert tree(tmp_path) == before
    assert set(LIVE) <= {e.id for e in MemoryFile(values["memory"]).view()}

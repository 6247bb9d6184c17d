"""The memory-file commands: remember, forget, show, prompt, compact, check.

The real corpus goes through real `python -m memsync` subprocesses; the other cases call the same CLI entry
point (``memsync.cli.main``) in-process (``tests.support.helpers.cli_main``), which keeps this file fast.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer.main
from typer._click import Command

from memsync.cli import app
from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import KINDS
from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main, run_cli


def _ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


class Cli:
    """Runs ``memsync ARGS`` in-process through the CLI edge and returns (exit code, stdout, stderr)."""

    def __call__(self, *args: str) -> tuple[int, str, str]:
        done = cli_main(*args)
        return done.returncode, done.stdout, done.stderr

    def ok(self, *args: str) -> str:
        code, out, err = self(*args)
        assert code == 0, err
        return out


@pytest.fixture
def cli() -> Cli:
    return Cli()


def test_remember_show_forget_on_the_default_file(home: Path, cli: Cli) -> None:
    out = _ok("remember", "Write plain English.", "--kind", "preference")  # a real process, end to end
    path = default_memory_path()
    assert path.parent == home / ".agent-memory"
    first_id = out.split()[1]
    assert out == f"remembered {first_id} in {path}\n"
    second_id = cli.ok(
        "remember",
        "Docs live in the wiki.",
        "--kind",
        "source",
        "--scope",
        "project:acmp",
        "--tag",
        "docs",
        "--tag",
        "wiki",
        "--source",
        "session:2026-11-30-a",
        "--confidence",
        "0.7",
        "--expires",
        "30d",
    ).split()[1]
    # Both entries may share one created_at second; their order then falls to the (random) ids.
    shown = sorted(cli.ok("show").splitlines(), key=lambda line: line.split()[0] != first_id)
    assert shown[0] == f"{first_id}  preference  global  [user]  Write plain English."
    assert shown[1].startswith(f"{second_id}  source      project:acmp  [0.7]  Docs live in the wiki.")
    as_json = cli.ok("show", str(path), "--json", "--scope", "project:acmp")
    objs = {o["id"]: o for o in map(json.loads, as_json.splitlines())}
    assert set(objs) == {first_id, second_id}
    second = objs[second_id]
    assert second["tags"] == ["docs", "wiki"] and second["expires_at"] > datetime.now(UTC).isoformat()[:10]
    assert cli.ok("show", "--scope", "project:other").splitlines() == shown[:1]
    assert cli.ok("forget", first_id) == f"forgot {first_id} in {path}\n"
    assert [line.split()[0] for line in _ok("show").splitlines()] == [second_id]


def test_user_errors_exit_1_with_one_line_and_no_traceback(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "m.jsonl"
    cli.ok("remember", "Harmless.", "--file", str(path))
    before = path.read_bytes()
    cases = [
        (("remember", "db password: Tr0ub4dor&3", "--file", str(path)), "holds a secret"),
        (("remember", "x", "--kind", "opinion", "--file", str(path)), "'kind'"),
        (("remember", "x", "--expires", "someday", "--file", str(path)), "expiry"),
        (("forget", "000000000000", "--file", str(path)), "no entry with that id"),
        (("show", str(tmp_path / "absent.jsonl")), "no such memory file"),
        (("prompt", str(path), "--kind", "opinion"), "unknown kind"),
    ]
    for args, message in cases:
        code, _, err = cli(*args)
        assert code == 1, (args, err)
        assert message in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert path.read_bytes() == before
    secret = run_cli("remember", "token: glpat-xYz12AbC34dEf56GhI78jK", "--file", str(path))
    assert (secret.returncode, secret.stdout) == (1, "")
    assert secret.stderr.startswith("memsync: remember in ") and "Traceback" not in secret.stderr


def _kind_commands() -> list[str]:
    """Every command that takes ``--kind``, found in the CLI itself so a new one is covered too."""
    found: list[str] = []

    def walk(command: Command, path: list[str]) -> None:
        if any("--kind" in getattr(param, "opts", ()) for param in command.params):
            found.append(" ".join(path))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return sorted(found)


def test_every_kind_option_names_the_kinds_in_help_and_in_its_one_line_refusal(tmp_path: Path) -> None:
    assert _kind_commands() == ["handoff", "prompt", "recall", "remember"]
    path = tmp_path / "m.jsonl"
    assert run_cli("remember", "Harmless.", "--file", str(path)).returncode == 0
    allowed = ", ".join(KINDS)
    for command in _kind_commands():
        shown = run_cli(*command.split(), "--help", env={"COLUMNS": "250"})  # each option's help on one line
        assert shown.returncode == 0, shown.stderr
        row = next(line for line in shown.stdout.splitlines() if "--kind" in line)
        assert allowed in row, (command, row)
    for args in [
        ("remember", "x", "--file", str(path)),
        ("recall", "harmless"),
        ("prompt", str(path)),
        ("handoff", str(path), str(tmp_path / "out.jsonl")),
    ]:
        refused = run_cli(*args, "--kind", "opinion")
        assert refused.returncode == 1, (args, refused.stderr)
        assert refused.stderr.count("\n") == 1 and "'opinion'" in refused.stderr, refused.stderr
        assert allowed in refused.stderr and "Traceback" not in refused.stderr


def test_check_lists_each_problem_and_exits_1(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "m.jsonl"
    cli.ok("remember", "Fine.", "--file", str(path))
    assert cli("check", str(path)) == (0, "", "")
    with path.open("ab") as stream:
        stream.write(
            b'{"id": "aaaaaaaaaaaa", "kind": "fact", "text": "t", "confidence": 3, '
            b'"created_at": "2026-11-30T00:00:00Z"}\nnot json\n{"id": "b", "text": "partial'
        )
    code, out, _ = cli("check", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{path}:3: field 'confidence': 3 is not a number in [0, 1]"
    assert lines[1].startswith(f"{path}:4: not valid JSON")
    assert lines[2].startswith(f"{path}:5: last line has no newline")
    assert len(lines) == 3
    code, out, err = cli("show", str(path))
    assert code == 0 and "3 problems in" in err and out.count("\n") == 1


def test_prompt_and_compact(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "m.jsonl"
    ids = [
        cli.ok("remember", text, "--kind", kind, "--scope", scope, "--file", str(path)).split()[1]
        for text, kind, scope in [
            ("Never force-push.", "avoid", "project:acmp"),
            ("Plain English.", "preference", "global"),
            ("Other project fact.", "fact", "project:other"),
            ("Old fact.", "fact", "global"),
        ]
    ]
    cli.ok("forget", ids[3], "--file", str(path))
    avoid = '## Avoid\n- Never force-push. (source: "user")\n'
    assert cli.ok("prompt", str(path), "--scope", "project:acmp") == (
        f'# Memory (project:acmp)\n## Preferences\n- Plain English. (source: "user")\n{avoid}'
    )
    assert cli.ok("prompt", str(path), "--kind", "avoid") == f"# Memory\n{avoid}"
    note = "(3 more entries left out to fit the size limit)\n"
    assert cli.ok("prompt", str(path), "--max-bytes", "20") == note
    assert cli.ok("compact", str(path)) == f"compacted {path}: 6 -> 5 lines\n"
    assert sorted(e.id for e in read_memory(path).view(datetime.now(UTC))) == sorted(ids[:3])


def test_real_corpus_memory_files_through_check_show_prompt(corpus: Path) -> None:
    paths = sorted((corpus / "jsonl").glob("*.jsonl"))
    assert len(paths) == 2
    commands = [(cmd, str(path)) for path in paths for cmd in ("check", "show", "prompt")]
    # In-process (cli_main): what the commands make of real files is tested here, not the interpreter.
    results = {
        c: cli_main(*c, "--scope", "project:acmp") if c[0] == "prompt" else cli_main(*c) for c in commands
    }
    for path in paths:
        check, show, prompt = (results[(cmd, str(path))] for cmd in ("check", "show", "prompt"))
        assert (check.returncode, check.stdout, check.stderr) == (0, "", ""), path
        live = read_memory(path).view(datetime.now(UTC))
        assert (show.returncode, show.stderr) == (0, "")
        assert [line.split()[0] for line in show.stdout.splitlines()] == [e.id for e in live]
        assert (prompt.returncode, prompt.stderr) == (0, "")
        assert prompt.stdout.startswith("# Memory (project:acmp)\n") and len(prompt.stdout.encode()) <= 4000


@pytest.mark.parametrize("role", ["scout", "acmp-claude"])
def test_real_role_directories_dispatch_to_the_markdown_format(corpus: Path, role: str, cli: Cli) -> None:
    role_dir = corpus / "skill" / role
    code, out, err = cli("check", str(role_dir))
    assert code in (0, 1) and "Traceback" not in err
    assert (code == 1) == bool(out)
    assert all(line.startswith(str(role_dir)) for line in out.splitlines())
    assert len(cli.ok("prompt", str(role_dir), "--max-bytes", "4000").encode()) <= 4000
    code, _, err = cli("prompt", str(role_dir), "--scope", "global")
    assert code == 1 and "role directories" in err


def test_recall_prints_each_hit_and_says_so_when_nothing_matches(home: Path, cli: Cli) -> None:
    cli.ok("init")
    cli.ok("remember", "The harbor gate opens at six.", "--kind", "fact")
    found = cli_main("recall", "harbor gate")
    assert found.returncode == 0, found.stderr
    assert "The harbor gate opens at six." in found.stdout and found.stderr == ""
    nothing = cli_main("recall", "zeppelin")
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert nothing.stderr == "memsync recall: nothing in the tracked memory matches 'zeppelin'\n"


def test_show_on_a_new_machine_before_its_first_sync_says_to_sync(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    first, second = (isolated_env(tmp_path / name) for name in ("first", "second"))
    assert cli_main("init", "--remote", str(remote), env=first).returncode == 0
    assert cli_main("remember", "Deploys go out on Tuesdays.", env=first).returncode == 0
    assert cli_main("sync", env=first).returncode == 0
    assert cli_main("init", "--remote", str(remote), env=second).returncode == 0
    memory = tmp_path / "second" / ".agent-memory" / "root.jsonl"
    shown = cli_main("show", env=second)
    assert (shown.returncode, shown.stderr) == (
        1,
        f"memsync: read {memory}: no such memory file. Create it with `memsync remember`, or run "
        "`memsync sync` to fetch what your other machines wrote\n",
    )
    assert cli_main("sync", env=second).returncode == 0
    assert "Deploys go out on Tuesdays." in cli_main("show", env=second).stdout
    alone = isolated_env(tmp_path / "alone")  # no remote: nothing to fetch, so no such advice
    assert cli_main("init", env=alone).returncode == 0
    assert cli_main("show", env=alone).stderr.endswith(
        "no such memory file. Create it with `memsync remember`\n"
    )

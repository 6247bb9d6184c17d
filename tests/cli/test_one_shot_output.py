"""What a one-shot command prints on stderr, through the real CLI: its progress log lines only with -v
(its result is on stdout), a bad option value in the CLI's words, not its validator's."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main, run_cli


def test_init_from_a_remote_with_history_logs_its_progress_only_with_v(home: Path, tmp_path: Path) -> None:
    remote = str(bare_remote(tmp_path / "remote.git"))
    (home / ".agents" / "memory" / "dev").mkdir(parents=True)
    (home / ".agents" / "memory" / "dev" / "a.md").write_text("# a\n")
    assert cli_main("init", "--remote", remote).returncode == 0
    assert cli_main("sync").returncode == 0

    second = cli_main("init", "--remote", remote, env=isolated_env(tmp_path / "second"))
    assert second.returncode == 0 and "config:" in second.stdout
    assert "INFO" not in second.stderr and "started from origin's history" not in second.stderr, second.stderr

    verbose = cli_main("-v", "init", "--remote", remote, env=isolated_env(tmp_path / "third"))
    assert verbose.returncode == 0 and "started from origin's history" in verbose.stderr


def test_a_bad_agent_value_is_said_without_the_validators_wording(home: Path) -> None:
    done = run_cli("hook", "session-start", "--agent", "nosuch")
    assert done.returncode == 2
    assert "Invalid value for '--agent': 'nosuch' is not one of 'claude-code'" in done.stderr
    assert "Value error" not in done.stderr

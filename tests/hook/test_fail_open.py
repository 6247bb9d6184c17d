"""Installed hooks fail open: once memsync is uninstalled (the module gone, or its whole virtualenv), the
command an agent host runs exits 0 and prints nothing, so the host shows no error at every session. The
commands are run as the hosts run them: through ``sh -c``, from the settings files `hooks install` wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from tests.support.helpers import REPO_ROOT, run_cli

OLD_FORM = "/old/venv/bin/python -P -m memsync.hook {action} --agent claude-code"


def _commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text())
    return [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]


def _as_host(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command],
        input='{"hook_event_name": "Stop"}',
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_hooks_exit_0_silently_once_memsync_or_its_interpreter_is_gone(home: Path, tmp_path: Path) -> None:
    # A virtualenv memsync was "installed" in: its interpreter sees memsync only through PYTHONPATH, so
    # dropping that variable is `pip uninstall memsync`, and deleting the venv is `pipx uninstall`.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), sysconfig.get_paths()["purelib"]]),
    }
    for host in ("claude-code", "codex"):
        done = subprocess.run(
            [str(python), "-m", "memsync", "hooks", "install", host],
            env=installed,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    commands = [*_commands(home / ".claude" / "settings.json"), *_commands(home / ".codex" / "hooks.json")]
    assert len(commands) == 9 and all(str(python) in command for command in commands)

    # Installed: the command runs memsync's hook (here it says there is no config yet).
    start = next(c for c in commands if "session-start" in c)
    present = _as_host(start, installed)
    assert present.returncode == 0 and "memsync init" in present.stderr

    uninstalled = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for command in commands:
        done = _as_host(command, uninstalled)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), command

    shutil.rmtree(venv)
    for command in commands:
        done = _as_host(command, uninstalled)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), command


def test_hooks_of_the_earlier_form_are_replaced_on_install_and_removed_on_uninstall(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    theirs: dict[str, Any] = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    earlier = {
        event: [{"hooks": [{"type": "command", "command": OLD_FORM.format(action=action), "timeout": 30}]}]
        for event, action in (
            ("SessionStart", "session-start"),
            ("Stop", "sync-now"),
            ("SessionEnd", "sync-now"),
        )
    }
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"Stop": theirs["hooks"]["Stop"] + earlier.pop("Stop"), **earlier}}))

    assert "runs another memsync (/old/venv/bin/python)" in run_cli("hooks", "status").stdout
    assert run_cli("hooks", "install", "claude-code").returncode == 0
    commands = _commands(path)
    assert "say done" in commands and not any("/old/venv" in c for c in commands)
    assert sum("memsync.hook" in c for c in commands) == 5

    path.write_text(path.read_text().replace(sys.executable, "/old/venv/bin/python"))
    assert run_cli("hooks", "uninstall", "claude-code").returncode == 0
    assert json.loads(path.read_text()) == theirs

"""The README's quick start, tried as a new user would: a fresh HOME, a fresh virtual environment,
`pip install .` and `memsync up`; an agent writes memory and `memsync log` shows it (issue 5)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import sysconfig
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import REPO_ROOT, wait_for


def _fresh_venv(tmp_path: Path) -> Path:
    """A new venv with memsync installed by pip from a copy of the repository; its dependencies come from
    the running interpreter (a .pth line), so only the build of memsync itself may need the index."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (purelib / "memsync-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    shutil.copytree(REPO_ROOT / "memsync", source / "memsync", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(
            f"pip could not build memsync here (no package index for its build backend?): "
            f"{done.stderr.strip().splitlines()[-1:]}"
        )
    return venv


@pytest.mark.slow
def test_pip_install_then_memsync_up_syncs_a_new_memory_line(tmp_path: Path) -> None:
    venv = _fresh_venv(tmp_path)
    home = tmp_path / "newcomer"
    env = {**isolated_env(home), "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
    role = home / ".agents" / "memory" / "assistant"
    role.mkdir(parents=True)
    (role / "MEMORY.md").write_text("# Memory index — assistant\n")
    log_path = tmp_path / "up.log"

    with log_path.open("wb") as log:
        up = subprocess.Popen(
            [str(venv / "bin" / "memsync"), "up"], env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        wait_for(
            lambda: "watching" in log_path.read_text() or up.poll() is not None,
            timeout=30,
            what="memsync up to start watching",
        )
        assert up.poll() is None, log_path.read_text()
        output = log_path.read_text()
        assert f"tracking {role.parent} as roles" in output
        assert f"{role}: synced as roles/assistant" in output

        today = datetime.now(UTC).strftime("%Y-%m-%d")
        (role / "daily").mkdir()
        daily = role / "daily" / f"{today}.md"
        daily.write_text(f"# Daily log — {today}\n\n- [10:00] The user prefers tabs.\n")

        def logged() -> bool:
            result = subprocess.run(
                [str(venv / "bin" / "memsync"), "log"],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            return f"daily/{today}.md" in result.stdout

        wait_for(logged, timeout=30, interval=0.3, what="memsync log to show the new daily log")
    finally:
        up.send_signal(signal.SIGTERM)
        code = up.wait(timeout=30)
    assert code == 0, log_path.read_text()

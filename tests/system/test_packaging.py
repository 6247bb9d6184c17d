"""memsync as a user installs it: `python -m build` makes an sdist and a wheel (from the sdist); the wheel,
installed by pip into a fresh venv with its dependencies from the package index, runs `memsync
--version` and syncs two machines through a merge that git runs with the registered driver (it must find
the interpreter of that install); the same from a `pipx install` of the wheel where pipx can be had.
The editable install every other test uses registers its own interpreter the same way."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import isolated_env
from tests.support.helpers import REPO_ROOT, bare_remote, git

SOURCES = ("pyproject.toml", "README.md", "MANIFEST.in", "config.example.toml")
SOURCE_DIRS = ("memsync", "docs", "systemd", "launchd", "bench")


def _run(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _pip_env() -> dict[str, str]:
    """pip's cache where the user keeps it (the suite's HOME is a throwaway): a rerun downloads nothing."""
    return {
        "PIP_CACHE_DIR": str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "pip"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def _build(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "src"
    source.mkdir()
    for name in SOURCES:
        shutil.copy(REPO_ROOT / name, source / name)
    for name in SOURCE_DIRS:
        shutil.copytree(REPO_ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    built = _run(sys.executable, "-m", "build", "--outdir", str(dist), str(source), env=_pip_env())
    if built.returncode != 0 and "Could not find a version" in built.stdout + built.stderr:
        pytest.skip(f"no package index for the build backend: {built.stdout.strip().splitlines()[-1:]}")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = dist.glob("memsync-*.whl")
    (sdist,) = dist.glob("memsync-*.tar.gz")
    return wheel, sdist


def _sync_two_machines(memsync: list[str], root: Path, interpreter: Path) -> None:
    """Two homes run ``memsync`` over one bare remote; both append to one memory file, so the second
    sync merges it, through git and the registered jsonl driver; each ends with both entries."""
    remote = bare_remote(root / "remote.git")
    homes = [root / "alice", root / "bob"]
    envs = [{**isolated_env(home), "PATH": f"{interpreter.parent}:/usr/bin:/bin"} for home in homes]
    for env, name in zip(envs, ("alice", "bob"), strict=True):
        init = _run(*memsync, "init", "--remote", str(remote), "--host", name, env=env, timeout=120)
        assert init.returncode == 0, init.stderr
    for env, name in zip(envs, ("alice", "bob"), strict=True):
        wrote = _run(*memsync, "remember", f"{name} prefers tabs.", env=env, timeout=60)
        assert wrote.returncode == 0, wrote.stderr
    for env in (envs[0], envs[1], envs[0]):
        synced = _run(*memsync, "sync", env=env, timeout=120)
        assert synced.returncode == 0, synced.stderr
    store = homes[1] / ".local" / "share" / "memsync" / "stores" / "personal"
    driver = git(store, "config", "--get", "merge.memsync-jsonl.driver").strip()
    # Started without site (-S): the registered import paths must find this install's memsync.
    assert driver.startswith(f"{interpreter} -S -P -c "), driver
    assert driver.endswith(" jsonl %O %A %B %P") and "from memsync.merge.driver import main" in driver, driver
    # Both machines appended to one file: git's text merge would conflict; the driver (run by the
    # replay's rebase, or a merge) joined the two lines in the store.
    joined = git(store, "grep", "-h", "prefers tabs.", "HEAD")
    assert "alice prefers tabs." in joined and "bob prefers tabs." in joined, joined
    for home in homes:
        (memory,) = (home / ".agent-memory").glob("*.jsonl")
        text = memory.read_text()
        assert "alice prefers tabs." in text and "bob prefers tabs." in text and "<<<<<<<" not in text


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_wheel_installs_into_a_fresh_venv_and_its_driver_merges(tmp_path: Path) -> None:
    wheel, sdist = _build(tmp_path)
    assert sdist.stat().st_size > 0
    venv = tmp_path / "venv"
    # No pip of its own (ensurepip takes 15 s): this pip installs into it, as `pip --python` does.
    assert _run(sys.executable, "-m", "venv", "--without-pip", str(venv)).returncode == 0
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    installed = _run(*pip, str(wheel), env=_pip_env())
    if installed.returncode != 0 and "Could not find a version" in installed.stderr:
        pytest.skip(
            f"no package index for memsync's dependencies: {installed.stderr.strip().splitlines()[-1:]}"
        )
    assert installed.returncode == 0, installed.stderr[-3000:]
    version = _run(str(venv / "bin" / "memsync"), "--version", env=isolated_env(tmp_path / "v"))
    assert version.returncode == 0 and version.stdout.startswith("memsync 0."), version.stderr
    _sync_two_machines([str(venv / "bin" / "memsync")], tmp_path / "wheel", python)

    # pipx, installed from the index into the same venv, makes a venv of its own for memsync.
    got_pipx = _run(*pip, "pipx", env=_pip_env())
    if got_pipx.returncode != 0:
        pytest.skip(f"pipx could not be installed here: {got_pipx.stderr.strip().splitlines()[-1:]}")
    pipx_env = {**_pip_env(), "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "pipx-bin")}
    piped = _run(str(python), "-m", "pipx", "install", str(wheel), env=pipx_env)
    assert piped.returncode == 0, piped.stdout[-2000:] + piped.stderr[-2000:]
    pipx_python = tmp_path / "pipx" / "venvs" / "memsync" / "bin" / "python"
    _sync_two_machines([str(tmp_path / "pipx-bin" / "memsync")], tmp_path / "pipx-run", pipx_python)

"""The agent hosts' own CLIs, from the npm registry, for the slow tier's tests that run them.

Installed once into a cache directory shared by every test and run (``$MEMSYNC_NPM_CACHE``, default
``~/.cache/memsync-tests/npm`` of the real user: the suite's isolated HOME changes per session), under a
file lock, since pytest-xdist's workers may ask for two packages at the same moment and two npm runs
in one prefix tear its tree. A CLI that cannot be installed (no npm, the registry unreachable) skips
its test with the reason and the command that installs it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

CACHE = Path(
    os.environ.get("MEMSYNC_NPM_CACHE")
    or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "memsync-tests" / "npm"
)
BIN = CACHE / "node_modules" / ".bin"
# npm fetches a few hundred MB at most for these packages.
NPM_TIMEOUT_S = 900


def installed(cli: str, package: str) -> Path:
    """The path of ``cli`` in the cache, installed there from the npm registry (``package``) when
    missing; skips the calling test, with the reason, when npm is missing or the install fails."""
    path = BIN / cli
    if path.exists():
        return path
    npm = shutil.which("npm")
    install = f"npm install --prefix {CACHE} {package}"
    if npm is None:
        pytest.skip(f"no {cli} CLI and no npm to install it: {install}")
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE / ".install.lock")):
        if path.exists():  # another worker installed it while this one waited
            return path
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(CACHE), package],
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"`{install}` took over {NPM_TIMEOUT_S} s (registry unreachable?)")
    if done.returncode != 0 or not path.exists():
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        pytest.skip(f"`{install}` failed (registry unreachable?): {said}")
    return path

"""The CLI's start-up: every hook call is a new `python -m memsync` process, so listing the commands
imports none of the library they call (the engine, the store, the merge drivers, recall)."""

from __future__ import annotations

import subprocess
import sys

from memsync import __version__

HEAVY = ("memsync.commands", "memsync.store", "memsync.merge", "memsync.recall")


def test_version_imports_no_command_module() -> None:
    """`memsync --version` imports the CLI (every command registered) but no module a command calls."""
    done = subprocess.run(
        [sys.executable, "-P", "-X", "importtime", "-m", "memsync", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"memsync {__version__}\n"
    # `import time: self | cumulative | name`, the name indented by its depth.
    imported = {
        line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    }
    assert {"memsync.cli", "memsync.cli.handoff", "memsync.cli.memory"} <= imported
    heavy = sorted(name for name in imported if name.startswith(HEAVY))
    assert heavy == []

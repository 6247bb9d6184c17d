"""The command that starts this memsync: what agent hosts, the service manager and ``demo`` run.

``<this interpreter> -P -m memsync ARGS``: the absolute path of the interpreter memsync is installed in,
so whoever runs the command gets this memsync whatever its PATH. ``-P`` because ``python -m`` otherwise
puts the working directory first on ``sys.path``, and hosts start MCP servers in the project they have
open: a project with a ``memsync/`` folder (a hostile checkout, memsync's own source tree) would run its
own code instead. The hooks run ``-P`` too (``hosts.hooks``).
"""

from __future__ import annotations

import sys
from pathlib import Path


def memsync_argv(*args: str) -> list[str]:
    """The argv that runs memsync's CLI ``args`` (e.g. ``"mcp"``) with this interpreter, nothing imported
    from the working directory: ``[<absolute python>, "-P", "-m", "memsync", *args]``."""
    return [str(Path(sys.executable).absolute()), "-P", "-m", "memsync", *args]

"""The typer CLI. Thin: each command parses options, calls the library and prints.

Each submodule registers one group of commands on ``app``; importing them here wires them in.
"""

from memsync.cli import roles  # noqa: F401  (registers snapshot, migrate)
from memsync.cli.app import app, main

__all__ = ["app", "main"]

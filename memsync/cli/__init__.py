"""The typer CLI. Thin: each command parses options, calls the library and prints.

Each submodule registers one group of commands on ``app``; importing them here wires them in. A command
imports the library it calls in its body: every process (each hook call) imports all of them.
"""

import memsync.cli.conflicts  # registers conflicts, resolve
import memsync.cli.connect  # registers connect, disconnect
import memsync.cli.handoff  # registers handoff, import
import memsync.cli.held  # registers held, held allow
import memsync.cli.hooks  # registers hooks install|uninstall|status, hook session-start|sync-now
import memsync.cli.keys  # registers join, encrypt, key add|list|remove|export|import
import memsync.cli.lifecycle  # registers stop, uninstall, store list|remove, remote list, config list
import memsync.cli.mcp  # registers mcp (serve, install, uninstall, status), recall
import memsync.cli.memory
import memsync.cli.merge  # registers the hidden merge-driver
import memsync.cli.project  # registers project alias
import memsync.cli.purge  # registers purge
import memsync.cli.review  # registers review, review approve|reject
import memsync.cli.setup  # registers init, up, track, untrack, store, remote, service, doctor, demo
import memsync.cli.sync as _sync  # noqa: F401  (registers daemon, sync, status, log, resync)
import memsync.cli.ui  # noqa: F401  (registers ui)
from memsync.cli import roles  # noqa: F401  (registers snapshot, migrate)
from memsync.cli.app import app, main

__all__ = ["app", "main"]

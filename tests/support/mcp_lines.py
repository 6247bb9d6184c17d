"""`memsync mcp` in a subprocess spoken to in raw JSON-RPC lines (no SDK client), and a gate that holds
the MCP SDK's import in that subprocess, so a test sees what the server answers before the SDK is loaded."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import IO, Any

import pytest


def line(message: dict[str, Any]) -> bytes:
    """``message`` as one line of JSON."""
    return json.dumps(message).encode() + b"\n"


def initialize(version: str) -> bytes:
    """An ``initialize`` request (id 0) asking for protocol ``version``."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})


class RawServer:
    """`memsync mcp` in a subprocess, its answers read as they come."""

    def __init__(self, tmp_path: Path, name: str, options: tuple[str, ...] = ()) -> None:
        """Start it, ``options`` given to the interpreter, its stderr written to ``<name>.log``."""
        self.process = subprocess.Popen(
            [sys.executable, *options, "-m", "memsync", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(tmp_path / f"{name}.log").open("w"),
        )
        self.answers: Queue[dict[str, Any]] = Queue()
        out = self.process.stdout
        assert out is not None
        threading.Thread(target=self._read, args=(out,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for raw in out:
            self.answers.put(json.loads(raw))

    def send(self, lines: bytes) -> None:
        """Write ``lines`` to the server's stdin."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(lines)
        stdin.flush()

    def until(self, *requests: int) -> list[dict[str, Any]]:
        """The answers read until each of ``requests`` has one (at most 60 s for each answer)."""
        got: list[dict[str, Any]] = []
        while not set(requests) <= {answer["id"] for answer in got}:
            try:
                got.append(self.answers.get(timeout=60))
            except Empty:
                raise AssertionError(f"no answer to all of {requests} within 60 s: {got}") from None
        return got

    def exchange(self, lines: bytes, *requests: int) -> list[dict[str, Any]]:
        """The answers to ``lines`` until each of ``requests`` has one; the server is then stopped."""
        self.send(lines)
        got = self.until(*requests)
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()
        self.process.wait(timeout=30)
        return got


_GATE = '''
import importlib.machinery, os, sys, time


class _Held:
    """The loader of the MCP SDK's package (or of memsync's server module, which imports the SDK and
    its models), which runs it only once the test opens the gate (a file appears): the wait holds that
    module's import lock alone, so other imports go on meanwhile."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        deadline = time.monotonic() + 60
        while not os.path.exists(os.environ["MEMSYNC_TEST_GATE"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        self._loader.exec_module(module)


class _Gate:
    """Holds the MCP SDK's import, and the server module's, until the test opens the gate."""

    def find_spec(self, name, path=None, target=None):
        if name not in ("mcp", "memsync.mcp.server"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None:
            spec.loader = _Held(spec.loader)
        return spec


sys.meta_path.insert(0, _Gate())
'''


def hold_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make the `memsync mcp` subprocesses started from now on hold the MCP SDK's import until the file
    returned exists (a ``sitecustomize`` on ``PYTHONPATH``, at most 60 s)."""
    (tmp_path / "sitecustomize.py").write_text(_GATE)
    gate = tmp_path / "gate"
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MEMSYNC_TEST_GATE", str(gate))
    return gate

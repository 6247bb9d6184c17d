"""A remote that accepts connections and never answers: a tiny TCP server on 127.0.0.1 started by the test,
reached as ``git://`` (git waits for the server's first packet for ever)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class HangingServer:
    """Accepts every connection on ``port`` and holds it open without a byte; ``connections`` counts."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"git://127.0.0.1:{self.port}/memory.git"
        self.connections = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._held.append(conn)
            self.connections += 1

    def close(self) -> None:
        """Stop accepting and drop every held connection."""
        self._sock.close()
        for conn in self._held:
            conn.close()


@contextmanager
def hanging_server() -> Iterator[HangingServer]:
    """A ``HangingServer`` for the block."""
    server = HangingServer()
    try:
        yield server
    finally:
        server.close()

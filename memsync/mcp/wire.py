"""The bytes of the MCP server's stdio transport: stdin read as lines, and the wire (stdout) written, on
the file descriptors themselves. Imports nothing of the SDK.

The SDK's stdio transport reads and writes through ``anyio.wrap_file``: each line read, each write and
each flush is a trip to a worker thread and back, three per request besides the tool's own, about a
millisecond of a recall's five through MCP at 10,000 entries (``bench/recall.py``). Here a pipe or a
socket, what an agent host gives its servers, is read and written without blocking, the event loop
waiting for it to be ready; anything else (a regular file, a terminal) is read and written in a worker
thread as the SDK does. Lines end and are decoded as the SDK reads stdin: at ``\\r\\n``, ``\\r`` or ``\\n``
(universal newlines), bytes that are not UTF-8 replaced. The asynchronous half imports ``anyio`` when
it first runs: the handshake reads its lines before anything of the event loop is loaded.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext

_CHUNK = 1 << 16
# A line ends as universal newlines end it (as the SDK's own transport reads stdin): \r\n, \r or \n.
_LINE_END = re.compile(rb"\r\n?|\n")


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe or a socket (epoll refuses regular files, and
    a terminal's flags are shared with the shell that runs it)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def _nonblocking(fd: int) -> Iterator[None]:
    """``fd`` without blocking for the block, its flags as they were after (the open file description
    is shared with whoever else holds it)."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        yield
    finally:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class Lines:
    """The lines of stdin (``fd``), read in chunks: one by one blocking (``readline``, before there is
    an event loop) and then asynchronously (``aiter``), what was read past a line kept between them."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._start = 0  # where the next line starts in the buffer
        self._scanned = 0  # how far the buffer is known to hold no line end
        self._eof = False

    def _line(self) -> bytes | None:
        """The next whole line read already, its end written ``\\n`` (b"" at the end of input), None when
        more must be read. Each byte is searched once, however long the line."""
        buffer = self._buffer
        end = _LINE_END.search(buffer, max(self._start, self._scanned))
        # A \r last in what was read may begin a \r\n.
        if end is not None and end.end() == len(buffer) and end.group() == b"\r" and not self._eof:
            end = None
        if end is None and not self._eof:
            self._scanned = max(len(buffer) - 1, self._start)
            return None
        stop, after = (len(buffer), len(buffer)) if end is None else (end.start(), end.end())
        line = bytes(buffer[self._start : stop]) + (b"" if end is None else b"\n")
        self._start = after
        if self._start > _CHUNK and self._start * 2 > len(buffer):
            del buffer[: self._start]  # what was given, dropped once it is most of the buffer
            self._start = 0
        self._scanned = self._start
        return line

    def _add(self, chunk: bytes) -> None:
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    def readline(self) -> bytes:
        """The next line ending in ``\\n`` (the last one may have none), b"" at the end of input; blocks.
        Raises OSError when stdin cannot be read."""
        while (line := self._line()) is None:
            try:
                self._add(os.read(self._fd, _CHUNK))
            except BlockingIOError:  # stdin handed over without blocking (a parent's own flag)
                select.select([self._fd], [], [])
        return line

    async def aiter(self) -> AsyncIterator[str]:
        """The lines after those ``readline`` gave, decoded (bytes that are not UTF-8 replaced), until the
        end of input."""
        import anyio

        pollable = _pollable(self._fd)
        with _nonblocking(self._fd) if pollable else nullcontext():
            while True:
                line = self._line()
                if line == b"":
                    return
                if line is not None:
                    yield line.decode("utf-8", errors="replace")
                elif not pollable:
                    read = anyio.to_thread.run_sync(os.read, self._fd, _CHUNK, abandon_on_cancel=True)
                    self._add(await read)
                else:
                    try:
                        self._add(os.read(self._fd, _CHUNK))
                    except BlockingIOError:
                        await anyio.wait_readable(self._fd)


class Wire:
    """The transport's stdout (``fd``), written whole with each ``write``: what the SDK's transport
    writes its messages to, in place of its ``anyio.wrap_file``. ``pollable``: written without blocking
    (a pipe or a socket), else in a worker thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.pollable = _pollable(fd)

    async def write(self, text: str) -> None:
        """Write ``text`` as UTF-8, all of it. Raises OSError (a closed pipe: the client went away)."""
        import anyio

        data = memoryview(text.encode())
        while data:
            if not self.pollable:
                data = data[await anyio.to_thread.run_sync(os.write, self._fd, data) :]
                continue
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)

    async def flush(self) -> None:
        """Nothing to do: ``write`` left nothing behind."""


@asynccontextmanager
async def claimed_stdout() -> AsyncIterator[Wire]:
    """stdout as the transport's wire: while the block lasts, fd 1 points at stderr, so what a handler
    or a child process prints misses the wire (as in the SDK's own transport), and only the returned
    ``Wire`` writes to the client. fd 1 and its flags are as they were after."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    try:
        wire = Wire(fd)
        with _nonblocking(fd) if wire.pollable else nullcontext():
            yield wire
    finally:
        sys.stdout.flush()
        os.dup2(fd, 1)
        os.close(fd)

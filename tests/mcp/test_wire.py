"""The stdio transport's bytes (``memsync.mcp.wire``) on real pipes and files: stdin read as lines in any
chunking, blocking then asynchronously, no byte lost or added; a message written whole through a pipe a
slow client drains; stdout claimed while serving (a stray print goes to stderr) and given back; and a
client that closes stdin right after its requests still gets every answer, a recall's included."""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.mcp.wire import Lines, Wire
from tests.support.mcp_lines import initialize, line


def _feed(fd: int, chunks: list[bytes]) -> threading.Thread:
    """Write ``chunks`` to the pipe ``fd`` from a thread, one write each, then close it."""

    def write() -> None:
        for chunk in chunks:
            os.write(fd, chunk)
            time.sleep(0)
        os.close(fd)

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def _expected(data: bytes) -> list[str]:
    """The lines the SDK's own reader gives for ``data``: a text wrapper with universal newlines, bytes
    that are not UTF-8 replaced."""
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))


def _read_all(lines: Lines, blocking: int) -> list[str]:
    """``blocking`` lines by ``readline``, then the rest by ``aiter``, all decoded."""
    got = [lines.readline().decode("utf-8", errors="replace") for _ in range(blocking)]

    async def rest() -> None:
        got.extend([text async for text in lines.aiter()])

    anyio.run(rest)
    return [text for text in got if text]


PIECES = st.sampled_from([b"\r", b"\n", b"\r\n", b"{}", "é".encode(), b"\xff"])


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"\r", b"\n", b"\r\n", b"{}", "é".encode(), b"\xff"]) | st.binary(max_size=40)
    ).map(b"".join),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
    blocking=st.integers(min_value=0, max_value=3),
)
def test_lines_of_a_pipe_in_any_chunking_are_those_the_sdks_own_reader_gives(
    data: bytes, cuts: list[int], blocking: int
) -> None:
    bounds = sorted({0, len(data), *(cut for cut in cuts if cut < len(data))})
    chunks = [data[start:end] for start, end in itertools.pairwise(bounds)]
    read, write = os.pipe()
    feeder = _feed(write, chunks)
    try:
        got = _read_all(Lines(read), blocking)
    finally:
        feeder.join()
        os.close(read)
    assert "".join(got) == "".join(_expected(data))
    assert got == _expected(data)


def test_lines_of_a_regular_file_are_read_in_a_thread_alike(tmp_path: Path) -> None:
    data = b'{"a": 1}\r\n' + "é\n".encode() + b"\xff\xfe broken\n" + b"x" * 200_000 + b"\nlast"
    path = tmp_path / "requests.jsonl"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = _read_all(Lines(fd), 1)
    finally:
        os.close(fd)
    assert got == _expected(data)
    assert got[2] == "\ufffd\ufffd broken\n" and got[-1] == "last"


def test_a_write_larger_than_the_pipe_reaches_a_slow_reader_whole() -> None:
    read, write = os.pipe()
    message = json.dumps({"text": "ü" * 600_000}) + "\n"  # several times a pipe's buffer
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read, 7000):
            received.extend(chunk)
            time.sleep(0.001)

    reader = threading.Thread(target=drain)
    reader.start()
    flags = os.get_blocking(write)

    async def send() -> None:
        os.set_blocking(write, False)  # as the transport holds it: partial writes, waits for room
        await Wire(write).write(message)

    try:
        anyio.run(send)
    finally:
        os.set_blocking(write, flags)
        os.close(write)
        reader.join()
        os.close(read)
    assert received.decode() == message


_CLAIM = """
import anyio, os, sys
from memsync.mcp.wire import claimed_stdout

async def main():
    async with claimed_stdout() as wire:
        print("stray output", flush=True)
        os.system("echo child output")
        await wire.write("the message\\n")
    print("after", flush=True)

anyio.run(main)
"""


def test_stdout_is_claimed_while_serving_and_given_back() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CLAIM], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "the message\nafter\n"
    assert done.stderr == "stray output\nchild output\n"


def test_a_client_that_closes_stdin_after_its_requests_gets_every_answer(home: Path) -> None:
    """Requests written at once and stdin closed: the SDK cancels what still runs at the end of input,
    so the transport holds the end back until each request is answered."""
    requests = (
        initialize("2025-06-18")
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + b"".join(
            line({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            for n, params in (
                (1, {"name": "recall", "arguments": {"query": "harbor"}}),
                (2, {"name": "status", "arguments": {}}),
                (3, {"name": "history", "arguments": {}}),
            )
        )
        + line({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    )
    done = subprocess.run(
        [sys.executable, "-m", "memsync", "mcp"],
        input=requests,
        capture_output=True,
        timeout=120,
        check=False,
    )
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [0, 1, 2, 3, 4], done.stderr.decode()[-2000:]
    assert answers[1]["result"]["structuredContent"] == {"hits": []}
    assert answers[4]["result"] == {}


def test_every_answer_reaches_a_file_after_many_requests_and_the_end_of_input(tmp_path: Path) -> None:
    """stdin and stdout regular files: the writer is busy when input ends, and every request written is
    still answered, once."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        initialize("2025-06-18")
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + b"".join(line({"jsonrpc": "2.0", "id": n, "method": "tools/list"}) for n in range(1, 31))
        + b"".join(line({"jsonrpc": "2.0", "id": n, "method": "ping"}) for n in range(31, 531))
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        subprocess.run(
            [sys.executable, "-m", "memsync", "mcp"], stdin=stdin, stdout=stdout, timeout=300, check=True
        )
    ids = [json.loads(row)["id"] for row in answers.read_text().splitlines()]
    assert sorted(ids) == list(range(531))


def test_stdin_handed_over_without_blocking_is_waited_on(tmp_path: Path) -> None:
    """A parent may give its child a pipe already marked O_NONBLOCK: the server waits for input."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    server = subprocess.Popen(
        [sys.executable, "-m", "memsync", "mcp"],
        stdin=read,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "server.log").open("w"),
    )
    os.close(read)
    try:
        time.sleep(1)  # the server reads before anything is written
        os.write(write, initialize("2025-06-18") + line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        os.close(write)
        out, _ = server.communicate(timeout=120)
    finally:
        server.kill()
    assert [json.loads(row)["id"] for row in out.splitlines()] == [0, 1], (
        tmp_path / "server.log"
    ).read_text()


def _serving(server: subprocess.Popen[bytes], stdin: int, stdout: int) -> list[dict[str, object]]:
    """Open a session with ``server`` through the pipe ends ``stdin`` and ``stdout`` (the test's own),
    and its answers to initialize and a ping (served by the SDK: the transport is up)."""
    os.write(stdin, initialize("2025-06-18") + line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    got = b""
    while got.count(b"\n") < 2:
        got += os.read(stdout, 65536)
    return [json.loads(row) for row in got.splitlines()]


def test_sigterm_leaves_stdin_and_stdout_as_they_were(tmp_path: Path) -> None:
    """Pipes whose ends the parent shares (the same open file descriptions): a SIGTERM, how hosts stop
    servers, still gives them back blocking."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    server = subprocess.Popen(
        [sys.executable, "-m", "memsync", "mcp"],
        stdin=stdin_read,
        stdout=stdout_write,
        stderr=(tmp_path / "server.log").open("w"),
    )
    try:
        assert [answer["id"] for answer in _serving(server, stdin_write, stdout_read)] == [0, 1]
        assert not os.get_blocking(stdin_read) and not os.get_blocking(stdout_write)  # while serving
        server.terminate()
        server.wait(timeout=60)
        assert os.get_blocking(stdin_read) and os.get_blocking(stdout_write)
    finally:
        server.kill()
        for fd in (stdin_read, stdin_write, stdout_read, stdout_write):
            os.close(fd)

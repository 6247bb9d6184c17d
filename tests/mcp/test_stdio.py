"""`memsync mcp` spoken to in raw bytes on stdin (a real subprocess): every request the SDK cannot decode
(invalid JSON, a lone surrogate, arguments nested 10^5 deep, JSON that is no JSON-RPC message) gets a
JSON-RPC error with its id (null when the line has none), and the server still answers the requests
after it; a `remember` over the text limit is refused in one line naming the limit."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import mcp_types as types
from hypothesis import given
from hypothesis import strategies as st

from memsync.formats.bounded_json import has_lone_surrogate
from memsync.formats.jsonl.location import default_memory_path
from memsync.mcp.stdio import request_id
from memsync.memoryfile.file import TEXT_MAX_CHARS

DEEP = 100_000
BAD: list[tuple[bytes, int, object]] = [  # a line, the error code it gets, the id it is answered with
    (b'{"jsonrpc":"2.0","id":11,"method":"tools/list"', types.PARSE_ERROR, 11),
    (b"not json at all", types.PARSE_ERROR, None),
    (
        b'{"jsonrpc":"2.0","id":"s-12","method":"tools/call",'
        b'"params":{"name":"recall","arguments":{"query":"\\ud800"}}}',
        types.PARSE_ERROR,
        "s-12",
    ),
    (
        b'{"jsonrpc":"2.0", "id" : 13,"method":"tools/call","params":{"name":"recall","arguments":{"query":'
        + b"[" * DEEP
        + b"]" * DEEP
        + b"}}}",
        types.PARSE_ERROR,
        13,
    ),
    (b'{"jsonrpc":"2.0","method":7,"id":14}', types.INVALID_REQUEST, 14),
    (b"[1,2]", types.INVALID_REQUEST, None),
    # An id that is no string nor integer: the SDK reads these as notifications, which get no answer.
    *(
        (b'{"jsonrpc":"2.0","id":' + bad + b',"method":"tools/list"}', types.INVALID_REQUEST, None)
        for bad in (b"1.5", b"1e400", b"null", b"true", b'{"a":1}', b"[15]")
    ),
    (b'{"jsonrpc":"2.0","method":"ping","params":{"id":1},"id":1.0}', types.INVALID_REQUEST, None),
]


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _request(number: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    return _line({"jsonrpc": "2.0", "id": number, "method": method, **({"params": params} if params else {})})


def test_undecodable_requests_get_errors_with_their_ids_and_the_server_goes_on(
    home: Path, tmp_path: Path
) -> None:
    errlog = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "memsync", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog
    )
    assert server.stdin is not None and server.stdout is not None
    answers: Queue[dict[str, Any]] = Queue()
    stdout = server.stdout

    def read_answers() -> None:
        for raw in stdout:
            answers.put(json.loads(raw))

    threading.Thread(target=read_answers, daemon=True).start()

    def answer(timeout: float = 30) -> dict[str, Any]:
        try:
            return answers.get(timeout=timeout)
        except Empty:
            raise AssertionError(f"no answer within {timeout} s") from None

    try:
        hello = {"protocolVersion": types.LATEST_PROTOCOL_VERSION, "capabilities": {}}
        server.stdin.write(
            _request(1, "initialize", {**hello, "clientInfo": {"name": "raw", "version": "0"}})
        )
        server.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.stdin.flush()
        assert answer()["id"] == 1
        for line, code, number in BAD:
            server.stdin.write(line + b"\n")
            server.stdin.flush()
            got = answer()
            assert (got["id"], got["error"]["code"]) == (number, code), (line[:80], got)
            assert got["error"]["message"].startswith(
                "Parse error: " if code == -32700 else "Invalid Request: "
            )
        # Bytes that are no UTF-8 (a surrogate's encoding) read as U+FFFD, as the SDK reads them: answered.
        server.stdin.write(b'{"jsonrpc":"2.0","id":21,"method":"ping","params":{"x":"\xed\xa0\x80"}}\n')
        long_text = "x" * 2_000_000
        server.stdin.write(_request(22, "tools/call", {"name": "remember", "arguments": {"text": long_text}}))
        server.stdin.write(_request(23, "ping"))
        server.stdin.flush()
        by_id = {message["id"]: message for message in (answer(), answer(), answer())}
        assert by_id[21]["result"] == {} and by_id[23]["result"] == {}
        refused = by_id[22]["result"]
        assert refused["isError"] is True
        [block] = refused["content"]
        assert f"over the limit of {TEXT_MAX_CHARS:,}" in block["text"] and "\n" not in block["text"]
        assert not default_memory_path().exists() or b"xxxx" not in default_memory_path().read_bytes()
    finally:
        server.stdin.close()
        assert server.wait(timeout=30) == 0
        errlog.close()
    assert "Traceback" not in (tmp_path / "server.log").read_text()


@given(st.text(max_size=300), st.integers(-(10**20), 10**20))
def test_the_id_of_any_line_is_read_as_json_reads_it_and_can_be_answered(text: str, number: int) -> None:
    for line in (text, json.dumps({"id": text}), json.dumps({"id": number}), '{"id":' + json.dumps(text)):
        error = types.JSONRPCError(
            jsonrpc="2.0", id=request_id(line), error=types.ErrorData(code=-1, message="")
        )
        error.model_dump_json()  # an id the answer cannot hold would stop the server's writer
    assert request_id(json.dumps({"jsonrpc": "2.0", "params": {"id": 5}, "id": text})) == (
        None if has_lone_surrogate(text) else text
    )
    assert request_id(json.dumps({"id": number, "x": "[" * 1000})) == (
        number if abs(number) < 10**18 else None
    )

"""`memsync mcp` answers `initialize` before the MCP SDK is imported (``handshake``), with what the SDK
itself answers, once; the SDK then serves the same session (a real subprocess spoken to in raw lines)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from memsync.mcp.handshake import PROTOCOL_VERSIONS, answer, answer_tools
from memsync.mcp.tool_list import TOOL_LIST
from tests.support.helpers import run_cli
from tests.support.mcp_lines import RawServer, hold_sdk, initialize, line

_REST = (
    line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    + line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    + line({"jsonrpc": "2.0", "id": 2, "method": "ping"})
)


def test_initialize_is_answered_as_the_sdk_answers_it_once_and_the_sdk_serves_the_session(
    home: Path, tmp_path: Path
) -> None:
    versions = ["2024-11-05"]  # not the latest: the one asked for is kept
    # First line initialize: answered by handshake. First line blank: the SDK answers everything (the
    # blank line gets its parse error, id null), initialize included.
    early = {v: RawServer(tmp_path, f"early-{v}") for v in versions}
    late = {v: RawServer(tmp_path, f"late-{v}") for v in versions}
    for version in versions:
        mine = early[version].exchange(initialize(version) + _REST, 2)
        sdk = [
            a for a in late[version].exchange(b"\n" + initialize(version) + _REST, 2) if a["id"] is not None
        ]
        assert [a["id"] for a in mine] == [0, 1, 2], mine  # one answer each: the SDK's to id 0 dropped
        assert mine[0] == sdk[0], (mine[0], sdk[0])
        assert mine[0]["result"]["protocolVersion"] == (
            version if version in PROTOCOL_VERSIONS else "2025-11-25"
        )
        tools = {tool["name"] for tool in mine[1]["result"]["tools"]}
        assert {"remember", "recall", "forget"} <= tools
        assert mine[1:] == sdk[1:]


def test_the_handshake_knows_the_sdks_protocol_versions_and_loads_no_sdk() -> None:
    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == PROTOCOL_VERSIONS
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, memsync.mcp.handshake; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"


@given(st.binary(max_size=300))
def test_any_first_line_is_answered_or_left_to_the_sdk(line: bytes) -> None:
    for answered in (answer(line), answer_tools(line)):
        if answered is not None:
            request, reply = answered
            assert json.loads(reply)["id"] == request == json.loads(line)["id"]


def test_requests_the_sdk_must_judge_are_left_to_it() -> None:
    good = json.loads(initialize("2025-06-18"))
    for asked, given_ in (("2025-06-18", "2025-06-18"), ("1999-01-01", PROTOCOL_VERSIONS[-1])):
        answered = answer(initialize(asked))
        assert answered is not None
        assert json.loads(answered[1])["result"]["protocolVersion"] == given_
    for bad in (
        {**good, "id": True},
        {**good, "id": 1.5},
        {**good, "id": None},
        {**good, "method": "ping"},
        {**good, "jsonrpc": "1.0"},
        {**good, "params": {**good["params"], "clientInfo": {"name": "t"}}},
        {**good, "params": {**good["params"], "protocolVersion": 7}},
        {k: v for k, v in good.items() if k != "id"},
        # Lines the SDK refuses whole: a string UTF-8 cannot hold, anywhere in the message.
        {**good, "id": "\ud800"},
        {**good, "x": "\udfff"},
        {**good, "params": {**good["params"], "clientInfo": {"name": "t\ud800", "version": "1"}}},
    ):
        assert answer(line(bad)) is None, bad
    assert answer(b"\xef\xbb\xbf" + initialize("2025-06-18")) is None  # a byte order mark
    assert answer(b"[" * 100_000 + b"]" * 100_000) is None
    deep = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"a": [[["\ud800"]]]}}
    assert answer_tools(line(deep)) is None


def test_a_first_line_the_sdk_refuses_whole_gets_its_error_and_only_that(tmp_path: Path) -> None:
    """An initialize whose id or a member holds a lone surrogate escape, or after a byte order mark: the
    SDK's parse error, one answer (the handshake answered and crashed on the first, answered twice the
    others)."""
    good = json.loads(initialize("2025-06-18"))
    for n, first in enumerate(
        (line({**good, "id": "\ud800"}), line({**good, "x": "\ud800"}), b"\xef\xbb\xbf" + line(good))
    ):
        server = RawServer(tmp_path, f"refused{n}")
        answers = server.exchange(first + line({"jsonrpc": "2.0", "id": 9, "method": "ping"}), 9)
        assert server.process.returncode == 0
        errors = [a for a in answers if "error" in a]
        assert [a["error"]["code"] for a in errors] == [-32700] and len(answers) == 2, answers


def test_a_recall_before_initialize_gets_the_sdks_refusal(home: Path, tmp_path: Path) -> None:
    """The SDK serves tool calls only once the client said initialize: the transport's own answer to a
    recall waits for it too, even with the index held."""
    assert run_cli("init").returncode == 0
    assert run_cli("remember", "Deploys happen on Fridays.").returncode == 0
    assert "Fridays" in run_cli("recall", "deploys").stdout  # the index built: the server holds it at once
    server = RawServer(tmp_path, "uninitialized")
    try:
        server.send(line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        server.until(1)
        time.sleep(2)  # the index held and the model loaded by now, most likely
        call = {"jsonrpc": "2.0", "method": "tools/call"}
        arguments = {"query": "deploys"}
        server.send(
            line({**call, "id": 2, "params": {"name": "recall", "arguments": arguments}})
            + line({**call, "id": 3, "params": {"name": "recall", "arguments": arguments, "_meta": {}}})
        )
        answers = {a["id"]: a for a in server.until(2, 3)}
    finally:
        server.process.kill()
        server.process.wait(timeout=30)
    assert "error" in answers[3], answers[3]
    assert answers[2]["error"] == answers[3]["error"]


def test_tools_are_listed_before_the_sdk_is_loaded_and_the_sdk_takes_over(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that gives ``tools/list`` a short timeout (Claude Code: 5 s) gets the tools while the
    SDK is still being imported (held here until the gate opens), and the SDK serves what comes next
    without answering either request twice."""
    gate = hold_sdk(tmp_path, monkeypatch)
    server = RawServer(tmp_path, "gated")
    stdin = server.process.stdin
    assert stdin is not None
    stdin.write(initialize("2025-11-25") + _REST.rsplit(b"\n", 2)[0] + b"\n")
    stdin.flush()
    first = [server.answers.get(timeout=30), server.answers.get(timeout=30)]
    assert not gate.exists()  # both answered while the SDK's import was held
    assert [a["id"] for a in first] == [0, 1]
    assert first[1]["result"] == json.loads(TOOL_LIST)
    assert {"remember", "recall"} <= {tool["name"] for tool in first[1]["result"]["tools"]}
    gate.touch()
    rest = server.exchange(line({"jsonrpc": "2.0", "id": 2, "method": "ping"}), 2)
    assert [a["id"] for a in rest] == [2] and rest[0]["result"] == {}, rest


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_the_early_tool_list_is_the_sdks_for_every_protocol_version(
    home: Path, tmp_path: Path, version: str
) -> None:
    """``tool_list.TOOL_LIST`` is what the SDK lists (``scripts/mcp_tool_list.py`` writes it again)."""
    late = RawServer(tmp_path, f"sdk-{version}").exchange(b"\n" + initialize(version) + _REST, 2)
    listed = next(a for a in late if a["id"] == 1)
    assert listed["result"] == json.loads(TOOL_LIST), "run scripts/mcp_tool_list.py"


def test_the_server_hosts_start_answers_initialize_without_importing_the_cli(home: Path) -> None:
    """`python -m memsync mcp` (the command hosts run) goes to the server without the CLI's imports:
    its initialize answer is not held up by them (5 s is all `qwen mcp list` allows)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memsync", "mcp"],
        input=initialize("2025-06-18") + _REST,
        capture_output=True,
        timeout=120,
        check=False,
    )
    answers = [json.loads(out) for out in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 2], answers
    assert answers[0]["result"]["serverInfo"]["name"] == "memsync"
    imported = [row.rpartition("|")[2].strip() for row in done.stderr.decode().splitlines() if "|" in row]
    assert "mcp.server" in imported  # the SDK served the session
    assert not [name for name in imported if name == "typer" or name.startswith("memsync.cli")], imported

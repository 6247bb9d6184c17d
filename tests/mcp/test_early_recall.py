"""`memsync mcp` answers a recall that arrives before the MCP SDK is loaded itself (``recall.call_result``),
with what the SDK answers, from the memory as it is: the SDK's import held in a real subprocess spoken to
in raw lines, the index kept, stale or corrupt."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memsync.memoryfile.file import MemoryFile, NewEntry
from memsync.recall.index import RecallIndex, fts_query, index_path
from tests.support.helpers import cli_main, run_cli, wait_for
from tests.support.mcp_client import server_log
from tests.support.mcp_lines import RawServer, hold_sdk, initialize, line

# What a lexical recall needs none of: the config's editor, the CLI, YAML front matter, the writers'
# lock, the store beyond its history, the SDK and its models, the semantic extra, the C library's calls.
_NOT_FOR_A_RECALL = (
    "ctypes",
    "tomlkit",
    "typer",
    "click",
    "yaml",
    "filelock",
    "pydantic",
    "pydantic_core",
    "mcp",
    "mcp_types",
    "numpy",
    "memsync.store.facade",
    "memsync.cli",
)
_INITIALIZED = line({"jsonrpc": "2.0", "method": "notifications/initialized"})
_TOOLS = line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def _recall(request: int, meta: bool = False, **arguments: Any) -> bytes:
    """A call of recall; with ``meta`` an empty ``_meta`` beside its arguments, which only the SDK serves
    (``recall.call_result`` leaves any request it does not plainly know to it)."""
    params: dict[str, Any] = {"name": "recall", "arguments": arguments, **({"_meta": {}} if meta else {})}
    return line({"jsonrpc": "2.0", "id": request, "method": "tools/call", "params": params})


def _calls(meta: bool) -> bytes:
    return (
        _recall(2, meta, query="deploys")
        + _recall(3, meta, query="staging review", kind="fact", limit=1)
        + _recall(4, meta, query="release", scope="global")
        + _recall(5, meta, query="...")  # no word: refused with the tool's message, isError
    )


def _sdk_calls(meta: bool) -> bytes:
    """Calls that are the SDK's to answer, whoever reads them first: scopes it reads as the JSON they
    spell before it validates (null: no scope; a list: refused)."""
    return _recall(6, meta, query="deploys", scope="null") + _recall(7, meta, query="deploys", scope="[1]")


_CALLED = (2, 3, 4, 5, 6, 7)


def _sdk_answers(tmp_path: Path) -> dict[int, dict[str, Any]]:
    """The answers of the SDK alone to ``_calls`` (a blank first line: the handshake leaves the session
    to it; ``_meta``: the transport leaves the calls to it)."""
    sdk = RawServer(tmp_path, "sdk").exchange(
        b"\n" + initialize("2025-11-25") + _INITIALIZED + _calls(meta=True) + _sdk_calls(meta=True), *_CALLED
    )
    return {a["id"]: a for a in sdk if a["id"] is not None}


def _hits(answer: dict[str, Any]) -> dict[str, str]:
    assert answer["result"]["isError"] is False, answer
    return {hit["id"]: hit["text"] for hit in answer["result"]["structuredContent"]["hits"]}


@pytest.fixture
def deploys(home: Path) -> dict[str, str]:
    """memsync initialised, and a memory file whose entries about deploys are alive (``alive``,
    ``corrected``), superseded (``wrong``), forgotten (``forgotten``) or expired (``expired``): their ids."""
    assert run_cli("init").returncode == 0
    memory = MemoryFile(home / ".agent-memory" / "ada.jsonl")
    alive = memory.remember(NewEntry("Deploys happen on Fridays after the staging review."))
    wrong = memory.remember(NewEntry("Deploys go through the staging gate."))
    corrected = memory.remember(NewEntry("Deploys go through the release gate.", supersedes=wrong.id))
    forgotten = memory.remember(NewEntry("Deploys used the old pipeline."))
    memory.forget(forgotten.id)
    expired = memory.remember(
        NewEntry("Deploys freeze for the holidays.", expires="1h"), datetime(2020, 1, 1, tzinfo=UTC)
    )
    return {
        "alive": alive.id,
        "corrected": corrected.id,
        "wrong": wrong.id,
        "forgotten": forgotten.id,
        "expired": expired.id,
    }


def test_a_recall_before_the_sdk_is_loaded_is_answered_as_the_sdk_answers_it(
    deploys: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli("sync").returncode == 0  # hosts and dates from git, as the SDK's tool gives them
    by_id = _sdk_answers(tmp_path)
    gate = hold_sdk(tmp_path, monkeypatch)
    early = RawServer(tmp_path, "early")
    try:
        early.send(initialize("2025-11-25") + _INITIALIZED + _TOOLS + _calls(meta=False))
        mine = early.until(*_CALLED[:4])
        assert not gate.exists()  # all answered while the SDK's import was held
    finally:
        early.process.kill()
        early.process.wait(timeout=30)
    assert [a["id"] for a in mine] == [0, 1, *_CALLED[:4]]
    for answer in mine[2:]:
        assert answer == by_id[answer["id"]], (answer, by_id[answer["id"]])
    assert set(_hits(mine[2])) == {deploys["alive"], deploys["corrected"]}
    assert _hits(mine[3]) == {deploys["alive"]: "Deploys happen on Fridays after the staging review."}
    assert mine[5]["result"]["isError"] is True
    assert "no word to search for" in mine[5]["result"]["content"][0]["text"]


def test_a_recall_once_the_sdk_is_loaded_is_answered_by_the_transport_as_the_sdk_answers_it(
    deploys: dict[str, str], tmp_path: Path
) -> None:
    """Once the index is held open, the transport answers a recall itself (``stdio._recalled``): its
    answers are the SDK's, refusal included."""
    assert run_cli("sync").returncode == 0
    by_id = _sdk_answers(tmp_path)
    held = RawServer(tmp_path, "held")
    try:
        ping = line({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        held.send(initialize("2025-11-25") + _INITIALIZED + _TOOLS + ping)
        held.until(9)  # the SDK serves the ping: it is loaded, the handshake is over
        held.send(_calls(meta=False) + _sdk_calls(meta=False))
        mine = {a["id"]: a for a in held.until(*_CALLED)}
    finally:
        held.process.kill()
        held.process.wait(timeout=30)
    for request in _CALLED:
        assert mine[request] == by_id[request], (mine[request], by_id[request])
    assert set(_hits(mine[2])) == {deploys["alive"], deploys["corrected"]}
    # The refusal was logged by the transport's answer (memsync/mcp/recall.py), not the SDK's tool.
    log = server_log(tmp_path / "held.log")
    assert re.search(r"recall_tool refused[^\n]*recall\.py:\d+", log), log
    assert not re.search(r"recall_tool refused[^\n]*server\.py", log), log


@pytest.mark.parametrize("index", ["stale", "corrupt"])
def test_a_recall_during_the_warm_up_answers_from_the_memory_as_it_is(
    deploys: dict[str, str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: str
) -> None:
    """The first recalls come at once after ``initialize`` (the warm-up thread just started), from an
    index a one-shot recall kept before the memory changed, or from a corrupt one: the hits are the
    live entries of the memory now, never a dead one."""
    assert run_cli("recall", "deploys").returncode == 0  # the index kept
    memory = MemoryFile(home / ".agent-memory" / "ada.jsonl")
    live = {deploys["alive"], deploys["corrected"]}
    if index == "stale":
        memory.forget(deploys["alive"])
        live = {deploys["corrected"], memory.remember(NewEntry("Deploys need two approvals.")).id}
    else:
        index_path().write_bytes(b"not a database" * 100)
    gate = hold_sdk(tmp_path, monkeypatch)
    server = RawServer(tmp_path, index)
    try:
        server.send(initialize("2025-11-25") + _INITIALIZED + _recall(1, query="deploys"))
        first = server.until(1)[-1]
        server.send(_recall(2, query="deploys gate approvals"))
        second = server.until(2)[-1]
        assert not gate.exists()
    finally:
        server.process.kill()
        server.process.wait(timeout=30)
    assert set(_hits(first)) == live, first
    assert set(_hits(second)) == live, second


def test_the_server_readies_recall_from_its_start_before_any_recall(
    deploys: dict[str, str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From its start, with the SDK's import held and no request after ``initialize`` (its client still
    thinking), the server brings a stale kept index up to date: the warm-up runs before the SDK, not
    once a later request arrives, so a first recall finds the index ready."""
    assert run_cli("recall", "deploys").returncode == 0  # the index kept
    added = MemoryFile(home / ".agent-memory" / "ada.jsonl").remember(NewEntry("Deploys need two approvals."))

    def indexed() -> bool:
        with RecallIndex.open(index_path()) as index:
            found = index.search(fts_query("approvals"), now=datetime.now(UTC), limit=10)
        return [hit.doc.id for hit in found] == [added.id]

    assert not indexed()
    gate = hold_sdk(tmp_path, monkeypatch)
    server = RawServer(tmp_path, "ready")
    try:
        server.send(initialize("2025-11-25") + _INITIALIZED)
        assert [answer["id"] for answer in server.until(0)] == [0]
        wait_for(indexed, timeout=60, what="the kept index brought up to date by the warm-up")
        assert not gate.exists()
    finally:
        server.process.kill()
        server.process.wait(timeout=30)


def test_a_first_lexical_recall_imports_only_what_it_needs(
    deploys: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new server's first recall, sent at once after ``initialize`` (the semantic extra hidden, the
    index kept, hosts from git), is answered with the live entries having imported neither the SDK nor
    anything else a recall does not need (``python -X importtime``: every module, as it is loaded)."""
    assert cli_main("sync").returncode == 0
    assert cli_main("recall", "deploys").returncode == 0  # the index kept
    gate = hold_sdk(tmp_path, monkeypatch)
    with (tmp_path / "sitecustomize.py").open("a") as custom:
        custom.write("sys.modules['wordllama'] = None  # lexical recall\n")
    server = RawServer(tmp_path, "imports", ("-X", "importtime"))
    try:
        server.send(initialize("2025-11-25") + _INITIALIZED + _recall(1, query="deploys"))
        first = server.until(1)[-1]
        assert not gate.exists()
    finally:
        server.process.kill()
        server.process.wait(timeout=30)
    assert set(_hits(first)) == {deploys["alive"], deploys["corrected"]}
    assert {hit["host"] for hit in first["result"]["structuredContent"]["hits"]} != {""}
    # `import time: self | cumulative | name`, the name indented by its depth.
    log = (tmp_path / "imports.log").read_text()
    imported = {row.rsplit("|", 1)[1].strip() for row in log.splitlines() if row.startswith("import time:")}
    # (The server's own ``importlib.import_module`` calls are not listed; what they import is.)
    assert {"memsync.recall.index", "memsync.store.history"} <= imported
    needless = sorted(
        name for name in imported if any(name == n or name.startswith(f"{n}.") for n in _NOT_FOR_A_RECALL)
    )
    assert needless == []

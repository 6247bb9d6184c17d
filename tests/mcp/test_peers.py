"""MCP between machines, and MCP servers side by side: `remember` through MCP on one peer is found by
`recall` through MCP on the other (real daemons, a real bare remote); four servers writing one memory
file at once lose nothing."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memsync.formats.jsonl.location import default_memory_path
from memsync.formats.jsonl.parse import check_memory_file, read_memory
from memsync.formats.jsonl.records import Entry
from tests.support.mcp_client import eventually, mcp_session, ok, server_log
from tests.support.peers import MEMORY_FILE, Peer, running

pytestmark = pytest.mark.slow

SERVERS = 4
PER_SERVER = 30
AT_ONCE = 5


def test_remembered_on_one_peer_is_recalled_on_the_other(
    tmp_path: Path, remote: Path, peers: list[Peer]
) -> None:
    alice = Peer.create(tmp_path, "alice", remote)
    bob = Peer.create(tmp_path, "bob", remote)
    peers += [alice, bob]
    text = "The harbor site blocks requests without a user agent."

    async def scenario() -> None:
        with (tmp_path / "a.log").open("w") as err_a, (tmp_path / "b.log").open("w") as err_b:
            async with mcp_session(alice.env, err_a) as on_a, mcp_session(bob.env, err_b) as on_b:
                added = await ok(on_a, "remember", {"text": text, "kind": "lesson", "file": MEMORY_FILE})
                assert added["file"] == str(alice.memory_file)

                async def found() -> list[dict[str, object]]:
                    hits = (await ok(on_b, "recall", {"query": "harbor user agent"}))["hits"]
                    return [hit for hit in hits if hit["id"] == added["id"]]

                [hit] = await eventually(found, 60, "bob's recall to find alice's entry")
                assert (hit["text"], hit["file"], hit["store_path"]) == (
                    text,
                    str(bob.memory_file),
                    "memory/memory.jsonl",
                )
                # Who wrote it: alice's commit, which bob's store merged.
                await eventually(
                    lambda: _committed_by(on_b, added["id"], "alice"), 60, "alice's commit in bob's store"
                )

    with running(alice, bob):
        anyio.run(scenario)
    for log in ("a.log", "b.log"):
        assert "Traceback" not in server_log(tmp_path / log)


async def _committed_by(session: object, entry_id: str, host: str) -> bool:
    hits = (await ok(session, "recall", {"query": "harbor"}))["hits"]  # type: ignore[arg-type]
    return any(h["id"] == entry_id and h["committed"] and h["host"] == host for h in hits)


def test_four_servers_writing_one_memory_file_lose_nothing(home: Path, tmp_path: Path) -> None:
    written: list[tuple[str, str]] = []

    async def writer(number: int) -> None:
        with (tmp_path / f"server{number}.log").open("w") as err:
            async with mcp_session({}, err) as session:

                async def one(index: int) -> None:
                    text = f"Server {number} learned lesson number {index}."
                    added = await ok(session, "remember", {"text": text, "kind": "lesson"})
                    written.append((added["id"], text))

                for start in range(0, PER_SERVER, AT_ONCE):  # several calls in flight per server, too
                    async with anyio.create_task_group() as group:
                        for index in range(start, start + AT_ONCE):
                            group.start_soon(one, index)

    async def scenario() -> None:
        async with anyio.create_task_group() as group:
            for number in range(SERVERS):
                group.start_soon(writer, number)

    anyio.run(scenario)
    path = default_memory_path()
    parsed = read_memory(path)
    entries = [r.record for r in parsed.records if isinstance(r.record, Entry)]
    assert len(written) == SERVERS * PER_SERVER
    assert sorted((e.id, e.text) for e in entries) == sorted(written)  # each once, none lost or torn
    assert check_memory_file(path) == []
    assert path.read_bytes().count(b"\n") == 1 + SERVERS * PER_SERVER  # the header, then one line each

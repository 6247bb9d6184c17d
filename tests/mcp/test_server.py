"""`memsync mcp` through the SDK's own stdio client: tools and their schemas, every tool called, resources
read, bad arguments answered with MCP errors while the server goes on serving."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import TextResourceContents

from memsync.base.paths import config_path
from memsync.config.file import edit_config
from memsync.formats.jsonl.parse import read_memory
from memsync.formats.jsonl.records import KINDS, Tombstone
from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.support.helpers import run_cli
from tests.support.mcp_client import call, mcp_session, ok, server_log, text_of

HOST = "laptop-a"
DAILY = "# Daily log — 2026-11-30\n\n- [09:15] The staging database was rebuilt overnight.\n"
INDEX = (
    "# Memory index — qa\n\n- [User timezone](user_timezone.md) — works in Europe/Berlin time\n"
    "- Deploys happen on Fridays only\n"
)
CURATED = "---\nname: User timezone\ndescription: works in Europe/Berlin time\ntype: user\n---\n\nCET.\n"


@pytest.fixture
def memory_home(home: Path) -> Path:
    """A HOME with memsync initialised (local store, host laptop-a), a role directory ``qa`` and a memory
    file ``ada.jsonl`` in the default tracked folders, all committed by one `memsync sync`."""
    assert run_cli("init").returncode == 0
    edit_config(config_path(), lambda raw: raw.__setitem__("host", HOST))
    role = home / ".agents" / "memory" / "qa"
    (role / "daily").mkdir(parents=True)
    (role / "MEMORY.md").write_text(INDEX)
    (role / "user_timezone.md").write_text(CURATED)
    (role / "daily" / "2026-11-30.md").write_text(DAILY)
    MemoryFile(home / ".agent-memory" / "ada.jsonl").remember(
        NewEntry("Use plain English in commit messages.", "preference")
    )
    result = run_cli("sync")
    assert result.returncode == 0, result.stderr
    return home


def _entries(path: Path) -> dict[str, str]:
    return {
        r.record.id: r.record.text for r in read_memory(path).records if not isinstance(r.record, Tombstone)
    }


def test_every_tool_and_the_resources_through_the_sdk_client(memory_home: Path, tmp_path: Path) -> None:
    ada = memory_home / ".agent-memory" / "ada.jsonl"
    synced_id = next(iter(_entries(ada)))
    errlog = tmp_path / "server.log"

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                assert set(tools) == {
                    "remember",
                    "forget",
                    "recall",
                    "prompt",
                    "history",
                    "handoff",
                    "status",
                }
                for tool in tools.values():
                    assert tool.description and "\n" not in tool.description
                    assert tool.input_schema["type"] == "object"
                remember_schema = tools["remember"].input_schema
                assert remember_schema["required"] == ["text"]
                assert remember_schema["properties"]["kind"]["anyOf"][0]["enum"] == list(KINDS)
                assert tools["recall"].input_schema["required"] == ["query"]
                output = tools["recall"].output_schema
                assert output is not None and output["properties"]["hits"]["type"] == "array"
                hit = output["properties"]["hits"]["items"]
                assert {"id", "file", "host", "date"} <= set(hit["properties"])
                # Nullable fields as type lists, not anyOf: a lighter check for each hit a client makes.
                assert hit["properties"]["store"]["type"] == ["string", "null"]
                assert "anyOf" not in json.dumps(output)
                assert tools["forget"].input_schema["required"] == ["id"]
                assert tools["handoff"].input_schema["required"] == ["from_agent", "to_agent"]

                added = await ok(
                    session,
                    "remember",
                    {
                        "text": "The harbor site blocks requests without a user agent.",
                        "kind": "lesson",
                        "scope": "harbor.example",
                        "tags": ["fetching"],
                        "file": "ada",
                    },
                )
                assert added["file"] == str(ada) and added["source"] == "mcp"
                assert _entries(ada)[added["id"]] == "The harbor site blocks requests without a user agent."

                hits = (await ok(session, "recall", {"query": "harbor user agent"}))["hits"]
                assert hits[0]["id"] == added["id"] and hits[0]["type"] == "entry"
                assert (hits[0]["host"], hits[0]["committed"]) == (HOST, False)  # not synced yet
                curated = (await ok(session, "recall", {"query": "Berlin"}))["hits"][0]
                assert curated["id"] == "roles/qa/user_timezone.md" and curated["type"] == "curated"
                assert (curated["host"], curated["committed"], curated["kind"]) == (HOST, True, "preference")
                index = (await ok(session, "recall", {"query": "deploys friday"}))["hits"][0]
                assert (index["type"], index["id"]) == ("index", "roles/qa/MEMORY.md:4")
                line = (await ok(session, "recall", {"query": "staging database"}))["hits"][0]
                assert line["id"] == "roles/qa/daily/2026-11-30.md:3"
                assert (line["date"], line["host"], line["committed"]) == ("2026-11-30T09:15", HOST, True)
                only = (await ok(session, "recall", {"query": "harbor Berlin", "kind": "preference"}))["hits"]
                assert [hit["id"] for hit in only] == ["roles/qa/user_timezone.md"]

                newer = await ok(
                    session,
                    "remember",
                    {"text": "The harbor site wants a browser user agent.", "supersedes": added["id"]},
                )
                assert newer["supersedes"] == added["id"] and newer["kind"] == "lesson"
                texts = [hit["text"] for hit in (await ok(session, "recall", {"query": "harbor"}))["hits"]]
                assert texts == ["The harbor site wants a browser user agent."]
                gone = await ok(session, "forget", {"id": newer["id"]})
                assert gone == {"id": newer["id"], "file": str(ada)}
                assert (await ok(session, "recall", {"query": "harbor"}))["hits"] == []

                block = await ok(session, "prompt", {"target": "ada", "scope": "global"})
                assert block.startswith("# Memory (global)\n") and "Use plain English" in block
                assert "Memory index — qa" in await ok(session, "prompt", {"target": "qa"})

                history = await ok(session, "history", {"target": synced_id})
                assert HOST in history and "added: Use plain English in commit messages." in history
                assert "roles/qa/daily/2026-11-30.md" in await ok(
                    session, "history", {"target": "roles/qa/daily/2026-11-30.md:3"}
                )
                handed = await ok(
                    session, "handoff", {"from_agent": "qa", "to_agent": "ada", "dry_run": True}
                )
                assert handed["summary"].startswith("qa -> ada: dry run:") and handed["written"] == []
                status = await ok(session, "status")
                assert status["stores"]["personal"]["exists"] is True and status["daemon"]["running"] is False

                listed = {str(r.uri): r for r in (await session.list_resources()).resources}
                role_uri, file_uri = "memsync://personal/roles/qa", "memsync://personal/memory/ada.jsonl"
                assert {role_uri, file_uri} <= set(listed)
                view = (await session.read_resource(file_uri)).contents[0]
                assert isinstance(view, TextResourceContents)
                assert view.mime_type == "application/x-ndjson"
                assert [json.loads(line)["text"] for line in view.text.splitlines()] == [
                    "Use plain English in commit messages."
                ]
                snapshot = (await session.read_resource(role_uri)).contents[0]
                assert isinstance(snapshot, TextResourceContents)
                assert "Memory index — qa" in snapshot.text and "staging database" in snapshot.text
                daily = (await session.read_resource(f"{role_uri}/daily/2026-11-30.md")).contents[0]
                assert isinstance(daily, TextResourceContents)
                assert daily.text == DAILY

    anyio.run(scenario)
    assert "Traceback" not in server_log(errlog)


def test_bad_arguments_get_mcp_errors_and_the_server_goes_on(memory_home: Path, tmp_path: Path) -> None:
    ada = memory_home / ".agent-memory" / "ada.jsonl"
    before = ada.read_bytes()
    errlog = tmp_path / "server.log"
    refused = {
        (
            "remember",
            '{"text": "password = hunter2xyzABC123!", "file": "ada"}',
        ): "looks like it holds a secret",
        ("remember", '{"text": "x", "file": "nope"}'): "no tracked memory file is called 'nope'",
        ("remember", '{"text": "x", "expires": "tomorrow"}'): "expiry 'tomorrow'",
        (
            "remember",
            '{"text": "x", "supersedes": "000000000000", "file": "ada"}',
        ): "has no entry with that id",
        ("forget", '{"id": "000000000000"}'): "no tracked memory file has an entry with that id",
        ("recall", '{"query": "!!!"}'): "has no word to search for",
        ("prompt", '{"target": "qa", "scope": "global"}'): "apply to memory files, not role directories",
        ("history", '{"target": "no-such-thing-anywhere"}'): "no commit mentions it yet",
        ("handoff", '{"from_agent": "nobody", "to_agent": "ada"}'): "no tracked agent or path 'nobody'",
    }
    invalid: list[tuple[str, dict[str, object]]] = [
        ("remember", {}),
        ("remember", {"text": "x", "kind": "bogus"}),
        ("remember", {"text": "x", "confidence": 2}),
        ("remember", {"text": "x", "tags": "not-a-list"}),
        ("recall", {"query": "x", "limit": 0}),
        ("no_such_tool", {}),
    ]
    bad_uris = [
        "memsync://personal/../etc/passwd",
        "memsync://personal/roles/qa/../../../etc/passwd",
        "memsync://personal/roles/qa/snapshot.md",
        "memsync://elsewhere/roles/qa",
        "file:///etc/passwd",
    ]

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                for (tool, arguments), reason in refused.items():
                    result = await call(session, tool, json.loads(arguments))
                    assert result.is_error, (tool, arguments)
                    assert reason in text_of(result) and "\n" not in text_of(result), text_of(result)
                for tool, args in invalid:
                    result = await call(session, tool, args)
                    assert result.is_error, (tool, args, result)
                for uri in bad_uris:
                    with pytest.raises(MCPError):
                        await session.read_resource(uri)
                hits = (await ok(session, "recall", {"query": "plain English"}))["hits"]
                assert [hit["text"] for hit in hits] == ["Use plain English in commit messages."]

    anyio.run(scenario)
    assert ada.read_bytes() == before
    assert "Traceback" not in server_log(errlog)


def test_without_a_config_memory_goes_to_the_default_file(home: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "server.log"

    async def scenario() -> None:
        with errlog.open("w") as err:
            async with mcp_session({}, err) as session:
                added = await ok(session, "remember", {"text": "Tabs, not spaces.", "source": "user"})
                assert Path(added["file"]).parent == home / ".agent-memory"
                [entry] = MemoryFile(Path(added["file"])).view()
                assert (entry.source, entry.confidence) == ("user", 1.0)
                hits = (await ok(session, "recall", {"query": "tabs"}))["hits"]
                assert [(h["id"], h["committed"]) for h in hits] == [(added["id"], False)]
                status = await call(session, "status")
                assert status.is_error and "memsync init" in text_of(status)
                assert (await session.list_resources()).resources == []

    anyio.run(scenario)

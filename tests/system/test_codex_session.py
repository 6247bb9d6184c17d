"""Whole Codex sessions (the real ``codex`` CLI from npm, ``codex exec``) on two machines, against a
stand-in of the OpenAI Responses API on 127.0.0.1 that scripts the agent's tool calls and records every
request.

Alice and Bob have one project checked out at different paths. Alice's agent writes Codex's memory
summary (``~/.codex/memories/memory_summary.md``, which Codex puts in the instructions of every session
when its ``memories`` feature is on) with Codex's own ``apply_patch`` tool, and calls memsync's
``remember``; her Stop hook syncs. Bob's next session must carry both in what Codex sends the model, and
its ``recall`` call must return the entry. Then memsync is uninstalled from Bob's machine and a session
runs with every hook completing.

Codex runs hooks only once the user has trusted them (``/hooks`` in Codex, as ``memsync connect codex``
says); the sessions stand for that with ``--dangerously-bypass-hook-trust``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.machines import Machine, alice_and_bob, daemons, wait_delivered, wait_on_remote
from tests.support.model_api import ModelAPI, ToolCall, Turn, Until, served
from tests.support.npm import installed
from tests.support.openai_responses_api import Responses

NOTE = "Production deploys never on Fridays: the on-call team is thin."
SUMMARY = f"## What's in Memory\n- {NOTE}\n"
ENTRY = "Release freeze: tag releases on Thursday, ship Monday."
# A model Codex knows, so that it offers its own apply_patch tool (an unknown model gets none).
MODEL = "gpt-5.5"
# Codex offers an MCP server's tools (a namespace, its tools loaded on demand) once the server has
# started, in the background: the agent waits a second at a time until they are offered.
WAIT_FOR_MCP = Until(
    lambda request: "- mcp__memsync:" in json.dumps(request), [ToolCall("exec_command", {"cmd": "sleep 1"})]
)

pytestmark = pytest.mark.slow


class CodexMachine(Machine):
    """A machine with Codex: memsync connected to it, its sessions run with ``codex exec``."""

    def __init__(self, root: Path, name: str, remote: Path, checkout_at: str, origin: str) -> None:
        super().__init__(
            root, name, remote, checkout_at, origin, host="codex", host_dirs=(".codex/memories",)
        )

    @property
    def memories(self) -> Path:
        """Codex's memories folder on this machine."""
        return self.home / ".codex" / "memories"

    def session(self, prompt: str, turns: Sequence[Turn | Until]) -> tuple[ModelAPI, str]:
        """One ``codex exec PROMPT`` session in the checkout, the model played by ``turns`` (Codex's
        provider pointed at the stand-in); returns the stand-in (with the requests it got) and what Codex
        printed on stderr (its log of hooks and tool calls)."""
        api = ModelAPI(Responses(), list(turns))
        with served(api) as url:
            provider = f'{{name = "stand-in", base_url = "{url}/v1", wire_api = "responses", '
            provider += 'env_key = "STANDIN_KEY"}'
            config = [
                "model_provider=standin",
                f"model_providers.standin={provider}",
                "features.memories=true",
                # Codex's own memory writer would ask the model to rewrite the folder after each session.
                "memories.generate_memories=false",
            ]
            done = self.run_host(
                [
                    "codex",
                    "exec",
                    "--model",
                    MODEL,
                    *(arg for item in config for arg in ("-c", item)),
                    "--dangerously-bypass-approvals-and-sandbox",
                    "--dangerously-bypass-hook-trust",
                    prompt,
                ],
                {"STANDIN_KEY": "sk-stand-in"},
            )
        return api, done.stderr


def _output(result: dict[str, object]) -> str:
    """The tool's own output in a ``function_call_output`` Codex sent back (after its timing header)."""
    return str(result["output"]).split("Output:\n", 1)[-1]


@pytest.mark.timeout(900)  # four Codex sessions and two daemons on a loaded 2-core machine
def test_what_one_machines_codex_session_learns_reaches_the_next_session_on_the_other(tmp_path: Path) -> None:
    installed("codex", "@openai/codex")
    remote, alice, bob = alice_and_bob(CodexMachine, tmp_path)
    with daemons(alice, bob):
        _meet(alice, bob, remote)
    # `pip uninstall memsync` on Bob's machine (its daemon stopped): the hooks stay in his hooks.json and
    # fail open.
    bob.uninstall()
    _, log = bob.session("hello again", ["Hello again."])
    hooks = [line for line in log.splitlines() if line.startswith("hook:")]
    assert {"hook: SessionStart Completed", "hook: Stop Completed"} <= set(hooks), log
    assert all(line.endswith(("Completed", "SessionStart", "UserPromptSubmit", "Stop")) for line in hooks), (
        log
    )


def _meet(alice: CodexMachine, bob: CodexMachine, remote: Path) -> None:
    patch = f"*** Begin Patch\n*** Add File: {alice.memories / 'memory_summary.md'}\n"
    patch += "".join(f"+{line}\n" for line in SUMMARY.splitlines()) + "*** End Patch\n"
    api_alice, _ = alice.session(
        "Remember that we never deploy on Fridays, and our release freeze.",
        [
            [ToolCall("apply_patch", {"input": patch})],
            WAIT_FOR_MCP,
            [ToolCall("mcp__memsync__remember", {"text": ENTRY, "kind": "fact"})],
            "Noted both.",
        ],
    )
    assert (alice.memories / "memory_summary.md").read_text() == SUMMARY
    remembered = api_alice.tool_results("mcp__memsync__remember")
    assert remembered and '"id"' in _output(remembered[0]), remembered
    # Alice's Stop hook starts a sync in the background: the remote gets both.
    wait_on_remote(
        remote, "codex/memories/memory_summary.md", ENTRY, "alice's memory summary and entry on the remote"
    )

    # Bob's daemon pulls and delivers into his memories folder: his next session starts with it.
    wait_delivered(bob.memories / "memory_summary.md", SUMMARY, "memory_summary.md in bob's memories folder")
    api, _ = bob.session(
        "When can I ship a release?",
        [WAIT_FOR_MCP, [ToolCall("mcp__memsync__recall", {"query": "when do we tag releases"})], "Monday."],
    )
    first = json.dumps(api.agent_requests()[0])
    assert NOTE in first  # Codex loaded the synced memory summary
    assert "Release freeze: tag releases on Thursday" in first  # memsync's session-start context
    recalled = api.tool_results("mcp__memsync__recall")
    assert recalled, api.requests[-1]
    hits = json.loads(_output(recalled[0]))["hits"]
    assert hits[0]["text"] == ENTRY and hits[0]["host"] == "alice", hits

"""Whole Claude Code sessions (the real ``claude`` CLI from npm) on two machines, against a stand-in of
the model API on 127.0.0.1 that scripts the agent's tool calls and records every request.

Alice and Bob have one project checked out at different paths. Alice's agent writes a memory file with
Claude Code's own Write tool and calls memsync's ``remember``; her hooks sync. Bob's next session must
carry both in what Claude Code sends the model (its own memory loading of the project's ``MEMORY.md``,
and memsync's session-start context), and its ``recall`` call must return the entry. Then memsync is
uninstalled from Bob's machine and a session runs with every hook exiting 0 and silent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memsync.hosts.claude_code import sanitize
from tests.support.machines import Machine, alice_and_bob, daemons, wait_delivered, wait_on_remote
from tests.support.model_api import Anthropic, ModelAPI, ToolCall, Turn, Until, offers, served
from tests.support.npm import installed

TOOLS = "Write,mcp__memsync__remember,mcp__memsync__recall"
NOTE = "No production deploys on Friday: the on-call team is thin."
INDEX = "- [No Friday deploys](deploy_fridays.md) — production deploys never on Fridays\n"
CURATED = (
    "---\nname: No Friday deploys\ndescription: production deploys never on Fridays\n"
    f"metadata:\n  type: project\n---\n\n{NOTE}\n"
)
ENTRY = "Release freeze: tag releases on Thursday, ship Monday."
# Claude Code connects MCP servers in the background; a model told so waits for them (again, on a
# loaded machine, until memsync's tools are offered).
WAIT_FOR_MCP = Until(
    offers("mcp__memsync__recall"), [ToolCall("WaitForMcpServers", {"servers": ["memsync"]})]
)

pytestmark = pytest.mark.slow


class ClaudeMachine(Machine):
    """A machine with Claude Code: memsync connected to it, its sessions run with ``claude -p``."""

    def __init__(self, root: Path, name: str, remote: Path, checkout_at: str, origin: str) -> None:
        super().__init__(root, name, remote, checkout_at, origin, host="claude-code", host_dirs=(".claude",))

    @property
    def memory(self) -> Path:
        """Claude Code's memory folder of the project on this machine."""
        return self.home / ".claude" / "projects" / sanitize(str(self.project)) / "memory"

    def session(self, prompt: str, turns: Sequence[Turn | Until]) -> tuple[ModelAPI, list[dict[str, Any]]]:
        """One ``claude -p PROMPT`` session in the checkout, the model played by ``turns``; returns the
        stand-in (with the requests it got) and the session's stream-json events."""
        api = ModelAPI(Anthropic(), list(turns))
        with served(api) as url:
            done = self.run_host(
                [
                    "claude",
                    "-p",
                    prompt,
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--allowedTools",
                    TOOLS,
                ],
                {
                    "ANTHROPIC_BASE_URL": url,
                    "ANTHROPIC_API_KEY": "sk-ant-stand-in",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_TELEMETRY": "1",
                },
            )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert events and events[-1].get("type") == "result" and not events[-1].get("is_error"), events[-1:]
        return api, events


def _hooks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event.get("subtype") == "hook_response"]


@pytest.mark.timeout(900)  # four Claude Code sessions and two daemons on a loaded 2-core machine
def test_what_one_machines_session_learns_reaches_the_next_session_on_the_other(tmp_path: Path) -> None:
    installed("claude", "@anthropic-ai/claude-code")
    remote, alice, bob = alice_and_bob(ClaudeMachine, tmp_path)
    with daemons(alice, bob):
        _meet(alice, bob, remote)
    # `pip uninstall memsync` on Bob's machine (its daemon stopped): the hooks stay in his settings and
    # fail open.
    bob.uninstall()
    _, events = bob.session("hello again", ["Hello again."])
    hooks = _hooks(events)
    assert {hook["hook_event"] for hook in hooks} >= {"SessionStart"}, hooks
    assert all(
        hook["exit_code"] == 0 and not hook["stderr"] and hook["outcome"] == "success" for hook in hooks
    ), hooks


def _meet(alice: ClaudeMachine, bob: ClaudeMachine, remote: Path) -> None:
    # Bob has used Claude Code in his checkout before: the project's folder, keyed by his path, exists.
    bob.session("hello", ["Hello."])
    api_alice, events = alice.session(
        "Remember that we never deploy on Fridays, and our release freeze.",
        [
            [
                ToolCall(
                    "Write",
                    {
                        "file_path": str(alice.memory / "deploy_fridays.md"),
                        "content": CURATED,
                    },
                )
            ],
            [ToolCall("Write", {"file_path": str(alice.memory / "MEMORY.md"), "content": INDEX})],
            WAIT_FOR_MCP,
            [ToolCall("mcp__memsync__remember", {"text": ENTRY, "kind": "fact"})],
            "Noted both.",
        ],
    )
    assert all(hook["exit_code"] == 0 for hook in _hooks(events)), _hooks(events)
    assert (alice.memory / "MEMORY.md").read_text() == INDEX
    remembered = api_alice.tool_results("mcp__memsync__remember")
    assert remembered and not remembered[0].get("is_error") and '"id"' in str(remembered[0]), remembered
    # Alice's Stop and SessionEnd hooks start a sync in the background: the remote gets both, under the
    # project's identity.
    wait_on_remote(
        remote,
        "claude/projects/example.com~org~shop/deploy_fridays.md",
        ENTRY,
        "alice's memory file and entry on the remote",
    )

    # Bob's daemon pulls and delivers into his folder of the project: his next session starts with it.
    wait_delivered(bob.memory / "MEMORY.md", INDEX, "MEMORY.md in bob's folder")
    assert NOTE in (bob.memory / "deploy_fridays.md").read_text()
    api, events = bob.session(
        "When can I ship a release?",
        [
            WAIT_FOR_MCP,
            [ToolCall("mcp__memsync__recall", {"query": "when do we tag releases"})],
            "Thursday tags, Monday ships.",
        ],
    )
    first = json.dumps(api.agent_requests()[0])
    assert "production deploys never on Fridays" in first  # Claude Code loaded the synced MEMORY.md
    assert "Release freeze: tag releases on Thursday" in first  # memsync's session-start context
    recalled = api.tool_results("mcp__memsync__recall")
    assert recalled and not recalled[0].get("is_error"), recalled
    hits = json.loads(
        recalled[0]["content"]
        if isinstance(recalled[0]["content"], str)
        else recalled[0]["content"][0]["text"]
    )["hits"]
    assert hits[0]["text"] == ENTRY and hits[0]["host"] == "alice", hits

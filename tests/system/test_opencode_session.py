"""Whole OpenCode sessions (the real ``opencode`` CLI from npm, ``opencode run``) on two machines, against
a stand-in of OpenAI's Chat Completions API on 127.0.0.1 (a provider on ``@ai-sdk/openai-compatible``,
which OpenCode bundles: nothing is downloaded) that scripts the agent's tool calls and records every
request.

Alice and Bob have one project checked out at different paths. OpenCode has no memory tool and no hooks;
what it loads into every session is its global rules, ``~/.config/opencode/AGENTS.md``, which memsync
syncs. Alice's agent writes that file with OpenCode's own ``write`` tool and calls memsync's
``remember``; ``memsync sync`` runs on both machines. Bob's next session must carry the rules in what
OpenCode sends the model, and its ``recall`` call must return the entry. Then memsync is uninstalled from
Bob's machine and a session still runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import git
from tests.support.machines import Machine, alice_and_bob
from tests.support.model_api import ModelAPI, ToolCall, Turn, served
from tests.support.npm import installed
from tests.support.openai_chat_api import OpenAIChat, text

NOTE = "No production deploys on Friday: the on-call team is thin."
RULES = f"# Team rules\n\n- {NOTE}\n"
ENTRY = "Release freeze: tag releases on Thursday, ship Monday."
# The stand-in's URL changes per session; the provider reads it from the environment.
PROVIDER = {
    "standin": {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Stand-in",
        "options": {"baseURL": "{env:MEMSYNC_TEST_MODEL_URL}", "apiKey": "sk-stand-in"},
        "models": {"stand-in": {"name": "stand-in", "tool_call": True}},
    }
}
# No models.dev fetch, update check, plugin install or share: the session needs no network.
OFFLINE = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}

pytestmark = pytest.mark.slow


class OpenCodeMachine(Machine):
    """A machine with OpenCode (the stand-in as its provider): memsync connected to it, its sessions run
    with ``opencode run``."""

    def __init__(self, root: Path, name: str, remote: Path, checkout_at: str, origin: str) -> None:
        config = root / name / ".config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True)
        config.write_text(json.dumps({"provider": PROVIDER, "model": "standin/stand-in"}, indent=2))
        super().__init__(
            root, name, remote, checkout_at, origin, host="opencode", host_dirs=(".config/opencode",)
        )

    @property
    def rules(self) -> Path:
        """OpenCode's global rules on this machine."""
        return self.home / ".config" / "opencode" / "AGENTS.md"

    def session(self, prompt: str, turns: Sequence[Turn]) -> tuple[ModelAPI, list[dict[str, Any]]]:
        """One ``opencode run PROMPT`` session in the checkout (permissions approved), the model played
        by ``turns``; returns the stand-in (with the requests it got) and the session's JSON events."""
        api = ModelAPI(OpenAIChat(), list(turns))
        with served(api) as url:
            done = self.run_host(
                ["opencode", "run", "--format", "json", "--auto", "--model", "standin/stand-in", prompt],
                # OpenCode takes its directory from PWD, not from the process's working directory.
                {**OFFLINE, "MEMSYNC_TEST_MODEL_URL": f"{url}/v1", "PWD": str(self.project)},
            )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert not [event for event in events if event.get("type") == "error"], events
        return api, events


# Four sessions of OpenCode and two machines' syncs: past the slow tier's 300 s on a loaded 2-core machine.
@pytest.mark.timeout(900)
def test_what_one_machines_opencode_session_learns_reaches_the_next_session_on_the_other(
    tmp_path: Path,
) -> None:
    installed("opencode", "opencode-ai")
    remote, alice, bob = alice_and_bob(OpenCodeMachine, tmp_path)

    api_alice, _ = alice.session(
        "Remember that we never deploy on Fridays, and our release freeze.",
        [
            [ToolCall("write", {"filePath": str(alice.rules), "content": RULES})],
            [ToolCall("memsync_remember", {"text": ENTRY, "kind": "fact"})],
            "Noted both.",
        ],
    )
    assert alice.rules.read_text() == RULES
    remembered = api_alice.tool_results("memsync_remember")
    assert remembered and json.loads(text(remembered[0]))["status"] == "saved", remembered
    alice.memsync("sync")
    assert "opencode/AGENTS.md" in git(remote, "ls-tree", "-r", "--name-only", "HEAD").split()
    bob.memsync("sync")
    assert bob.rules.read_text() == RULES

    api, _ = bob.session(
        "When can I ship a release?",
        [[ToolCall("memsync_recall", {"query": "when do we tag releases"})], "Thursday tags, Monday ships."],
    )
    assert NOTE in json.dumps(api.agent_requests()[0])  # OpenCode loaded the synced rules
    recalled = api.tool_results("memsync_recall")
    assert recalled, api.requests[-1]
    hits = json.loads(text(recalled[0]))["hits"]
    assert hits[0]["text"] == ENTRY and hits[0]["host"] == "alice", hits

    # `pip uninstall memsync` on Bob's machine: its MCP entry stays in his config, and a session runs.
    bob.uninstall()
    after, events = bob.session("hello again", ["Hello again."])
    assert any(event.get("type") == "text" and "Hello again." in str(event) for event in events), events
    assert NOTE in json.dumps(after.agent_requests()[0])

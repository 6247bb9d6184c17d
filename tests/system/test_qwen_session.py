"""Whole Qwen Code sessions (the real ``qwen`` CLI from npm) on two machines, against a stand-in of
OpenAI's Chat Completions API on 127.0.0.1 that scripts the agent's tool calls and records every request.

Alice and Bob have one project checked out at different paths. Alice's agent writes Qwen Code's user
memory (``~/.qwen/QWEN.md``) with Qwen Code's own ``write_file`` tool and calls memsync's ``remember``;
her hooks sync. Bob's next session must carry both in what Qwen Code sends the model (its own loading of
``QWEN.md``, and memsync's session-start context, which Qwen Code takes from the first prompt's hook),
and its ``recall`` call must return the entry. Then memsync is uninstalled from Bob's machine and a
session runs with no hook error (Qwen Code's debug log of the session says how each hook ended).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.machines import Machine, alice_and_bob, daemons, wait_delivered, wait_on_remote
from tests.support.model_api import ModelAPI, ToolCall, Turn, served
from tests.support.npm import installed
from tests.support.openai_chat_api import OpenAIChat, text

NOTE = "No production deploys on Friday: the on-call team is thin."
MEMORY = f"## Qwen Added Memories\n- {NOTE}\n"
ENTRY = "Release freeze: tag releases on Thursday, ship Monday."

pytestmark = pytest.mark.slow


class QwenMachine(Machine):
    """A machine with Qwen Code: memsync connected to it, its sessions run with ``qwen PROMPT``."""

    def __init__(self, root: Path, name: str, remote: Path, checkout_at: str, origin: str) -> None:
        super().__init__(root, name, remote, checkout_at, origin, host="qwen-code", host_dirs=(".qwen",))

    @property
    def memory(self) -> Path:
        """Qwen Code's user memory file on this machine."""
        return self.home / ".qwen" / "QWEN.md"

    def session(self, prompt: str, turns: Sequence[Turn]) -> tuple[ModelAPI, list[dict[str, Any]]]:
        """One non-interactive ``qwen PROMPT`` session in the checkout (every tool call approved), the
        model played by ``turns`` (an OpenAI-compatible provider); returns the stand-in (with the
        requests it got) and the session's stream-json events."""
        api = ModelAPI(OpenAIChat(), list(turns))
        with served(api) as url:
            done = self.run_host(
                [
                    *("qwen", "--auth-type", "openai", "--openai-base-url", f"{url}/v1"),
                    *("--openai-api-key", "sk-stand-in", "--model", "stand-in"),
                    *("--output-format", "stream-json", "--approval-mode", "yolo", prompt),
                ],
                {},
            )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert events and events[-1].get("type") == "result" and not events[-1].get("is_error"), events[-1:]
        assert not done.stderr, done.stderr
        self._assert_hooks_succeeded(events[0]["session_id"])
        return api, events

    def _assert_hooks_succeeded(self, session: str) -> None:
        """Qwen Code's debug log of the session (it tells the user nothing else in a non-interactive
        session) says the Stop hook ran and no hook failed."""
        log = (self.home / ".qwen" / "debug" / f"{session}.txt").read_text()
        runs = re.findall(r"\] Hook .* ended for event (\w+: \w+)", log)
        said = "\n".join(line for line in log.splitlines() if "HOOKS]" in line and "Expanding" not in line)
        assert "Stop: success" in runs and not any(run.endswith("failed") for run in runs), said


# Four sessions of a node CLI beside two daemons: past the slow tier's 300 s on a loaded 2-core machine.
@pytest.mark.timeout(900)
def test_what_one_machines_session_learns_reaches_the_next_session_on_the_other(tmp_path: Path) -> None:
    installed("qwen", "@qwen-code/qwen-code")
    remote, alice, bob = alice_and_bob(QwenMachine, tmp_path)
    with daemons(alice, bob):
        _meet(alice, bob, remote)
    # `pip uninstall memsync` on Bob's machine (its daemon stopped): the hooks stay in his settings and
    # fail open.
    bob.uninstall()
    bob.session("hello again", ["Hello again."])


def _meet(alice: QwenMachine, bob: QwenMachine, remote: Path) -> None:
    bob.session("hello", ["Hello."])
    api_alice, _ = alice.session(
        "Remember that we never deploy on Fridays, and our release freeze.",
        [
            [ToolCall("write_file", {"file_path": str(alice.memory), "content": MEMORY})],
            [ToolCall("mcp__memsync__remember", {"text": ENTRY, "kind": "fact"})],
            "Noted both.",
        ],
    )
    assert alice.memory.read_text() == MEMORY
    remembered = api_alice.tool_results("mcp__memsync__remember")
    assert remembered and json.loads(text(remembered[0]))["status"] == "saved", remembered
    # Alice's Stop hook starts a sync in the background: the remote gets both.
    wait_on_remote(remote, "qwen/QWEN.md", ENTRY, "alice's QWEN.md and entry on the remote")

    # Bob's daemon pulls and delivers into his ~/.qwen: his next session starts with it.
    wait_delivered(bob.memory, MEMORY, "QWEN.md in bob's ~/.qwen")
    api, _ = bob.session(
        "When can I ship a release?",
        [
            [ToolCall("mcp__memsync__recall", {"query": "when do we tag releases"})],
            "Thursday tags, Monday ships.",
        ],
    )
    first = json.dumps(api.agent_requests()[0])
    assert NOTE in first  # Qwen Code loaded the synced QWEN.md
    assert ENTRY in first  # memsync's session-start context, with the first prompt
    recalled = api.tool_results("mcp__memsync__recall")
    assert recalled, api.requests[-1]
    hits = json.loads(text(recalled[0]))["hits"]
    assert hits[0]["text"] == ENTRY and hits[0]["host"] == "alice", hits

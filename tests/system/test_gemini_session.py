"""Whole Gemini CLI sessions (the real ``gemini`` CLI from npm, ``gemini -p``) on two machines, against a
stand-in of the Gemini API on 127.0.0.1 (``GOOGLE_GEMINI_BASE_URL``, an API key) that scripts the
agent's tool calls and records every request.

Alice and Bob have one project checked out at different paths. Alice's agent writes Gemini CLI's global
memory (``~/.gemini/GEMINI.md``, which it loads into every session; since 0.61 it has no ``save_memory``
tool and keeps memory by editing that file) with its own ``write_file`` tool, and calls memsync's
``remember``; her AfterAgent and SessionEnd hooks sync. Bob's next session must carry both in what Gemini
CLI sends the model, and its ``recall`` call must return the entry. Then memsync is uninstalled from
Bob's machine and a session runs with no hook failing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.gemini_api import Gemini
from tests.support.machines import Machine, alice_and_bob, daemons, wait_delivered, wait_on_remote
from tests.support.model_api import ModelAPI, ToolCall, Turn, served
from tests.support.npm import installed

NOTE = "Production deploys never on Fridays: the on-call team is thin."
MEMORY = f"## Gemini Added Memories\n- {NOTE}\n"
ENTRY = "Release freeze: tag releases on Thursday, ship Monday."
# A model named on the command line: Gemini CLI's router would first ask the model to pick one.
MODEL = "gemini-2.5-flash"

pytestmark = pytest.mark.slow


class GeminiMachine(Machine):
    """A machine with Gemini CLI (signed in with an API key): memsync connected to it, its sessions run
    with ``gemini -p``."""

    def __init__(self, root: Path, name: str, remote: Path, checkout_at: str, origin: str) -> None:
        settings = root / name / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}, indent=2))
        super().__init__(root, name, remote, checkout_at, origin, host="gemini-cli", host_dirs=(".gemini",))

    @property
    def memory(self) -> Path:
        """Gemini CLI's global memory file on this machine."""
        return self.home / ".gemini" / "GEMINI.md"

    def session(self, prompt: str, turns: Sequence[Turn]) -> tuple[ModelAPI, str]:
        """One ``gemini -p PROMPT`` session in the checkout (trusted, every tool call approved), the model
        played by ``turns``; returns the stand-in (with the requests it got) and Gemini CLI's stderr."""
        api = ModelAPI(Gemini(), list(turns))
        with served(api) as url:
            done = self.run_host(
                ["gemini", "--skip-trust", "--yolo", "--model", MODEL, "-p", prompt],
                {"GEMINI_API_KEY": "stand-in", "GOOGLE_GEMINI_BASE_URL": url},
            )
        return api, done.stderr


def _output(result: dict[str, object]) -> str:
    """An MCP tool's output in a ``functionResponse`` Gemini CLI sent back (it quotes it as untrusted)."""
    output = str(result["response"]["output"])  # type: ignore[index]
    return output.removeprefix("<untrusted_context>").removesuffix("</untrusted_context>")


@pytest.mark.timeout(900)  # four Gemini CLI sessions and two daemons on a loaded 2-core machine
def test_what_one_machines_gemini_session_learns_reaches_the_next_session_on_the_other(
    tmp_path: Path,
) -> None:
    installed("gemini", "@google/gemini-cli")
    remote, alice, bob = alice_and_bob(GeminiMachine, tmp_path)
    with daemons(alice, bob):
        _meet(alice, bob, remote)
    # `pip uninstall memsync` on Bob's machine (its daemon stopped): the hooks stay in his settings and
    # fail open.
    bob.uninstall()
    _, log = bob.session("hello again", ["Hello again."])
    # Gemini CLI reports a failed hook ("... failed for event SessionStart") and a hook's stderr ("Hook
    # system message: ...").
    hook_lines = [line for line in log.lower().splitlines() if "hook" in line]
    assert not [line for line in hook_lines if "fail" in line or "error" in line or "message" in line], log


def _meet(alice: GeminiMachine, bob: GeminiMachine, remote: Path) -> None:
    api_alice, _ = alice.session(
        "Remember that we never deploy on Fridays, and our release freeze.",
        [
            [ToolCall("write_file", {"file_path": str(alice.memory), "content": MEMORY})],
            [ToolCall("mcp_memsync_remember", {"text": ENTRY, "kind": "fact"})],
            "Noted both.",
        ],
    )
    assert alice.memory.read_text() == MEMORY
    remembered = api_alice.tool_results("mcp_memsync_remember")
    assert remembered and '"id"' in _output(remembered[0]), remembered
    # Alice's AfterAgent and SessionEnd hooks start a sync in the background: the remote gets both.
    wait_on_remote(remote, "gemini/GEMINI.md", ENTRY, "alice's GEMINI.md and entry on the remote")

    # Bob's daemon pulls and delivers into his ~/.gemini: his next session starts with it.
    wait_delivered(bob.memory, MEMORY, "GEMINI.md in bob's ~/.gemini")
    api, _ = bob.session(
        "When can I ship a release?",
        [[ToolCall("mcp_memsync_recall", {"query": "when do we tag releases"})], "Monday."],
    )
    first = json.dumps(api.agent_requests()[0])
    assert NOTE in first  # Gemini CLI loaded the synced GEMINI.md
    assert "Release freeze: tag releases on Thursday" in first  # memsync's session-start context
    recalled = api.tool_results("mcp_memsync_recall")
    assert recalled, api.requests[-1]
    hits = json.loads(_output(recalled[0]))["hits"]
    assert hits[0]["text"] == ENTRY and hits[0]["host"] == "alice", hits

"""The review gate of a team store (`store add --review`, `memsync review`): an agent's entry is a
proposal that syncs to every member but reaches no live file or recall until a person approves it;
concurrent decisions on two machines converge on one outcome and both stay recorded."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync.commands.proposals import REVIEW_RECORD, parse_records
from tests.conftest import isolated_env
from tests.support.helpers import bare_remote, cli_main
from tests.support.mcp_client import mcp_session, ok
from tests.support.peers import HEADER

TEAM_FILE = Path("team") / "shared.jsonl"


def _ok(env: dict[str, str], *args: str) -> str:
    result = cli_main(*args, env=env)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def _machine(tmp_path: Path, host: str, remote: Path) -> tuple[dict[str, str], Path]:
    """A machine ``host`` with its own HOME: a personal store and the team store (set to review) on
    ``remote``, tracking ~/team/shared.jsonl. Returns its environment and that live file."""
    home = tmp_path / host
    env = {**isolated_env(home), "MEMSYNC_CONFIG": str(home / ".config" / "memsync" / "config.toml")}
    _ok(env, "init", "--host", host)
    _ok(env, "store", "add", "team", "--remote", str(remote), "--review")
    live = home / TEAM_FILE
    live.parent.mkdir()
    live.write_bytes(HEADER)
    _ok(env, "track", str(live), "--store", "team", "--as", "shared/shared.jsonl", "--yes")
    _ok(env, "sync")
    return env, live


def _live_text(live: Path) -> str:
    return live.read_text() if live.exists() else ""


def _record(env: dict[str, str]) -> bytes:
    home = Path(env["HOME"])
    return (home / ".local" / "share" / "memsync" / "stores" / "team" / REVIEW_RECORD).read_bytes()


def _proposal_id(env: dict[str, str]) -> str:
    listed = _ok(env, "review").splitlines()
    assert len(listed) == 1, listed
    return listed[0].split()[0]


@pytest.mark.slow  # two machines, a dozen CLI runs and syncs: about a minute on a busy machine
def test_a_proposal_reaches_the_other_machine_as_a_proposal_and_memory_only_once_approved(
    tmp_path: Path,
) -> None:
    remote = bare_remote(tmp_path / "team.git")
    a, live_a = _machine(tmp_path, "alice", remote)
    b, live_b = _machine(tmp_path, "bob", remote)
    text = "The staging gate needs the VPN before deploys."

    # An agent's remember (MCP) into the gated store: a proposal, the live file untouched.
    async def agent() -> dict[str, str]:
        with (tmp_path / "mcp.log").open("w") as errlog:
            async with mcp_session(a, errlog) as session:
                return dict(
                    await ok(
                        session, "remember", {"text": text, "file": "shared/shared.jsonl", "store": "team"}
                    )
                )

    done = anyio.run(agent)
    assert done["status"].startswith("proposed") and done["id"].startswith("p")
    assert text not in _live_text(live_a)
    _ok(a, "sync")
    _ok(b, "sync")

    # B sees it as a proposal, with where it came from; not in its memory, not in its recall.
    listed = _ok(b, "review")
    assert done["id"] in listed and text in listed and "from alice" in listed
    assert text not in _live_text(live_b)
    assert "staging gate" not in _ok(b, "recall", "staging gate VPN")

    approved = _ok(b, "review", "approve", done["id"])
    assert f"approved {done['id']}" in approved
    assert text in _live_text(live_b)
    _ok(b, "sync")
    _ok(a, "sync")
    assert text in _live_text(live_a)
    assert "staging gate" in _ok(a, "recall", "staging gate VPN")
    _, decisions = parse_records(_record(a))
    assert [(d.verdict, d.host, d.by) for d in decisions] == [
        ("approved", "bob", "Test User <test@example.invalid>")
    ]
    assert "no proposal waits" in _ok(a, "review")
    again = cli_main("review", "reject", done["id"], "--why", "late", env=a)
    assert again.returncode == 1 and "approved by" in again.stderr and "Traceback" not in again.stderr


@pytest.mark.slow  # two machines, a dozen CLI runs and syncs: about a minute on a busy machine
def test_concurrent_approve_and_reject_converge_on_the_earliest_and_keep_both(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "team.git")
    a, live_a = _machine(tmp_path, "alice", remote)
    b, _ = _machine(tmp_path, "bob", remote)
    text = "Always rebase the release branch on Fridays."
    _ok(a, "remember", text, "--file", str(live_a), "--propose", "--source", "session:agent")
    assert text not in _live_text(live_a)
    _ok(a, "sync")
    _ok(b, "sync")
    pid = _proposal_id(b)

    # Reject on B first, approve on A a moment later, neither having seen the other's decision.
    _ok(b, "review", "reject", pid, "--why", "not our policy")
    _ok(a, "review", "approve", pid)
    assert text in _live_text(live_a)
    for env in (a, b, a, b):
        _ok(env, "sync")

    for env in (a, b):
        _ok(env, "review")  # settles: a machine holding the losing approval's entry forgets it
        shown = _ok(env, "review", "--all")
        assert f"{pid}  rejected by" in shown and "not our policy" in shown and "also approved" in shown
        _, decisions = parse_records(_record(env))
        assert sorted(d.verdict for d in decisions) == ["approved", "rejected"]
    for env in (a, b, a, b):
        _ok(env, "sync")
    for env in (a, b):
        assert "Fridays" not in _ok(env, "recall", "rebase release branch Fridays")
        assert text not in _ok(env, "show", str(Path(env["HOME"]) / TEAM_FILE))


def test_personal_memory_and_a_persons_own_remember_are_never_held(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "team.git")
    a, live_a = _machine(tmp_path, "alice", remote)
    _ok(a, "remember", "A person's own team note.", "--file", str(live_a))
    assert "A person's own team note." in _live_text(live_a)
    personal = Path(a["HOME"]) / ".agent-memory" / "notes.jsonl"
    refused = cli_main("remember", "Mine.", "--file", str(personal), "--propose", env=a)
    assert refused.returncode == 1 and "no store set to review" in refused.stderr
    assert "Mine." not in _live_text(personal)
    assert json.loads(_ok(a, "config", "get", "stores.team.review").strip().lower()) is True


@given(
    st.lists(
        st.one_of(
            st.binary(max_size=80),
            st.builds(
                json.dumps,
                st.dictionaries(
                    st.sampled_from(["review", "id", "proposal", "verdict", "entry", "file", "at", "host"]),
                    st.one_of(
                        st.text(max_size=8),
                        st.integers(),
                        st.none(),
                        st.just("proposal"),
                        st.just("decision"),
                        st.just("approved"),
                        st.dictionaries(st.just("text"), st.text(max_size=8)),
                    ),
                ),
            ).map(str.encode),
        ),
        max_size=12,
    )
)
def test_reading_peer_review_records_never_raises(lines: list[bytes]) -> None:
    proposals, decisions = parse_records(b"\n".join(lines))
    assert all(isinstance(p.entry.text, str) and p.file for p in proposals)
    assert all(d.verdict in ("approved", "rejected") for d in decisions)

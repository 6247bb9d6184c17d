"""One ``NewEntry`` carries a remembered entry's fields from the CLI, the MCP tools and a proposal kept
for review to the one writer; a peer's proposal with fields of the wrong type is read, never a crash."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsync.commands.proposals import REVIEW_RECORD
from memsync.memoryfile.file import MemoryFile, NewEntry
from tests.commands.test_review import _machine, _ok
from tests.support.helpers import bare_remote, git, run_cli

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
_FIELD = st.sampled_from(["text", "kind", "scope", "tags", "source", "confidence", "expires", "supersedes"])


@given(st.dictionaries(_FIELD | st.text(max_size=6), _JSON, max_size=9))
def test_a_peer_s_proposed_fields_are_read_without_raising(record: dict[str, object]) -> None:
    new = NewEntry.from_record(record)
    if not isinstance(record.get("text"), str):
        assert new is None
        return
    assert new is not None and new.text == record["text"]
    assert isinstance(new.confidence, float) and isinstance(new.source, str)
    assert new.tags is None or all(isinstance(tag, str) for tag in new.tags)


@given(
    st.builds(
        NewEntry,
        st.text(min_size=1, max_size=20),
        kind=st.none() | st.sampled_from(["fact", "lesson"]),
        scope=st.none() | st.just("github.com"),
        tags=st.none() | st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3).map(tuple),
        source=st.sampled_from(["user", "agent", "mcp"]),
        confidence=st.floats(0, 1),
        expires=st.none() | st.just("30d"),
        supersedes=st.none() | st.just("0123456789ab"),
    )
)
def test_a_proposal_keeps_every_field_of_its_entry(new: NewEntry) -> None:
    assert NewEntry.from_record(json.loads(json.dumps(new.record()))) == new


def test_the_cli_s_remember_does_not_load_the_mcp_package() -> None:
    code = "import sys, memsync.commands.memory; print(sorted(m for m in sys.modules if '.mcp' in m))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.slow  # a machine with a team store: init, store add, track, sync
def test_approving_a_peer_s_proposal_with_a_confidence_of_the_wrong_type_writes_it(tmp_path: Path) -> None:
    env, live = _machine(tmp_path, "alice", bare_remote(tmp_path / "team.git"))
    store = Path(env["HOME"]) / ".local" / "share" / "memsync" / "stores" / "team"
    proposal = {
        "review": "proposal",
        "id": "p0badc0f",
        "at": "2026-12-01T10:00:00.000000Z",
        "host": "bob",
        "file": "shared/shared.jsonl",
        "entry": {"text": "Staging needs the VPN.", "confidence": "high", "tags": ["ops", 3]},
    }
    with (store / REVIEW_RECORD).open("a") as record:
        record.write(json.dumps(proposal) + "\n")
    git(store, "add", REVIEW_RECORD)
    git(store, "commit", "-q", "-m", "a peer's proposal")

    approved = run_cli("review", "approve", "p0badc0f", env=env)

    assert approved.returncode == 0, approved.stderr
    written = [json.loads(line) for line in live.read_text().splitlines()[1:]]
    assert [(e["text"], e["confidence"], e["tags"], e["source"]) for e in written] == [
        ("Staging needs the VPN.", 0.8, ["ops"], "agent")
    ]
    assert "Staging needs the VPN." not in _ok(env, "review")  # decided


def test_remember_takes_one_new_entry_and_a_superseding_one_inherits_what_it_leaves_unset(
    tmp_path: Path,
) -> None:
    """``MemoryFile.remember`` writes a ``NewEntry``: unset kind, scope and tags are ``fact``, ``global``
    and none for a new entry, those of the superseded entry for a correction; an expiry as a duration."""
    memory = MemoryFile(tmp_path / "ada.jsonl")
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    plain = memory.remember(NewEntry("Deploys wait for Monday."), now=now)
    assert (plain.kind, plain.scope, plain.tags, plain.source) == ("fact", "global", (), "user")
    old = memory.remember(NewEntry("Use tabs.", "preference", scope="repo:x", tags=("style",)), now=now)
    new = memory.remember(NewEntry("Use spaces.", supersedes=old.id, expires="2d"), now=now)
    assert (new.kind, new.scope, new.tags, new.supersedes) == ("preference", "repo:x", ("style",), old.id)
    assert new.expires_at == "2026-12-05T12:00:00Z"
    assert sorted(entry.text for entry in memory.view(now)) == ["Deploys wait for Monday.", "Use spaces."]

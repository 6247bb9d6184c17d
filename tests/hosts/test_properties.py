"""The readers of what peers and hosts wrote never fail on odd input: the session-start reader of store
history (peer content) and the transcript reader (Claude Code's files), on any text or bytes."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.commands.session_context import MAX_CHARS, _render
from memsync.commands.session_items import Scope
from memsync.commands.session_items import parse_log as _parse
from memsync.hosts.claude_code import sanitize
from memsync.projects.claude_folders import project_path

PATHS = st.sampled_from(
    ["memory/a.jsonl", "roles/qa/daily/2026-11-30.md", "roles/qa/MEMORY.md", "roles/qa/cart.md", "x.bin"]
)
LINES = st.lists(st.text(max_size=80), max_size=30)
MARK = "\x00mark-5f0c2a\x00"


@st.composite
def log_output(draw: st.DrawFn) -> str:
    """``git log -p`` output in ``log_format(MARK)``, with arbitrary lines mixed in."""
    records = []
    for _ in range(draw(st.integers(0, 4))):
        host = draw(st.text(max_size=10))
        date = draw(st.sampled_from(["2026-11-30T10:00:00+01:00", "not a date", ""]))
        body = f"subject\n\nMemsync-Host: {host}"
        diffs = []
        for _ in range(draw(st.integers(0, 3))):
            path = draw(PATHS)
            new = draw(st.booleans())
            added = "".join(f"+{line}\n" for line in draw(LINES))
            junk = "".join(f"{line}\n" for line in draw(LINES))
            head = "--- /dev/null\n" if new else f"--- a/{path}\n"
            diffs.append(f"diff --git a/{path} b/{path}\n{head}+++ b/{path}\n@@ -0,0 +1 @@\n{added}{junk}")
        records.append(f"{MARK}{'0' * 40}\x1f{date}\x1f{body}{MARK}\n" + "".join(diffs))
    return draw(st.text(max_size=40)) + "".join(records)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_output(), st.text(max_size=300))
def test_any_history_gives_items_and_a_bounded_context(out: str, noise: str) -> None:
    scope = Scope(project=("roles",), user=("memory",), own=("roles/qa",))
    for text in (out, noise, out + noise):
        lines = frozenset(text.split("\n"))  # every added line still in its file

        def current(path: str, now: frozenset[str] = lines) -> frozenset[str]:
            return now

        items, unread = _parse(text, MARK, scope, "me", lambda sha: False, current)
        assert unread >= 0
        if items:
            rendered = _render(items, unread, None, "key", ["/some/where"])
            assert len(rendered) < MAX_CHARS


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2000))
def test_any_transcript_bytes_give_a_path_or_none(tmp_path: Path, data: bytes) -> None:
    folder = tmp_path / "projects" / sanitize("/nowhere/at/all/x")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.jsonl").write_bytes(data + b'\n{"cwd": ' + json.dumps("/nowhere/at/all/x").encode() + b"}\n")
    assert project_path(folder) in (Path("/nowhere/at/all/x"), None)
    (folder / "t.jsonl").write_bytes(data)
    found = project_path(folder)
    assert found is None or sanitize(str(found)) == folder.name

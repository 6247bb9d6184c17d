"""Every reader of peer content over random and adversarial bytes raises nothing but ``MemsyncError``
(DESIGN "Hostile input": every reader is bounded; a line it cannot read is malformed, reported, kept).

Readers: memory files (parse, view, check, compaction, prompt), the merge drivers, curated entries and
their frontmatter, ``MEMORY.md``, daily logs, a whole role directory (check, prompt, snapshot), handoff
(reading and a dry run both ways) and the secret scanner. The bytes mix random binary with what breaks
naive readers: nesting 10^5 deep, huge and non-finite numbers, lone surrogates, duplicate keys,
NaN/Infinity, YAML alias bombs and deep flow nesting, CR, NUL, BOMs, unclosed fences.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.commands.handoff import handoff, to_role
from memsync.commands.handoff.mapping import Agent
from memsync.commands.handoff.reading import read_items
from memsync.commands.handoff.to_jsonl import as_entry
from memsync.errors import MemsyncError
from memsync.formats.jsonl.compact import compacted
from memsync.formats.jsonl.parse import check_memory_file, parse_memory
from memsync.formats.jsonl.prompt import render_prompt
from memsync.formats.markdown.fields import parse_frontmatter
from memsync.formats.markdown.index import parse_index, render
from memsync.formats.markdown.reading import read_daily_log, read_entry
from memsync.formats.markdown.roledir import RoleDir, check_role_dir, role_prompt
from memsync.formats.markdown.skill import MAX_READ_BYTES
from memsync.merge.daily import merge_daily
from memsync.merge.entry import merge_entry
from memsync.merge.index import merge_index
from memsync.merge.jsonl import merge_jsonl
from tests.support.poison import GOOD, HEADER, POISON_LINES, YAML_POISON

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = datetime(2026, 11, 30, tzinfo=UTC)
MARKDOWN_BITS = [
    "---\n",
    "- [x](x.md) — item\n",
    "  continuation line\n",
    "```\n",
    "- [09:00] a timed note\n",
    "# Daily log — 2026-11-30\n",
    "](" * 1000 + "\n",
    "[" * 1000 + "](a.md)\n",
    "- [" + "\\]" * 500 + "](b.md)\n",
    "\r\n",
    "\x00\u2028\ufeff\n",
]

line_bytes = st.one_of(
    st.binary(max_size=60),
    st.sampled_from(POISON_LINES),
    st.just(GOOD),
    st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
memory_bytes = st.builds(
    lambda header, lines, end: (HEADER + b"\n" if header else b"") + b"\n".join(lines) + end,
    st.booleans(),
    st.lists(line_bytes, max_size=6),
    st.sampled_from([b"\n", b"", b"\r\n"]),
)
markdown_text = st.builds(
    lambda parts: "".join(parts),
    st.lists(
        st.one_of(
            st.sampled_from(MARKDOWN_BITS),
            st.sampled_from(YAML_POISON),
            st.text(max_size=30),
        ),
        max_size=8,
    ),
)
markdown_bytes = st.one_of(
    markdown_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
    st.sampled_from(YAML_POISON).map(lambda y: f"---\n{y}---\n\nbody\n".encode("utf-8", "surrogatepass")),
)


def _only_memsync_errors(call: object, *args: object) -> object:
    assert callable(call)
    try:
        return call(*args)
    except MemsyncError:
        return None


@SETTINGS
@given(data=memory_bytes)
def test_memory_file_readers_never_raise(data: bytes) -> None:
    parsed = parse_memory(data)
    entries = parsed.view(NOW)
    render_prompt(entries, "project:x", None, 200)
    compacted(parsed, data, NOW)
    assert all(number >= 1 for number, _ in parsed.malformed)
    with tempfile.TemporaryDirectory() as root:
        path = Path(root) / "m.jsonl"
        path.write_bytes(data)
        problems = check_memory_file(path)
        assert len(problems) >= len(parsed.malformed)
        for item in read_items(Agent("m", path, "jsonl"), NOW):
            as_entry(item, "m")


@SETTINGS
@given(base=memory_bytes, ours=memory_bytes, theirs=memory_bytes)
def test_merge_drivers_never_raise(base: bytes, ours: bytes, theirs: bytes) -> None:
    merged = merge_jsonl(base, ours, theirs)
    assert merged == merge_jsonl(base, theirs, ours)
    for driver in (merge_daily, merge_index, merge_entry):
        driver(base, ours, theirs)


@SETTINGS
@given(entry=markdown_bytes, index=markdown_bytes, daily=markdown_bytes)
def test_role_directory_readers_never_raise(entry: bytes, index: bytes, daily: bytes) -> None:
    text = index.decode("utf-8", "replace")
    assert render(parse_index(text)) == text
    parse_frontmatter(entry.decode("utf-8", "replace")[:2000])
    with tempfile.TemporaryDirectory() as root:
        role = Path(root) / "qa"
        (role / "daily").mkdir(parents=True)
        (role / "entry.md").write_bytes(entry)
        (role / "MEMORY.md").write_bytes(index)
        (role / "daily" / "2026-11-30.md").write_bytes(daily)
        read = read_entry(role / "entry.md")
        assert read.head + read.body == entry.decode("utf-8", "replace")
        read_daily_log(role / "daily" / "2026-11-30.md")
        role_dir = RoleDir(role)
        role_dir.index_items()
        role_dir.entries()
        check_role_dir(role)
        role_prompt(role, 4000)
        role_dir.render_snapshot(4000)
        for item in read_items(Agent("qa", role, "role"), NOW):
            as_entry(item, "qa")


@SETTINGS
@given(memory=memory_bytes, entry=markdown_bytes, daily=markdown_bytes)
def test_handoff_dry_runs_never_raise(memory: bytes, entry: bytes, daily: bytes) -> None:
    with tempfile.TemporaryDirectory() as root:
        role, memory_file = Path(root) / "qa", Path(root) / "m.jsonl"
        (role / "daily").mkdir(parents=True)
        (role / "entry.md").write_bytes(entry)
        (role / "daily" / "2026-11-30.md").write_bytes(daily)
        memory_file.write_bytes(memory)
        other = Path(root) / "other"
        other.mkdir()
        for source, target in ((memory_file, other), (role, Path(root) / "out.jsonl")):
            _only_memsync_errors(handoff.handoff, str(source), str(target), None, 4000, True)
            _only_memsync_errors(handoff.handoff, str(source), None, None, 4000, False, "prompt")


@pytest.mark.parametrize("line", POISON_LINES, ids=range(len(POISON_LINES)))
def test_a_poison_line_is_reported_with_its_number_and_kept_verbatim(line: bytes) -> None:
    data = HEADER + b"\n" + line + b"\n" + GOOD + b"\n"
    parsed = parse_memory(data)
    assert (parsed.records[-1].line, parsed.records[-1].raw) == (3, GOOD)
    assert (2, line) in parsed.malformed or [r.raw for r in parsed.records] == [line, GOOD]
    if (2, line) in parsed.malformed:
        assert any(problem.line == 2 for problem in parsed.problems)
    assert line in compacted(parsed, data, NOW).split(b"\n")


# A line that makes a backtracking pattern quadratic or worse, and the reader that met it: each took
# minutes to hours before that reader was made linear (a run of blanks after a frontmatter value, a line
# of brackets in an index item, a long Source line, blank lines before a handoff's Source tail). Each
# runs in about a second now; the limit is that of a hang, not a speed target.
def _read_entry(root: Path, text: str) -> object:
    (root / "entry.md").write_text(text)
    return read_entry(root / "entry.md")


def _index_items(root: Path, text: str) -> object:
    (root / "MEMORY.md").write_text(text)
    return RoleDir(root).index_items()


def _handoff_items(root: Path, text: str) -> object:
    (root / "entry.md").write_text(text)
    return read_items(Agent("qa", root, "role"), NOW)


PATHOLOGICAL = {
    "frontmatter blanks": (_read_entry, f"---\nname: x{' ' * 200_000}y\n  m: x{chr(9) * 200_000}y\n---\n"),
    "index brackets": (_index_items, "# Memory index\n\n- " + "[" * 200_000 + "\n"),
    "long source line": (
        _handoff_items,
        "---\nname: x\n---\n\nSource: handoff from a, entry 0123456789ab (kind fact, scope "
        + ", source " * 20_000
        + "\n",
    ),
    "blank lines before a source tail": (
        lambda _root, text: to_role._core(text.encode()),
        "---\nname: x\n---\n\nbody" + "\n" * 200_000 + "x\n",
    ),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("reader", "text"), PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_role_directory_readers_are_linear_on_pathological_lines(
    tmp_path: Path, reader: Callable[[Path, str], object], text: str
) -> None:
    assert reader(tmp_path, text) is not None


def test_a_huge_index_and_daily_log_are_read_up_to_the_bound_and_reported(tmp_path: Path) -> None:
    role = tmp_path / "qa"
    (role / "daily").mkdir(parents=True)
    item = "- [x](x.md) — an index line that a runaway writer repeated " + "x" * 4000 + "\n"
    note = "- [09:00] a log line that a runaway writer repeated " + "y" * 4000 + "\n"
    (role / "MEMORY.md").write_text(item * (9 * 1024 * 1024 // len(item)))
    (role / "daily" / "2026-11-30.md").write_text(note * (9 * 1024 * 1024 // len(note)))
    problems = [str(p) for p in check_role_dir(role)]
    assert f"{role / 'MEMORY.md'}: larger than 8 MiB: only its first lines were read" in problems
    assert (
        f"{role / 'daily' / '2026-11-30.md'}: larger than 8 MiB: only its first lines were read" in problems
    )
    log = read_daily_log(role / "daily" / "2026-11-30.md")
    assert len(log.text.encode()) <= MAX_READ_BYTES and log.text.endswith(note)
    assert len(role_prompt(role, 4000).encode()) <= 4000

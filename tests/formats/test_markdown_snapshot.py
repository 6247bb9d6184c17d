"""snapshot.md of a role directory: content, order, determinism and the byte cap (seeds/002 "Snapshot")."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsync.base.defaults import DEFAULT_SNAPSHOT_BYTES
from memsync.base.fsio import TEMP_PREFIX
from memsync.errors import MemsyncError
from memsync.formats.markdown.roledir import QUOTED_NOTE, RoleDir, role_prompt


def filled_role(path: Path) -> RoleDir:
    path.mkdir(parents=True, exist_ok=True)
    memory = RoleDir(path)
    memory.write_entry("Zulu last", "project", "indexed second", "Zulu body.\nsecond line\n")
    memory.write_entry("Alpha", "user", "indexed first? no: written first", "Alpha body.")
    (path / "unindexed.md").write_text(
        "---\nname: Loose one\ndescription: not in the index\ntype: feedback\n---\nL\n"
    )
    (path / "people-pending.md").write_text("operational state, not an entry\n")
    daily = path / "daily"
    for day in ("2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"):
        (daily / f"{day}.md").parent.mkdir(exist_ok=True)
        (daily / f"{day}.md").write_text(f"# Daily log — {day}\n\n- [10:00] on {day}\n")
    return memory


def test_snapshot_holds_index_entries_and_three_latest_logs_in_order(tmp_path: Path) -> None:
    memory = filled_role(tmp_path / "python-dev")
    result = memory.snapshot()
    assert result.path == memory.path / "snapshot.md"
    assert not result.cut
    text = result.path.read_text()
    assert text == result.text
    assert text.startswith("# Memory snapshot — python-dev\n")
    order = [
        "## Index (MEMORY.md)",
        "- [Zulu last](zulu_last.md) — indexed second",
        "## Entries not listed in MEMORY.md",
        "- [Loose one](unindexed.md) — not in the index",
        "## Curated entries",
        "### Zulu last (zulu_last.md)",
        "type: project · indexed second",
        "Zulu body.\nsecond line\n",
        "### Alpha (alpha.md)",
        "Alpha body.",
        "### Loose one (unindexed.md)",
        "## Recent daily logs",
        "### daily/2026-11-29.md",
        "- [10:00] on 2026-11-29",
        "### daily/2026-11-28.md",
        "### daily/2026-11-27.md",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert "2026-11-26" not in text
    assert "operational state" not in text


def test_snapshot_is_deterministic_and_never_includes_itself(tmp_path: Path) -> None:
    first = filled_role(tmp_path / "a" / "python-dev").snapshot().path
    assert first is not None
    again = RoleDir(first.parent).snapshot()
    assert again.text == first.read_text()
    assert again.text.count("# Memory snapshot") == 1
    other = filled_role(tmp_path / "b" / "python-dev").snapshot()
    assert other.text == again.text
    assert [p.name for p in first.parent.iterdir() if p.name.startswith(TEMP_PREFIX)] == []


def test_snapshot_of_an_empty_role_and_role_prompt_agree(tmp_path: Path) -> None:
    path = tmp_path / "scout"
    path.mkdir()
    text = RoleDir(path).snapshot().text
    assert text.startswith("# Memory snapshot — scout\n")
    assert role_prompt(path) == text + QUOTED_NOTE  # the prompt frames the files as quoted data


def test_snapshot_cut_at_whole_lines_with_a_note(tmp_path: Path) -> None:
    memory = filled_role(tmp_path / "python-dev")
    memory.write_entry("Big", "reference", "large", "\n".join(f"line {i} " + "é" * 40 for i in range(2000)))
    full = memory.render_snapshot(10_000_000).text
    assert len(full.encode()) > DEFAULT_SNAPSHOT_BYTES
    result = memory.snapshot()
    assert result.cut
    assert result.size <= DEFAULT_SNAPSHOT_BYTES
    kept, note = result.text.rsplit("\n<!-- memsync: snapshot cut at 32000 bytes;", 1)
    assert full.startswith(kept)
    assert kept.endswith("\n")
    omitted = len(full.encode()) - len(kept.encode())
    assert f"the last {omitted} bytes were left out" in note


def test_snapshot_cap_below_minimum_is_refused(tmp_path: Path) -> None:
    memory = filled_role(tmp_path / "python-dev")
    with pytest.raises(MemsyncError, match="too small"):
        memory.snapshot(100)
    assert not (memory.path / "snapshot.md").exists()


def test_snapshot_keeps_bare_cr_and_replaces_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    path.mkdir()
    (path / "cr.md").write_bytes(
        b"---\nname: CR\ndescription: d\ntype: user\n---\n\ngrep -c $'\r' file\nnext\n"
    )
    (path / "bad.md").write_bytes(b"---\nname: Bad\ndescription: d\ntype: user\n---\n\n\xff\xfe text\n")
    data = RoleDir(path).snapshot().text.encode()
    assert b"grep -c $'\r' file\nnext\n" in data
    assert "\ufffd\ufffd text".encode() in data


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200), max_size=60),
    cap=st.integers(min_value=512, max_value=6000),
)
def test_any_cap_is_respected_at_whole_lines(lines: list[str], cap: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memory = RoleDir(Path(tmp))
        (memory.path / "e.md").write_text(
            "---\nname: E\ndescription: d\ntype: user\n---\n" + "\n".join(lines), encoding="utf-8", newline=""
        )
        full = memory.render_snapshot(10_000_000).text
        result = memory.render_snapshot(cap)
        assert result.size <= cap
        if result.cut:
            kept = result.text[: result.text.rindex("\n<!-- memsync: snapshot cut")]
            assert full.startswith(kept)
            assert kept == "" or kept.endswith("\n")
        else:
            assert result.text == full

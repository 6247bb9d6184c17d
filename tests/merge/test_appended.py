"""The appended driver kind (Gemini CLI's GEMINI.md, Qwen Code's QWEN.md, which `save_memory` appends to):
two machines' lines added at one place are both kept there, the same bytes whichever side merges; any
bytes merge without an exception (edits other than insertions take the entry rules, a real git)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.base.layout import kind_of
from memsync.merge.kinds import merge_function

merge_appended = merge_function("appended")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LINE = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12).map(
    lambda text: text.encode() + b"\n"
)
LINES = st.lists(LINE, max_size=5)


def test_gemini_and_qwen_memory_files_take_the_appended_driver() -> None:
    assert kind_of("gemini/GEMINI.md") == kind_of("qwen/QWEN.md") == "appended"
    assert kind_of("roles/dev/notes.md") == "entry"


def test_two_memories_saved_at_once_in_the_middle_of_a_file_are_both_kept() -> None:
    base = b"# Notes\n\n## Gemini Added Memories\n- Python.\n\n## Other\nkept\n"
    ours = base.replace(b"- Python.\n", b"- Python.\n- Deploys on Tuesdays.\n")
    theirs = base.replace(b"- Python.\n", b"- Python.\n- Use pnpm.\n")
    merged = base.replace(b"- Python.\n", b"- Python.\n- Deploys on Tuesdays.\n- Use pnpm.\n")
    assert merge_appended(base, ours, theirs) == merge_appended(base, theirs, ours) == merged


def test_a_last_line_without_its_line_end_is_not_joined_to_the_other_sides_line() -> None:
    assert merge_appended(b"a\n", b"a\nx", b"a\ny") == b"a\nx\ny\n"


@SETTINGS
@given(LINES, st.data())
def test_insertions_at_one_place_keep_every_line_in_order_either_way(
    base: list[bytes], data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(base)))
    mine = data.draw(st.lists(LINE, min_size=1, max_size=3))
    yours = data.draw(st.lists(LINE, min_size=1, max_size=3).filter(lambda lines: lines != mine))
    ours = b"".join([*base[:at], *mine, *base[at:]])
    theirs = b"".join([*base[:at], *yours, *base[at:]])
    merged = merge_appended(b"".join(base), ours, theirs)
    assert merged == merge_appended(b"".join(base), theirs, ours)
    # Every line of the three, nothing else (no marker, no note); a line both sides hold comes once.
    assert set(merged.splitlines(keepends=True)) == {*base, *mine, *yours}


@SETTINGS
@given(st.binary(max_size=200), st.binary(max_size=200), st.binary(max_size=200))
def test_any_bytes_merge_without_an_exception(base: bytes, ours: bytes, theirs: bytes) -> None:
    assert isinstance(merge_appended(base, ours, theirs), bytes)

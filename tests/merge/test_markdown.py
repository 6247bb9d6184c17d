"""The daily, index and entry merge drivers, and the MEMORY.md item model, on exact expected outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsync.formats.markdown.index import IndexBlock, item_key, parse_index, render
from memsync.merge.daily import merge_daily
from memsync.merge.entry import BOTH_KEPT_NOTE, BOTH_KEPT_NOTE_PREFIX, merge_entry
from memsync.merge.index import merge_index
from memsync.merge.jsonl import merge_jsonl
from memsync.merge.kinds import merge_for_path

MERGES = {"daily": merge_daily, "index": merge_index, "entry": merge_entry}


def merged(kind: str, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The merge, after checking the swapped merge gives the same bytes and the result is a fixed point."""
    merge = MERGES[kind]
    result = merge(base, ours, theirs)
    assert merge(base, theirs, ours) == result
    assert merge(base, result, result) == result
    assert b"<<<<<<<" not in result and b">>>>>>>" not in result
    return result


# --- formats/index ------------------------------------------------------------------------------------


def test_parse_index_items_with_continuation_lines_headings_and_preamble() -> None:
    text = (
        "# Memory index\n\n> preamble line\n> more\n\n## Section\n"
        "- [A](a.md) — first\n  continues here\n    - nested bullet\n"
        "- ⚠ plain item, see [[wikilink]]\n\n* [B](./sub/b.md#part) and [C](c.md)\n1. numbered\n"
        "```\n- not an item\n```\nlast line without newline"
    )
    blocks = parse_index(text)
    assert render(blocks) == text
    assert [block.key for block in blocks if block.key is not None] == [
        "a.md",
        "⚠ plain item, see [[wikilink]]",
        "sub/b.md",
        "numbered",
    ]
    assert IndexBlock("a.md", "- [A](a.md) — first\n  continues here\n    - nested bullet\n") in blocks
    assert IndexBlock(None, "- not an item\n") in blocks


def test_item_key_normalises_text_items() -> None:
    assert item_key("-   Some   text\n  over two lines\n") == "Some text over two lines"
    assert item_key('- [X](<x.md> "title") — d\n') == "x.md"


def test_parse_index_round_trips_every_corpus_index(corpus: Path) -> None:
    paths = [corpus / "skill" / "scout" / "MEMORY.md", corpus / "skill" / "acmp-claude" / "MEMORY.md"]
    paths += sorted((corpus / "history" / "acmp-claude-MEMORY").glob("v*.md"))
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert render(parse_index(text)) == text
    acmp = parse_index((corpus / "skill" / "acmp-claude" / "MEMORY.md").read_text(encoding="utf-8"))
    assert sum(block.key is not None for block in acmp) == 65  # the corpus README's bullet count


# --- daily -------------------------------------------------------------------------------------------

DAY = b"# Daily log \xe2\x80\x94 2026-11-30\n\n- [09:00] start\n"


def test_daily_appends_from_both_sides_ordered_by_first_stamp() -> None:
    ours = DAY + b"- [10:00] ours one\n\n- [10:05] ours two\n"
    theirs = DAY + b"- [09:30] theirs\n| a | b |\n|---|---|\n"
    assert merged("daily", DAY, ours, theirs) == (
        DAY + b"- [09:30] theirs\n| a | b |\n|---|---|\n- [10:00] ours one\n\n- [10:05] ours two\n"
    )


def test_daily_blocks_without_stamps_order_by_bytes_and_keep_repeats() -> None:
    ours = DAY + b"## Notes\n\nsame\nsame\n"
    theirs = DAY + b"```\ncode\n```\n"
    assert merged("daily", DAY, ours, theirs) == DAY + b"## Notes\n\nsame\nsame\n```\ncode\n```\n"


def test_daily_tail_that_is_a_prefix_of_the_other_adds_nothing() -> None:
    one = DAY + b"- [10:00] x\n"
    assert merged("daily", DAY, one, one + b"- [10:01] y\n") == one + b"- [10:01] y\n"


def test_daily_both_created_the_file_title_once() -> None:
    ours = b"# Daily log \xe2\x80\x94 2026-11-30\n\n- [10:00] o\n"
    theirs = b"# Daily log \xe2\x80\x94 2026-11-30\n\n- [08:00] t\n"
    assert merged("daily", b"", ours, theirs) == (
        b"# Daily log \xe2\x80\x94 2026-11-30\n\n- [08:00] t\n- [10:00] o\n"
    )
    other_title = b"# 2026-11-30 \xe2\x80\x94 scout\n\n- [08:00] t\n"
    assert merged("daily", b"", ours, other_title) == (
        b"# 2026-11-30 \xe2\x80\x94 scout\n\n- [08:00] t\n- [10:00] o\n"
    )


def test_daily_crlf_missing_newline_and_bom_are_normalised() -> None:
    ours = b"\xef\xbb\xbf" + DAY.replace(b"\n", b"\r\n") + b"- [11:00] o"
    assert merged("daily", DAY, ours, DAY + b"- [10:00] t\n") == DAY + b"- [10:00] t\n- [11:00] o\n"


def test_daily_after_a_merge_put_the_peers_block_first_each_line_stays_once() -> None:
    # Y appended b; X merged it after its own a (earlier stamp first) and appended x; meanwhile Y
    # appended y. Y merges X's head: base is Y's commit with b, which X's side holds with a before it.
    day, a, b = b"# 2026-11-30\n", b"- [10:00] a from X\n", b"- [10:01] b from Y\n"
    x, y = b"- [10:03] x from X\n", b"- [10:02] y from Y\n"
    assert merged("daily", day + b, day + b + y, day + a + b + x) == day + a + b + y + x


def test_daily_inserts_in_the_middle_merge_per_place() -> None:
    base = DAY + b"- [10:00] middle\n"
    ours = DAY + b"- [09:10] o1\n- [10:00] middle\n- [11:00] o2\n"
    theirs = DAY + b"- [09:05] t1\n- [10:00] middle\n"
    assert merged("daily", base, ours, theirs) == (
        DAY + b"- [09:05] t1\n- [09:10] o1\n- [10:00] middle\n- [11:00] o2\n"
    )


def test_daily_section_both_merged_from_a_third_peer_comes_once() -> None:
    # Criss-cross: ours merged the scout's section after its own and went on; theirs holds the same
    # section first and appended a review. The section (blank line and heading included) comes once.
    scout = b"\n## Scout, 10:05\n- [10:05] c read the logs\n- [10:06] c found the bug\n"
    ours = DAY + b"\n## Dev, 10:00\n- [10:00] a wrote the test\n" + scout + b"- [10:20] a fixed it\n"
    theirs = DAY + scout + b"\n## Review, 10:10\n- [10:10] b asked for a property\n"
    assert merged("daily", DAY, ours, theirs) == (
        DAY
        + b"\n## Dev, 10:00\n- [10:00] a wrote the test\n"
        + scout
        + b"\n## Review, 10:10\n- [10:10] b asked for a property\n- [10:20] a fixed it\n"
    )


def test_daily_same_line_written_on_two_machines_is_kept_twice() -> None:
    """Found by the tester after the criss-cross change: alice and bob each log the same line after a
    line of their own; the line was written twice, so both copies stay (invariant I1), in each
    side's block. Only a run of two or more lines both hold counts as a block from an earlier merge."""
    green = b"- [09:30] ran the test suite: all green\n"
    alice, bob = b"- [09:00] alice: pulled main\n", b"- [09:10] bob: fixed flaky test\n"
    assert merged("daily", DAY, DAY + alice + green, DAY + bob + green) == DAY + alice + green + bob + green
    spaced = merged("daily", DAY, DAY + alice + b"\n" + green, DAY + bob + b"\n" + green)
    assert spaced == DAY + alice + b"\n" + green + bob + b"\n" + green  # blank lines do not join it


def test_daily_one_line_block_from_a_third_peer_at_different_places_is_kept_twice() -> None:
    """A third peer's block of one text line, which ours merged after its own line and theirs before:
    a lone line both hold looks like a line each machine wrote, so it comes twice (a duplicate, never a
    lost line); with a second line the block counts as merged and comes once."""
    c1, c2 = b"- [10:05] c read the logs\n", b"- [10:06] c found the bug\n"
    a, b = b"- [10:00] a wrote the test\n", b"- [10:10] b asked for a property\n"
    assert merged("daily", DAY, DAY + a + c1, DAY + c1 + b) == DAY + a + c1 + c1 + b
    assert merged("daily", DAY, DAY + a + c1 + c2, DAY + c1 + c2 + b) == DAY + a + c1 + c2 + b


def test_daily_blank_and_markup_lines_alone_do_not_join_two_blocks() -> None:
    ours = DAY + b"- [10:00] o1\n\n```\n- [10:01] o2\n"
    theirs = DAY + b"- [09:00] t1\n\n```\n- [09:01] t2\n"
    assert merged("daily", DAY, ours, theirs) == DAY + theirs[len(DAY) :] + ours[len(DAY) :]


def test_daily_rewritten_base_falls_back_to_the_entry_rules() -> None:
    ours = DAY.replace(b"start", b"begin") + b"- [10:00] o\n"
    theirs = DAY + b"- [11:00] t\n"
    result = merged("daily", DAY, ours, theirs)
    assert result == DAY.replace(b"start", b"begin") + b"- [10:00] o\n- [11:00] t\n" or (
        BOTH_KEPT_NOTE_PREFIX.encode() in result and b"- [10:00] o\n" in result and b"- [11:00] t\n" in result
    )


def test_daily_on_a_real_log(corpus: Path) -> None:
    data = (corpus / "skill" / "scout" / "daily" / "2026-07-23.md").read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    base = data[:cut]
    result = merged("daily", base, data, base + "- [23:59] late note 🟥\n".encode())
    assert result.startswith(data) or result.startswith(base + b"- [23:59]")
    assert data[cut:] in result and "late note 🟥".encode() in result


# --- index -------------------------------------------------------------------------------------------

INDEX = (
    b"# Memory index \xe2\x80\x94 dev\n\n> preamble\n\n"
    b"- [A](a.md) \xe2\x80\x94 alpha\n- [B](b.md) \xe2\x80\x94 beta\n"
)


def test_index_additions_from_both_sides_and_one_sided_edit() -> None:
    ours = INDEX + b"- [C](c.md) \xe2\x80\x94 gamma\n"
    theirs = INDEX.replace(b"beta", b"beta, edited") + b"- [D](d.md) \xe2\x80\x94 delta\n"
    assert merged("index", INDEX, ours, theirs) == (
        INDEX.replace(b"beta", b"beta, edited")
        + b"- [C](c.md) \xe2\x80\x94 gamma\n- [D](d.md) \xe2\x80\x94 delta\n"
    )


def test_index_deletion_honoured_unless_the_other_side_changed_the_item() -> None:
    deleted = INDEX.replace(b"- [A](a.md) \xe2\x80\x94 alpha\n", b"")
    item_c = b"- [C](c.md) \xe2\x80\x94 c\n"
    assert merged("index", INDEX, deleted, INDEX + item_c) == deleted + item_c
    changed = INDEX.replace(b"alpha", b"alpha, edited")
    assert merged("index", INDEX, deleted + b"- [C](c.md) \xe2\x80\x94 c\n", changed) == (
        changed + b"- [C](c.md) \xe2\x80\x94 c\n"
    )


def test_index_item_changed_on_both_sides_keeps_both_versions_in_place() -> None:
    ours = INDEX.replace(b"alpha", b"alpha, ours")
    theirs = INDEX.replace(b"alpha", b"alpha, theirs!")
    assert merged("index", INDEX, ours, theirs) == INDEX.replace(
        b"- [A](a.md) \xe2\x80\x94 alpha\n",
        b"- [A](a.md) \xe2\x80\x94 alpha, ours\n- [A](a.md) \xe2\x80\x94 alpha, theirs!\n",
    )


def test_f17_both_sides_add_the_same_slug_with_different_descriptions_both_kept() -> None:
    ours = INDEX + b"- [New](new.md) \xe2\x80\x94 one description\n"
    theirs = INDEX + b"- [New thing](new.md) \xe2\x80\x94 another description\n"
    assert merged("index", INDEX, ours, theirs) == (
        INDEX + b"- [New thing](new.md) \xe2\x80\x94 another description\n"
        b"- [New](new.md) \xe2\x80\x94 one description\n"
    )


def test_index_a_second_line_for_one_file_is_kept() -> None:
    ours = INDEX + b"- [A](a.md) \xe2\x80\x94 alpha, rewritten as a new line\n"
    theirs = INDEX + b"- [C](c.md) \xe2\x80\x94 c\n"
    assert merged("index", INDEX, ours, theirs) == (
        INDEX + b"- [A](a.md) \xe2\x80\x94 alpha, rewritten as a new line\n- [C](c.md) \xe2\x80\x94 c\n"
    )


def test_index_two_lines_linking_parts_of_one_file_survive_a_peers_addition() -> None:
    """Both lines written here while a peer added an item: every line of both sides stays, both orders."""
    staging = b"- [Deploy: staging](deploy.md#staging) \xe2\x80\x94 how staging is deployed\n"
    rollback = b"- [Deploy: rollback](deploy.md#rollback) \xe2\x80\x94 how to roll back\n"
    ours = INDEX + staging + rollback
    theirs = INDEX + b"- [C](c.md) \xe2\x80\x94 c\n"
    expected = INDEX + b"- [C](c.md) \xe2\x80\x94 c\n" + staging + rollback  # the smaller run first
    assert merged("index", INDEX, ours, theirs) == expected
    assert merged("index", INDEX, theirs, ours) == expected
    # Synced already, then a concurrent edit elsewhere: neither copy is lost.
    edited = ours.replace(b"alpha", b"alpha, edited")
    assert merged("index", ours, edited, expected) == expected.replace(b"alpha", b"alpha, edited")


def test_index_an_item_written_twice_is_kept_twice() -> None:
    twice = INDEX + b"- plain note\n- plain note\n"
    assert merged("index", INDEX, twice, INDEX + b"- [C](c.md)\n").count(b"- plain note\n") == 2


def test_index_items_under_headings_and_continuation_lines() -> None:
    base = b"# I\n\n## One\n\n- [A](a.md) \xe2\x80\x94 a\n  more a\n\n## Two\n\n- plain item\n"
    ours = base.replace(b"  more a\n", b"  more a, ours\n") + b"- second plain\n"
    theirs = base.replace(b"## Two\n\n", b"## Two\n\n- [Z](z.md) \xe2\x80\x94 z\n")
    assert merged("index", base, ours, theirs) == (
        b"# I\n\n## One\n\n- [A](a.md) \xe2\x80\x94 a\n  more a, ours\n\n## Two\n\n"
        b"- [Z](z.md) \xe2\x80\x94 z\n- plain item\n- second plain\n"
    )


def test_index_moved_item_appears_once() -> None:
    base = b"## X\n- [A](a.md)\n- [B](b.md)\n## Y\n"
    ours = b"## X\n- [B](b.md)\n## Y\n- [A](a.md)\n"
    theirs = base + b"- [C](c.md)\n"
    result = merged("index", base, ours, theirs)
    assert result.count(b"(a.md)") == 1 and b"(c.md)" in result and b"(b.md)" in result


def test_index_replay_of_the_real_history(corpus: Path) -> None:
    history = corpus / "history" / "acmp-claude-MEMORY"
    v010, v020 = (history / "v010.md").read_bytes(), (history / "v020.md").read_bytes()
    first_item_end = v010.index(b"\n", v010.index(b"\n- ") + 1) + 1
    hand_line = b"- [Hand note](hand-note.md) \xe2\x80\x94 added by hand\n"
    hand = v010[:first_item_end] + hand_line + v010[first_item_end:]
    result = merged("index", v010, v020, hand)
    assert b"- [Hand note](hand-note.md)" in result
    result_keys = {b.key for b in parse_index(result.decode()) if b.key is not None}
    v020_keys = {b.key for b in parse_index(v020.decode()) if b.key is not None}
    assert v020_keys <= result_keys and "hand-note.md" in result_keys
    assert result_keys - v020_keys == {"hand-note.md"}


def test_index_replay_of_consecutive_versions_as_crossing_merges(corpus: Path) -> None:
    history = sorted((corpus / "history" / "acmp-claude-MEMORY").glob("v*.md"))
    for older, newer in zip(history[:-2:6], history[2::6], strict=False):
        base = older.read_bytes()
        ours = newer.read_bytes()
        theirs = base + b"- [Extra](extra-note.md) \xe2\x80\x94 appended on another machine\n"
        result = merged("index", base, ours, theirs)
        keys = {b.key for b in parse_index(result.decode()) if b.key is not None}
        assert {b.key for b in parse_index(ours.decode()) if b.key is not None} | {"extra-note.md"} <= keys


# --- entry -------------------------------------------------------------------------------------------

ENTRY = b"---\nname: Timezone\ndescription: the user's timezone\ntype: user\n---\n\nLine one.\n\nLine two.\n"


def test_entry_clean_three_way_merge() -> None:
    ours = ENTRY.replace(b"Line one.", b"Line one, ours.")
    theirs = ENTRY.replace(b"Line two.", b"Line two, theirs.")
    assert merged("entry", ENTRY, ours, theirs) == ENTRY.replace(b"Line one.", b"Line one, ours.").replace(
        b"Line two.", b"Line two, theirs."
    )


def test_entry_frontmatter_merged_key_by_key() -> None:
    ours = ENTRY.replace(b"description: the user's timezone", b"description: the user's time zone (CET)")
    theirs = ENTRY.replace(b"type: user", b"type: feedback").replace(b"Line two.", b"Line 2.")
    assert merged("entry", ENTRY, ours, theirs) == (
        b"---\nname: Timezone\ndescription: the user's time zone (CET)\ntype: feedback\n---\n\n"
        b"Line one.\n\nLine 2.\n"
    )


def test_entry_conflicting_bodies_keep_both_under_one_note() -> None:
    ours = ENTRY.replace(b"Line one.", b"Ours rewrote it.")
    theirs = ENTRY.replace(b"Line one.", b"Theirs rewrote it.")
    expected = (
        b"---\nname: Timezone\ndescription: the user's timezone\ntype: user\n---\n"
        + BOTH_KEPT_NOTE.encode()
        + b"\n\n"
        b"[memsync] version 1 of 2\n\nOurs rewrote it.\n\nLine two.\n"
        b"[memsync] version 2 of 2\n\nTheirs rewrote it.\n\nLine two.\n"
    )
    assert merged("entry", ENTRY, ours, theirs) == expected
    resolved = expected.replace(BOTH_KEPT_NOTE.encode() + b"\n\n", b"")
    assert merge_entry(expected, resolved, expected) == resolved  # editing the note away sticks


def test_entry_non_markdown_file_and_add_add() -> None:
    ours, theirs = b'{"last": "2026-11-01"}\n', b'{"last": "2026-11-02"}\n'
    result = merged("entry", b"", ours, theirs)
    assert result.startswith(BOTH_KEPT_NOTE_PREFIX.encode())
    assert result.index(ours) < result.index(theirs)


def test_entry_keeps_bytes_as_they_are() -> None:
    base = b"a\r\nb\rc\r\n\xff\xfe\r\nd\r\ne\r\n"
    ours = base.replace(b"a\r\n", b"A\r\n")
    theirs = base.replace(b"e\r\n", b"E\r\n")
    assert merged("entry", base, ours, theirs) == b"A\r\nb\rc\r\n\xff\xfe\r\nd\r\nE\r\n"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("memory/x.jsonl", "jsonl"),
        ("roles/dev/daily/2026-11-30.md", "daily"),
        ("roles/dev/MEMORY.md", "index"),
        ("roles/dev/note.md", "entry"),
        ("roles/dev/.last-retrospective", "entry"),
    ],
)
def test_merge_for_path_dispatches_on_the_layout(path: str, kind: str) -> None:
    base, ours, theirs = b"x\n", b"x\ny\n", b"x\nz\n"
    expected = {"jsonl": merge_jsonl, "daily": merge_daily, "index": merge_index, "entry": merge_entry}[kind]
    assert merge_for_path(path, base, ours, theirs) == expected(base, ours, theirs)


def test_index_two_real_rewrites_from_one_version_lose_no_item(corpus: Path) -> None:
    """Branches from vN taking vN+5 and vN+3 (both real whole-file rewrites, compactions included)."""
    history = sorted((corpus / "history" / "acmp-claude-MEMORY").glob("v*.md"))

    def items(data: bytes) -> dict[str, str]:
        return {b.key: b.text for b in parse_index(data.decode()) if b.key is not None}

    for start in range(0, len(history) - 5, 5):
        base, ours, theirs = (history[start + step].read_bytes() for step in (0, 5, 3))
        kept, base_items = items(merged("index", base, ours, theirs)), items(base)
        for side, other in ((ours, theirs), (theirs, ours)):
            other_items = items(other)
            for key, text in items(side).items():
                deleted_by_other = key in base_items and key not in other_items and text == base_items[key]
                assert key in kept or deleted_by_other


def test_daily_merge_over_a_virtual_base_in_another_order_is_insertions_not_a_note() -> None:
    """git's virtual base of a criss-cross (two merge bases merged by the driver) holds the blocks in
    an order neither side has; both sides still hold every base line, so the merge keeps every line,
    at most twice, with no both-kept note, symmetric."""
    head = b"# Daily log\n\n"
    a, b, c, d, e = (
        b"- [13:30] p0 A\n",
        b"- [18:30] p2 B\n",
        b"- [09:00] p1 C\n",
        b"- [15:00] p1 D\n",
        b"- [10:00] p2 E\n",
    )
    virtual = merge_daily(head, head + c + d, head + b)
    assert virtual == head + c + d + b
    ours, theirs = head + c + a + b + d, head + c + d + b + e
    merged = merge_daily(virtual, ours, theirs)
    assert merged == head + c + a + b + d + b + e
    assert merge_daily(virtual, theirs, ours) == merged

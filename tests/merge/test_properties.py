"""Properties of every merge driver over generated versions (issue 3 "Tests"): symmetry byte for byte,
idempotence, stability, no lost line, no conflict markers; with duplicates, compaction on one side,
tombstones, malformed lines, CRLF, BOM, missing final newlines and unicode."""

from __future__ import annotations

import io
import json
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsync.formats.jsonl.canonical import canonical_json, is_header, parse_record
from memsync.formats.markdown.index import parse_index
from memsync.merge.daily import merge_daily
from memsync.merge.entry import BOTH_KEPT_NOTE_PREFIX, merge_entry
from memsync.merge.index import merge_index
from memsync.merge.jsonl import merge_jsonl
from memsync.merge.prefix import safe_prefix_len as _safe_prefix_len

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MARKERS = (b"<<<<<<<", b">>>>>>>")

# --- jsonl -------------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from('ab é→🟥 "\\\t'), max_size=6)
STAMP = st.sampled_from(["2026-11-10T10:00:00Z", "2026-11-10T09:00:00Z", "2026-11-11T00:00:00Z"])
IDS = st.sampled_from(["m1", "m2", "m3", "m4"])


def _dump(obj: dict[str, object], spaced: bool) -> bytes:
    if spaced:
        return json.dumps(obj, ensure_ascii=False).encode()
    return canonical_json(obj)


ENTRY_LINE = st.builds(
    lambda id_, stamp, text, spaced, extra: _dump(
        {"id": id_, "kind": "fact", "text": text, "created_at": stamp, **({"x-extra": 1} if extra else {})},
        spaced,
    ),
    IDS,
    STAMP,
    TEXT,
    st.booleans(),
    st.booleans(),
)
TOMBSTONE_LINE = st.builds(
    lambda id_, stamp: _dump({"id": id_, "deleted": True, "created_at": stamp}, False), IDS, STAMP
)
HEADER_LINE = st.builds(lambda at: _dump({"format": "agent-memory/0.1", "created_at": at}, False), STAMP)
MALFORMED_LINE = st.sampled_from([b"garbage", b'{"id": ', "ünïcode ✓".encode(), b"\xff\xfe", b"", b"[1, 2]"])
LINE = st.one_of(ENTRY_LINE, ENTRY_LINE, TOMBSTONE_LINE, MALFORMED_LINE)


@st.composite
def jsonl_versions(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """(base, ours, theirs): each side appends to, compacts or re-serialises the base; bytes mangled."""
    header = draw(st.lists(HEADER_LINE, max_size=1))
    base = header + draw(st.lists(LINE, max_size=8))

    def side() -> list[bytes]:
        how = draw(st.sampled_from(["append", "append", "compact", "reserialise", "dup-header"]))
        lines = list(base)
        if how == "compact":
            lines = [line for line in lines if draw(st.booleans())]
        elif how == "reserialise":
            lines = [json.dumps(json.loads(line)).encode() if parse_record(line) else line for line in lines]
        elif how == "dup-header":
            lines += draw(st.lists(HEADER_LINE, max_size=2))
        return lines + draw(st.lists(st.one_of(LINE, st.sampled_from(base or [b"x"])), max_size=6))

    def encode(lines: list[bytes], mangle: bool) -> bytes:
        data = b"".join(line + b"\n" for line in lines)
        if mangle:
            way = draw(st.sampled_from(["crlf", "bom", "no-final-newline"]))
            if way == "crlf":
                data = data.replace(b"\n", b"\r\n")
            elif way == "bom":
                data = b"\xef\xbb\xbf" + data
            elif data:
                data = data[:-1]
        return data

    return encode(base, False), encode(side(), draw(st.booleans())), encode(side(), draw(st.booleans()))


def _lines(data: bytes) -> list[bytes]:
    data = data.removeprefix(b"\xef\xbb\xbf")
    if not data:
        return []
    return [line.removesuffix(b"\r") for line in data.split(b"\n")[: -1 if data.endswith(b"\n") else None]]


def _ident(line: bytes) -> bytes:
    record = parse_record(line)
    return line if record is None else canonical_json(record)


def _body_idents(data: bytes) -> set[bytes]:
    out = set()
    for line in _lines(data):
        record = parse_record(line)
        if record is None or not is_header(record):
            out.add(_ident(line))
    return out


@SETTINGS
@given(jsonl_versions())
def test_jsonl_symmetric_idempotent_lossless_marker_free(versions: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = versions
    result = merge_jsonl(base, ours, theirs)
    assert merge_jsonl(base, theirs, ours) == result
    assert merge_jsonl(base, result, result) == result
    assert result == b"" or result.endswith(b"\n")
    assert b"\r\n" not in result and not result.startswith(b"\xef\xbb\xbf")
    assert not any(marker in result for marker in MARKERS)
    kept, base_ids = _body_idents(result), _body_idents(base)
    for side, other in ((ours, theirs), (theirs, ours)):
        other_ids = _body_idents(other)
        for ident in _body_idents(side):
            assert ident in kept or (ident in base_ids and ident not in other_ids)
    headers = [line for line in _lines(result) if (r := parse_record(line)) is not None and is_header(r)]
    assert len(headers) <= 1 and (not headers or _lines(result)[0] == headers[0])


@SETTINGS
@given(jsonl_versions())
def test_jsonl_stable(versions: tuple[bytes, bytes, bytes]) -> None:
    base, x, _ = versions
    for result in (merge_jsonl(base, x, x), merge_jsonl(base, base, x)):
        assert _body_idents(result) == _body_idents(x)
        assert merge_jsonl(base, result, result) == result


PREFIX_LINE = st.sampled_from(
    [
        b'{"id":"a"}',
        b"<<<<<<< HEAD",
        b"=======",
        b"x <<<<<<<",
        b"|||||||",
        b"a=b",
        b'{"t":"\r"}',
        b">>>>>>>>",
        b"",
        b"<<<<<<",
    ]
)


@SETTINGS
@given(
    st.lists(PREFIX_LINE, max_size=12),
    st.lists(st.lists(PREFIX_LINE, max_size=3), min_size=3, max_size=3),
    st.integers(1, 40),
    st.booleans(),
)
def test_streamed_prefix_is_common_line_aligned_and_clean(
    shared: list[bytes], tails: list[list[bytes]], chunk_size: int, crlf: bool
) -> None:
    ending = b"\r\n" if crlf else b"\n"
    files = [b"".join(line + ending for line in shared + tail) for tail in tails]
    size = _safe_prefix_len([io.BytesIO(data) for data in files], chunk_size)
    prefix = files[0][:size]
    assert all(data.startswith(prefix) for data in files)
    assert size == 0 or prefix.endswith(b"\n")
    assert b"\r" not in prefix
    markers = (b"<<<<<<<", b">>>>>>>", b"=======", b"|||||||")
    assert not any(line[:7] in markers for line in prefix.split(b"\n"))
    if not crlf and all(line[:1] in (b"{", b"a") and b"\r" not in line for line in shared):  # all of it
        assert size >= len(b"".join(line + ending for line in shared))


# --- daily -------------------------------------------------------------------------------------------

DAILY_LINE = st.one_of(
    st.builds(lambda h, m, t: f"- [{h:02d}:{m:02d}] {t}", st.integers(0, 23), st.sampled_from([0, 30]), TEXT),
    st.sampled_from(["", "## Section", "| a | b |", "```", "prose → ≈ 🟥", "- bullet", "  continued"]),
)


@st.composite
def daily_versions(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """(base, ours, theirs): each side appends lines, or inserts them anywhere (as an earlier merge
    that put a peer's block first does); CRLF on some sides; sometimes both create the file."""
    title = "# Daily log — 2026-11-30\n"
    base = draw(st.sampled_from([[], [title], [title, "\n", "- [08:00] start\n"]]))
    base += [line + "\n" for line in draw(st.lists(DAILY_LINE, max_size=4))] if base else []

    def side() -> bytes:
        lines = list(base) or [draw(st.sampled_from([title, "# 2026-11-30 — scout\n"]))]
        for line in draw(st.lists(DAILY_LINE, max_size=5)):
            at = len(lines) if draw(st.booleans()) else draw(st.integers(1, len(lines)))
            lines.insert(at, line + "\n")
        data = "".join(lines).encode()
        return data.replace(b"\n", b"\r\n") if draw(st.booleans()) else data

    return "".join(base).encode(), side(), side()


def _text_lines(data: bytes) -> Counter[bytes]:
    return Counter(data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").split(b"\n"))


@SETTINGS
@given(daily_versions())
def test_daily_symmetric_idempotent_lossless(versions: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = versions
    result = merge_daily(base, ours, theirs)
    assert merge_daily(base, theirs, ours) == result
    assert merge_daily(base, result, result) == result
    assert merge_daily(base, base, ours) == ours and merge_daily(base, ours, ours) == ours
    for side in (ours, theirs):  # every line as often as the side has it; only a second title goes
        missing = _text_lines(side) - _text_lines(result)
        assert all(line.startswith(b"# ") for line in missing)
    assert BOTH_KEPT_NOTE_PREFIX.encode() not in result  # insert-only sides never need the entry rules


MARKUP = st.sampled_from(["", "```", "---", "|---|---|"])  # lines that independent appends share by chance
# (base, shared blocks, ours' own blocks, theirs' own blocks, the order theirs holds the shared blocks in),
# see criss_cross.
CrissCross = tuple[bytes, list[list[str]], list[list[str]], list[list[str]], list[int]]


@st.composite
def criss_cross(draw: st.DrawFn, markup: bool, reorder: bool = False, shared_min: int = 2) -> CrissCross:
    """Both sides hold the same blocks ``shared[0..k-1]`` (a third peer's, or each other's, from
    earlier merges) of ``shared_min`` to 3 text lines, each with its own blocks around and between
    them: ours' tail is ``ours[0] + shared[0] + ours[1] + ... + shared[k-1] + ours[k]``, theirs'
    likewise; any own block may be empty (a shared block first, last, or next to another). Text lines
    all differ, except repeats within one side's own block; ``markup`` adds blank and markup lines,
    which independent blocks share by chance; ``reorder`` lets theirs hold the shared blocks in another
    order."""
    serial = iter(range(10_000))

    def block(tag: str, *, shared: bool) -> list[str]:
        lines = [
            f"- [{draw(st.sampled_from(['14:21', '14:22', '14:30']))}] {tag} step {next(serial)}\n"
            for _ in range(draw(st.integers(shared_min if shared else 0, 3)))
        ]
        if not shared and lines and draw(st.booleans()):
            lines.append(draw(st.sampled_from(lines)))  # a side repeats its own line
        if markup:
            for _ in range(draw(st.integers(0, 2))):
                lines.insert(draw(st.integers(0, len(lines))), draw(MARKUP) + "\n")
        return lines

    base = draw(st.sampled_from(["# 2026-11-30\n", "# 2026-11-30\n\n- [08:00] start\n"]))
    shared = [block(f"c{n}", shared=True) for n in range(draw(st.integers(1, 3)))]
    ours = [block("a", shared=False) for _ in range(len(shared) + 1)]
    theirs = [block("b", shared=False) for _ in range(len(shared) + 1)]
    order = draw(st.permutations(range(len(shared)))) if reorder else list(range(len(shared)))
    return base.encode(), shared, ours, theirs, order


def _criss_cross_merge(case: CrissCross) -> tuple[bytes, Counter[bytes]]:
    """(result, union): the merge of the case's two sides after checking it is symmetric, stable and
    holds each side as a subsequence; union is the lines of the base, of every own block and of the
    shared blocks counted once."""
    base, shared, ours, theirs, order = case
    sides = []
    for own, held in ((ours, shared), (theirs, [shared[n] for n in order])):
        lines = list(own[0])
        for common, after in zip(held, own[1:], strict=True):
            lines += common + after
        sides.append(base + "".join(lines).encode())
    result = merge_daily(base, *sides)
    assert merge_daily(base, *sides[::-1]) == result
    assert merge_daily(base, result, result) == result
    for side in sides:
        rest = iter(result.splitlines(keepends=True))
        assert all(line in rest for line in side.splitlines(keepends=True))
    blocks = [block for own in (ours, theirs) for block in own] + shared
    return result, Counter(base.splitlines(keepends=True) + [line.encode() for b in blocks for line in b])


@SETTINGS
@given(criss_cross(markup=False))
def test_daily_blocks_both_sides_hold_come_once(case: CrissCross) -> None:
    """Each line as often as in the two sides' multiset union (never their sum): the shared blocks of
    two or more text lines once, every own block whole."""
    result, union = _criss_cross_merge(case)
    assert Counter(result.splitlines(keepends=True)) == union
    for own in case[2:4]:
        assert all("".join(block).encode() in result for block in own)


@SETTINGS
@given(criss_cross(markup=True))
def test_daily_blocks_both_sides_hold_come_once_among_blank_and_markup_lines(case: CrissCross) -> None:
    """With blank and markup lines, which the rule that lines both blocks start with come once may
    merge: never more than the union (the shared blocks never twice); none lost (a subsequence)."""
    result, union = _criss_cross_merge(case)
    assert Counter(result.splitlines(keepends=True)) <= union


@SETTINGS
@given(criss_cross(markup=False, reorder=True))
def test_daily_blocks_both_sides_hold_in_different_orders(case: CrissCross) -> None:
    """When the two sides hold the shared blocks in different orders, keeping each side a subsequence
    needs some lines twice: never more than the sum of the sides, and the most shared lines both hold
    in one order (at least the largest shared block) come once."""
    result, union = _criss_cross_merge(case)
    shared = case[1]
    kept = Counter(result.splitlines(keepends=True))
    assert kept <= union + Counter(line.encode() for block in shared for line in block)
    assert kept.total() - union.total() <= sum(map(len, shared)) - max(map(len, shared))


@SETTINGS
@given(criss_cross(markup=True, reorder=True, shared_min=1))
def test_daily_one_line_blocks_both_sides_hold_may_come_twice_never_lost(case: CrissCross) -> None:
    """A shared block of one text line looks like a line each machine wrote on its own: it may come
    twice (a duplicate), never more than the sum of the sides, and no line is lost (a subsequence)."""
    result, union = _criss_cross_merge(case)
    shared = Counter(line.encode() for block in case[1] for line in block)
    assert Counter(result.splitlines(keepends=True)) <= union + shared


SAME_LINE = st.sampled_from(["- [09:30] ran the test suite: all green\n", "- [10:00] pushed\n", "lunch\n"])


@st.composite
def independent_appends(draw: st.DrawFn) -> tuple[bytes, list[str], list[str]]:
    """(base, ours' appended lines, theirs'): each machine writes its own lines (some repeated), blank
    and markup lines, and now and then a line the other machine may write too (the same stamp and
    text); such a line is never first and never next to another one (an own text line between), as
    two or more lines in a row both hold are taken as a block merged from a third peer."""
    serial = iter(range(10_000))

    def side(tag: str) -> list[str]:
        own = [f"- [{draw(st.sampled_from(['09:00', '09:30', '10:00']))}] {tag} note {next(serial)}\n"]
        lines = list(own)
        after_same = False
        for how in draw(st.lists(st.sampled_from(["own", "repeat", "same", "markup"]), max_size=8)):
            if how == "same" and not after_same:
                lines.append(draw(SAME_LINE))
                after_same = True
            elif how == "markup":
                lines.append(draw(MARKUP) + "\n")
            elif how == "own":
                own.append(f"- [10:30] {tag} note {next(serial)}\n")
                lines.append(own[-1])
                after_same = False
            elif how == "repeat":
                lines.append(draw(st.sampled_from(own)))
                after_same = False
        return lines

    base = draw(st.sampled_from(["# 2026-11-30\n", "# 2026-11-30\n\n- [08:00] start\n"]))
    return base.encode(), side("a"), side("b")


@SETTINGS
@given(independent_appends())
def test_daily_lines_appended_on_two_machines_are_all_kept(case: tuple[bytes, list[str], list[str]]) -> None:
    """Invariant I1: every line each machine appended on its own stays, a line both wrote as often as
    both wrote it (the multiset sum); each side's tail whole and in its own order."""
    base, ours_tail, theirs_tail = case
    ours, theirs = (base + "".join(tail).encode() for tail in (ours_tail, theirs_tail))
    result = merge_daily(base, ours, theirs)
    assert merge_daily(base, theirs, ours) == result
    assert merge_daily(base, result, result) == result
    appended = Counter(line.encode() for line in ours_tail + theirs_tail)
    assert Counter(result.splitlines(keepends=True)) == Counter(base.splitlines(keepends=True)) + appended
    assert "".join(ours_tail).encode() in result and "".join(theirs_tail).encode() in result


# --- index -------------------------------------------------------------------------------------------

SLUGS = st.sampled_from(["a", "b", "c", "d", "e"])
ITEM = st.one_of(
    st.builds(lambda slug, desc: f"- [{slug.upper()}]({slug}.md) — {desc}\n", SLUGS, TEXT),
    st.builds(lambda slug, desc: f"- [{slug}]({slug}.md) — {desc}\n  more {desc}\n", SLUGS, TEXT),
    st.builds(
        lambda slug, part: f"- [{slug}: {part}]({slug}.md#{part}) — a part\n",
        SLUGS,
        st.sampled_from(["staging", "rollback"]),
    ),
    st.sampled_from(["- plain item\n", "- ⚠ see [[wikilink]]\n", "* [X](x.md) · [Y](y.md)\n"]),
)
OTHER = st.sampled_from(["\n", "## Heading\n", "> preamble\n", "## ★★ Other\n"])


@st.composite
def index_versions(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base = ["# Memory index\n", "\n", *draw(st.lists(st.one_of(ITEM, ITEM, OTHER), max_size=8))]

    def side() -> bytes:
        lines = list(base)
        for _ in range(draw(st.integers(0, 4))):
            how = draw(st.sampled_from(["add", "delete", "edit", "move"]))
            at = draw(st.integers(0, len(lines)))
            if how == "add":
                lines.insert(at, draw(st.one_of(ITEM, OTHER)))
            elif lines and at < len(lines) and how == "delete":
                del lines[at]
            elif lines and at < len(lines) and how == "edit":
                lines[at] = lines[at].replace(" — ", " — edited ", 1)
            elif lines and at < len(lines):
                lines.append(lines.pop(at))
        data = "".join(lines).encode()
        return data.replace(b"\n", b"\r\n") if draw(st.booleans()) else data

    return "".join(base).encode(), side(), side()


def _item_texts(data: bytes) -> Counter[str]:
    text = data.decode().replace("\r\n", "\n")
    return Counter(block.text for block in parse_index(text) if block.key is not None)


@SETTINGS
@given(index_versions())
def test_index_symmetric_idempotent_lossless(versions: tuple[bytes, bytes, bytes]) -> None:
    """No item either side wrote or changed is lost (two items for one file included, copies counted);
    an item both sides kept as it was stays; symmetric; merging a side into the result again adds no
    new item."""
    base, ours, theirs = versions
    result = merge_index(base, ours, theirs)
    assert merge_index(base, theirs, ours) == result
    assert merge_index(base, result, result) == result
    assert merge_index(base, base, ours) == ours
    kept, base_items = _item_texts(result), _item_texts(base)
    assert set(_item_texts(merge_index(base, result, ours))) == set(kept)
    ours_items, theirs_items = _item_texts(ours), _item_texts(theirs)
    for side in (ours_items, theirs_items):
        for text, count in (side - base_items).items():
            assert kept[text] >= count, text
    for text, count in (ours_items & theirs_items & base_items).items():
        assert kept[text] >= count, text


# --- entry -------------------------------------------------------------------------------------------

BODY_LINE = st.sampled_from(["alpha", "beta", "gamma", "δέλτα", "", "- item", "epsilon 🟥"])
HEAD = st.sampled_from(
    [
        "",
        "---\nname: x\ndescription: d\ntype: user\n---\n",
        "---\nname: x\ndescription: other\ntype: feedback\nmetadata: \n  node_type: memory\n---\n",
    ]
)


@st.composite
def entry_versions(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base_lines = draw(st.lists(BODY_LINE, max_size=6))

    def version(lines: list[str]) -> bytes:
        return (draw(HEAD) + "".join(line + "\n" for line in lines)).encode()

    def edited() -> list[str]:
        lines = list(base_lines)
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(lines)))
            if draw(st.booleans()) or not lines or at == len(lines):
                lines.insert(at, draw(BODY_LINE))
            else:
                lines[at] = draw(BODY_LINE)
        return lines

    return version(base_lines), version(edited()), version(edited())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry_versions())
def test_entry_symmetric_idempotent_marker_free(versions: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = versions
    result = merge_entry(base, ours, theirs)
    assert merge_entry(base, theirs, ours) == result
    assert merge_entry(base, result, result) == result
    assert merge_entry(base, base, ours) == ours
    assert not any(marker in result for marker in MARKERS)
    base_lines = set(base.splitlines())
    for side in (ours, theirs):
        added = [line for line in side.splitlines() if line not in base_lines and not line.startswith(b"---")]
        body_added = [line for line in added if b":" not in line and not line.startswith(b"  ")]
        assert all(line in result.splitlines() for line in body_added)


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["- [09:00] a", "- [10:00] b", "c", "", "| x |"]), min_size=1, max_size=6, unique=True
    ),
    st.randoms(use_true_random=False),
    st.lists(st.sampled_from(["- [11:00] o", "o2", ""]), max_size=3),
    st.lists(st.sampled_from(["- [08:00] t", "t2", ""]), max_size=3),
)
def test_daily_over_a_base_in_an_order_neither_side_has_keeps_every_line_without_a_note(
    base_items: list[str], rng: random.Random, ours_new: list[str], theirs_new: list[str]
) -> None:
    """git's virtual base of a criss-cross may order the base lines as neither side does: each side holds
    every base line (reordered) plus its own; the merge keeps every line of both sides, never writes the
    both-kept note, and is symmetric."""
    base_lines = [f"{item}\n".encode() for item in base_items]
    sides = []
    for new in (ours_new, theirs_new):
        lines = base_lines + [f"{item}\n".encode() for item in new]
        rng.shuffle(lines)
        sides.append(b"".join(lines))
    base = b"".join(base_lines)
    ours, theirs = sides
    merged = merge_daily(base, ours, theirs)
    assert merged == merge_daily(base, theirs, ours)
    assert BOTH_KEPT_NOTE_PREFIX.encode() not in merged
    for side in (ours, theirs):
        assert not Counter(side.splitlines(keepends=True)) - Counter(merged.splitlines(keepends=True))

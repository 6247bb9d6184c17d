"""The jsonl merge driver: every case from the field (issue 3, F1-F17's jsonl rows) with its exact output."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memsync.formats.jsonl.parse import parse_memory
from memsync.merge.jsonl import merge_jsonl

H = b'{"created_at":"2026-11-09T07:50:00Z","format":"agent-memory/0.1"}\n'


def rec(id_: str, created_at: str, text: str = "", **fields: Any) -> bytes:
    """One entry line (canonical key order) ending in a newline."""
    obj = {"id": id_, "kind": "fact", "text": text or f"text of {id_}", "created_at": created_at, **fields}
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def tomb(id_: str, created_at: str) -> bytes:
    return (
        json.dumps(
            {"created_at": created_at, "deleted": True, "id": id_}, sort_keys=True, separators=(",", ":")
        ).encode()
        + b"\n"
    )


A = rec("a1", "2026-11-10T10:00:00Z")
B = rec("b1", "2026-11-10T09:00:00Z")
C = rec("c1", "2026-11-10T11:00:00Z")
D = rec("d1", "2026-11-10T12:00:00Z")


def merged(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The merge, after checking it is the same bytes with the sides swapped (I4)."""
    result = merge_jsonl(base, ours, theirs)
    assert merge_jsonl(base, theirs, ours) == result
    assert result == b"" or result.endswith(b"\n")
    return result


def view_ids(data: bytes) -> list[str]:
    return [entry.id for entry in parse_memory(data).view(datetime(2026, 12, 1, tzinfo=UTC))]


def test_f1_both_sides_append_the_same_line_once() -> None:
    assert merged(H + A, H + A + B, H + A + B) == H + A + B
    # the same line with other key order and spacing is the same line too
    respaced = json.dumps(json.loads(B), indent=None).encode() + b"\n"
    assert merged(H, H + B, H + respaced) == H + respaced  # the smaller bytes of the two spellings


def test_f2_one_order_for_lines_added_on_two_sides() -> None:
    assert merged(H, H + A, H + B) == H + B + A  # B.created_at is earlier


def test_f2_equal_created_at_orders_by_id() -> None:
    x = rec("x", "2026-11-10T10:00:00Z")
    y = rec("y", "2026-11-10T10:00:00Z")
    assert merged(H, H + y, H + x) == H + x + y


def test_f3_same_lines_in_other_orders_kept_once_each() -> None:
    assert merged(H, H + A + B, H + B + A) == H + B + A


def test_f4_two_lines_with_one_id_are_both_kept_and_every_peer_sees_one_winner() -> None:
    first = rec("dup", "2026-11-10T10:00:00Z", "first wording")
    second = rec("dup", "2026-11-10T10:00:00Z", "second wording")
    result = merged(H, H + first, H + second)
    assert result == H + first + second  # same created_at and id: canonical bytes decide
    texts = [e.text for e in parse_memory(result).view(datetime(2026, 12, 1, tzinfo=UTC))]
    assert len(texts) == 1


def test_f5_compaction_on_one_side_stays_and_the_other_sides_lines_are_kept() -> None:
    base = H + A + tomb("a1", "2026-11-10T10:30:00Z") + B
    compacted = H + tomb("a1", "2026-11-10T10:30:00Z") + B  # compact keeps tombstones
    assert merged(base, compacted, base + C + D) == compacted + C + D


def test_f6_reserialised_side_does_not_duplicate_entries() -> None:
    base = H + A + B
    reserialised = b"".join(
        json.dumps(json.loads(line), indent=None, sort_keys=False).encode() + b"\n"
        for line in (H, B, A)  # other order, other spacing
    )
    result = merged(base, reserialised, base + C)
    assert len(result.splitlines()) == 4
    # base lines keep base order; their bytes are the re-serialising side's (it changed them)
    lines = reserialised.splitlines(keepends=True)
    assert result == lines[0] + lines[2] + lines[1] + C


def test_f7_tombstone_and_superseding_entry_from_two_sides_are_both_kept() -> None:
    m1 = rec("m1", "2026-11-10T10:00:00Z")
    gone = tomb("m1", "2026-11-10T12:00:00Z")
    m4 = rec("m4", "2026-11-10T11:00:00Z", supersedes="m1")
    assert merged(H + m1, H + m1 + gone, H + m1 + m4) == H + m1 + m4 + gone
    assert view_ids(H + m1 + m4 + gone) == ["m4"]


def test_f8_stale_side_reappending_a_tombstoned_entry_cannot_revive_it() -> None:
    m1 = rec("m1", "2026-11-10T10:00:00Z")
    gone = tomb("m1", "2026-11-10T12:00:00Z")
    again = rec("m1", "2026-11-10T13:00:00Z", "revived by a stale copy")
    result = merged(H + m1, H + m1 + gone, H + m1 + again)
    assert result == H + m1 + gone + again
    assert view_ids(result) == []


def test_f9_expired_entries_are_not_dropped_by_the_merge() -> None:
    old = rec("old", "2020-01-01T00:00:00Z", expires_at="2020-02-01T00:00:00Z")
    assert merged(H, H + old, H + A) == H + old + A


def test_f10_unterminated_last_lines_are_never_glued() -> None:
    assert merged(H, H + A.rstrip(b"\n"), H + B.rstrip(b"\n")) == H + B + A
    assert merged(H + A.rstrip(b"\n"), H + A + C, H + A.rstrip(b"\n") + b"\n" + B) == H + A + B + C


def test_f11_crlf_and_bom_are_normalised_before_comparing() -> None:
    crlf = (H + A).replace(b"\n", b"\r\n")
    assert merged(H, crlf, H + A + B) == H + B + A
    assert merged(H, b"\xef\xbb\xbf" + H + A, H + A) == H + A
    assert merged(H.replace(b"\n", b"\r\n"), H.replace(b"\n", b"\r\n") + A, H + B) == H + B + A


def test_f12_garbage_kept_verbatim_after_valid_lines_and_marker_lines_dropped() -> None:
    garbage = b"not json at all \xff\n"
    ours = H + b"<<<<<<< HEAD\n" + A + b"=======\n" + C + b">>>>>>> theirs\n" + garbage
    result = merged(H, ours, H + B)
    assert result == H + B + A + C + garbage
    assert b"<<<<<<<" not in result and b"=======" not in result and b">>>>>>>" not in result


def test_f12_marker_lines_in_the_common_prefix_are_dropped_too() -> None:
    base = H + b"<<<<<<< HEAD\n" + A + b">>>>>>> x\n"
    assert merged(base, base + B, base + C) == H + A + B + C


def test_f13_one_header_on_line_one_the_earliest() -> None:
    early = b'{"created_at":"2026-01-01T00:00:00Z","format":"agent-memory/0.1"}\n'
    assert merged(b"", early + A, H + B) == early + B + A
    assert merged(H, H + A + H, H + H + B) == H + B + A
    assert merged(H + A, H + A + early, H + A + B) == early + A + B


def test_f13_a_file_without_header_gets_none() -> None:
    assert merged(A, A + B, A + C) == A + B + C
    assert merged(b"", A, B) == B + A


def test_f14_unknown_fields_kept_and_unknown_format_merged_as_opaque_lines() -> None:
    extra = rec("e1", "2026-11-10T08:00:00Z", future_field={"nested": [1, 2]})
    assert merged(H, H + extra, H + A) == H + extra + A
    v2 = b'{"format":"agent-memory/2.0","created_at":"2026-11-09T07:50:00Z"}\n'
    z, y = b'{"zz":1}\n', b'{"id":"y","created_at":"2000-01-01T00:00:00Z"}\n'
    assert merged(v2, v2 + z, v2 + y) == v2 + y + z  # bytes order, not created_at; header untouched
    assert merged(b"", v2 + z, H + y) == H + v2 + y + z  # opaque: both headers kept, nothing rewritten


def test_f15_lines_over_64_kib() -> None:
    long = rec("long", "2026-11-10T08:00:00Z", "x" * 200_000)
    assert merged(H, H + long, H + A) == H + long + A
    assert merged(H + long, H + long + B, H + long + A) == H + long + B + A


def test_f16_add_add_with_empty_base_is_a_union() -> None:
    assert merged(b"", H + A, H + B) == H + B + A
    assert merged(b"", b"", b"") == b""


def test_base_lines_keep_their_place_and_added_malformed_lines_come_last() -> None:
    bad = b"{broken\n"
    base = H + C + bad + A
    assert merged(base, base + b"zz\n", base + B + b"aa\n") == base + B + b"aa\n" + b"zz\n"


def test_a_line_both_sides_removed_or_one_side_removed_is_gone() -> None:
    base = H + A + B + C
    assert merged(base, H + A + C, H + A + B + C + D) == H + A + C + D
    assert merged(base, H + A + C, H + C) == H + C


def test_stable_and_idempotent_on_a_real_memory_file(corpus: Any) -> None:
    data = (corpus / "jsonl" / "acmp.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    base, ours, theirs = b"".join(lines[:40]), b"".join(lines[:60]), b"".join(lines[:40] + lines[60:])
    result = merged(base, ours, theirs)
    assert sorted(result.splitlines()) == sorted(data.splitlines())
    assert merge_jsonl(base, result, result) == result
    # merge(b, b, x) is x up to the canonical order of added lines (the corpus orders ties by position)
    only_theirs = merge_jsonl(base, base, data)
    assert only_theirs.startswith(base) and sorted(only_theirs.splitlines()) == sorted(data.splitlines())
    assert merge_jsonl(base, only_theirs, only_theirs) == only_theirs


def test_lines_json_cannot_round_trip_are_kept_verbatim() -> None:
    surrogate = b'{"id":"s","text":"\\ud800"}\n'
    deep = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    assert merged(H, H + surrogate, H + deep) == H + min(surrogate, deep) + max(surrogate, deep)

"""Symmetric three-way merge of keyed blocks — index items, frontmatter keys — used by the merge
drivers of :mod:`memsync.merge` (DESIGN "Merge drivers").

A block is ``(key, text)``; ``key`` None marks a keyless line (heading, blank line, preamble) that keeps
its place. Nothing here depends on which side is ours: swapping the sides gives the same result.
"""

from __future__ import annotations

from difflib import SequenceMatcher

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Sequence
    from typing import TypeVar

    _T = TypeVar("_T", bound=Hashable)
Block = tuple[str | None, str]  # (key or None for a keyless line, text with line ends)
_Token = tuple[str, str]


def pick_version(versions: Iterable[str]) -> str:
    """The one version kept when two sides changed the same item differently: the longest in UTF-8 bytes
    (it usually carries the most information), ties broken by the greater text. Side-independent.
    ``versions`` must not be empty (``ValueError`` otherwise)."""
    return max(versions, key=lambda text: (len(text.encode("utf-8", "surrogateescape")), text))


def _matches(base: Sequence[_T], side: Sequence[_T]) -> dict[int, int]:
    """Index in ``side`` of every ``base`` element that the longest-matching-blocks diff pairs up."""
    pairs: dict[int, int] = {}
    for a, b, size in SequenceMatcher(None, base, side, autojunk=False).get_matching_blocks():
        for offset in range(size):
            pairs[a + offset] = b + offset
    return pairs


def _union2(first: Sequence[_T], second: Sequence[_T]) -> list[_T]:
    """Both sequences interleaved around their common elements (kept once), the smaller one's run first.

    The two are ordered by value before diffing, so the result does not depend on which side is ours.
    """
    low, high = sorted((list(first), list(second)))
    out: list[_T] = []
    i = j = 0
    for a, b, size in SequenceMatcher(None, low, high, autojunk=False).get_matching_blocks():
        out.extend(low[i:a])
        out.extend(high[j:b])
        out.extend(low[a : a + size])
        i, j = a + size, b + size
    return out


def _resolve_chunk(base: list[_T], ours: list[_T], theirs: list[_T]) -> list[_T]:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return _union2(ours, theirs)


def _diff3(base: Sequence[_T], ours: Sequence[_T], theirs: Sequence[_T]) -> list[_T]:
    """A symmetric diff3 of token sequences: stable runs kept, a chunk changed on one side taken from that
    side, a chunk changed on both sides differently replaced by the :func:`_union2` of the two."""
    to_ours, to_theirs = _matches(base, ours), _matches(base, theirs)
    out: list[_T] = []
    i = j = k = 0
    while i < len(base) or j < len(ours) or k < len(theirs):
        run = 0
        while i + run < len(base) and to_ours.get(i + run) == j + run and to_theirs.get(i + run) == k + run:
            run += 1
        if run:
            out.extend(base[i : i + run])
            i, j, k = i + run, j + run, k + run
            continue
        anchor = next((x for x in range(i, len(base)) if x in to_ours and x in to_theirs), None)
        if anchor is None:
            end_i, end_j, end_k = len(base), len(ours), len(theirs)
        else:
            end_i, end_j, end_k = anchor, to_ours[anchor], to_theirs[anchor]
        out.extend(_resolve_chunk(list(base[i:end_i]), list(ours[j:end_j]), list(theirs[k:end_k])))
        i, j, k = end_i, end_j, end_k
    return out


def _resolve_value(
    base: str | None, ours: str | None, theirs: str | None, pick: Callable[[Iterable[str]], str]
) -> str | None:
    """Three-way on one keyed value (None = absent): one-sided changes win; a deletion loses to a change;
    two different changes give ``pick`` of both."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if ours is None or theirs is None:
        return theirs if ours is None else ours
    return pick((ours, theirs))


def _side_values(blocks: Sequence[Block], base_values: dict[str, str]) -> dict[str, str]:
    """One text per key of a side; duplicates of a key collapse to the :func:`pick_version` of the copies that
    differ from the base (a second line written for a key is that side's change)."""
    copies: dict[str, list[str]] = {}
    for key, text in blocks:
        if key is not None:
            copies.setdefault(key, []).append(text)
    values: dict[str, str] = {}
    for key, texts in copies.items():
        changed = [text for text in texts if text != base_values.get(key)]
        values[key] = pick_version(changed or texts)
    return values


def _tokens(blocks: Sequence[Block]) -> list[_Token]:
    return [("k", key) if key is not None else ("t", text) for key, text in blocks]


def merge_keyed(
    base: Sequence[Block],
    ours: Sequence[Block],
    theirs: Sequence[Block],
    pick: Callable[[Iterable[str]], str] = pick_version,
) -> list[Block]:
    """Three-way merge of keyed blocks (index items, frontmatter keys); returns the merged blocks.

    The order comes from a symmetric diff3 of keys and keyless lines (where both sides inserted at one
    place, both insertions are kept, the smaller first); each key's text from a three-way on its value
    (a one-sided change wins, a deletion loses to a change, two different changes: ``pick`` of the two,
    which must not depend on their order; default :func:`pick_version`);
    one block per key at its first place; deleted keys dropped. Symmetric in ``ours``/``theirs``; never
    raises. Used by :mod:`memsync.merge` (DESIGN "Merge drivers", index and entry frontmatter).
    """
    base_values = _side_values(base, {})
    ours_values = _side_values(ours, base_values)
    theirs_values = _side_values(theirs, base_values)
    resolved = {
        key: _resolve_value(base_values.get(key), ours_values.get(key), theirs_values.get(key), pick)
        for key in base_values.keys() | ours_values.keys() | theirs_values.keys()
    }
    out: list[Block] = []
    placed: set[str] = set()
    for kind, value in _diff3(_tokens(base), _tokens(ours), _tokens(theirs)):
        if kind == "t":
            out.append((None, value))
            continue
        text = resolved.get(value)
        if text is not None and value not in placed:
            placed.add(value)
            out.append((value, text))
    # A key one side deleted and the other changed is kept; the order merge may have dropped its place.
    sides = sorted((_tokens(ours), _tokens(theirs)))
    for key in sorted(key for key, text in resolved.items() if text is not None and key not in placed):
        side = next(tokens for tokens in sides if ("k", key) in tokens)
        where = side.index(("k", key))
        before = [v for kind, v in side[:where] if kind == "k" and v in placed]
        after = [v for kind, v in side[where + 1 :] if kind == "k" and v in placed]
        at = len(out)
        if before:
            at = next(n for n, (k, _) in enumerate(out) if k == before[-1]) + 1
        elif after:
            at = next(n for n, (k, _) in enumerate(out) if k == after[0])
        out.insert(at, (key, resolved[key] or ""))
        placed.add(key)
    return out

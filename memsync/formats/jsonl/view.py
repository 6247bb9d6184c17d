"""The current view of a memory file (DESIGN "View semantics (agent-memory/0.1)"): later wins by
(``created_at``, canonical bytes), never by file position; a tombstone is final; superseded and expired
entries drop out; a user entry outranks inferred ones. And which entries a task's scope selects.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime

from memsync.formats.jsonl.records import Entry, Record, Tombstone


def winner_key(entry: Entry) -> tuple[bool, datetime, bytes]:
    """The order of the versions of one id: the person's word outranks an inferred rewrite; then later
    (``created_at``, canonical bytes) wins."""
    return entry.is_user, entry.created, entry.canonical


def _strongly_connected(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm without recursion (supersede chains can be long)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _superseded_ids(entries: Sequence[Entry], winners: Mapping[str, Entry]) -> set[str]:
    """Ids that some entry's ``supersedes`` removes from the view.

    Every entry line counts, whatever later happened to it (tombstone, expiry, a newer version), except:
    self-references; an inferred entry naming a user entry; and, in a cycle, the edges into the cycle's
    latest member by (created_at, id), which therefore survives.
    """
    edges: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        target = entry.supersedes
        if target is None or target == entry.id:
            continue
        victim = winners.get(target)
        if victim is not None and victim.is_user and not entry.is_user:
            continue
        edges[entry.id].add(target)

    def order(node: str) -> tuple[datetime, str]:
        # Every member of a cycle has an outgoing edge, so it is an entry id with a winner.
        return winners[node].created, node

    while True:
        cycles = [
            c
            for c in _strongly_connected(set(edges) | {t for ts in edges.values() for t in ts}, edges)
            if len(c) > 1
        ]
        if not cycles:
            break
        for cycle in cycles:
            latest = max(cycle, key=order)
            for member in cycle:
                edges[member].discard(latest)
    return {target for targets in edges.values() for target in targets}


def build_view(records: Iterable[Record], now: datetime) -> list[Entry]:
    """The current entries of a memory file at ``now`` (an aware datetime), sorted by (created_at, id).

    A tombstone is final for its id. Among versions of one id, a ``user`` version outranks an inferred one,
    then later (created_at, canonical bytes) wins: file position never matters, so every permutation of
    the records gives the same view. Superseded entries drop out (see :func:`_superseded_ids`); expired
    entries are skipped. DESIGN "View semantics (agent-memory/0.1)".
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)  # a naive clock is taken as UTC, like the file's timestamps
    tombstoned: set[str] = set()
    entries: list[Entry] = []
    for record in records:
        if isinstance(record, Tombstone):
            tombstoned.add(record.id)
        else:
            entries.append(record)
    winners: dict[str, Entry] = {}
    for entry in entries:
        current = winners.get(entry.id)
        if current is None or winner_key(entry) > winner_key(current):
            winners[entry.id] = entry
    superseded = _superseded_ids(entries, winners)
    live = [
        e
        for e in winners.values()
        if e.id not in tombstoned and e.id not in superseded and not e.expired(now)
    ]
    return sorted(live, key=lambda e: (e.created, e.id))


def supersede_forks(view: Sequence[Entry], records: Iterable[Record]) -> dict[str, tuple[Entry, ...]]:
    """The forks of a current ``view`` (:func:`build_view` of ``records``): each id that two or more of
    its live entries supersede, mapped to those entries in view order. Two machines that superseded one
    entry while apart leave both new entries live (spec ``seeds/000``), so the person must pick one. An
    entry supersedes its target directly, and through superseded entries of ``records`` (B replaced A,
    then D replaced B here while C replaced A there: D and C fork A). A target still live itself (an
    inferred entry naming a user entry, a cycle's survivor) was not superseded: no fork. Pure; never
    raises."""
    live = {entry.id for entry in view}
    # What each superseded entry superseded in turn, from every version of it (as ``_superseded_ids``).
    further: dict[str, set[str]] = defaultdict(set)
    for record in records:
        if isinstance(record, Entry) and record.supersedes is not None and record.id not in live:
            further[record.id].add(record.supersedes)
    by_target: dict[str, list[Entry]] = defaultdict(list)
    for entry in view:
        reached: set[str] = set()
        todo = [] if entry.supersedes is None else [entry.supersedes]
        while todo:
            target = todo.pop()
            if target == entry.id or target in live or target in reached:
                continue
            reached.add(target)
            todo.extend(further.get(target, ()))
        for target in reached:
            by_target[target].append(entry)
    return {target: tuple(entries) for target, entries in by_target.items() if len(entries) > 1}


def scope_matches(entry_scope: str, scope: str | None) -> bool:
    """Whether an entry with ``entry_scope`` applies to a task in ``scope``.

    ``None`` matches everything; ``global`` entries always apply; ``project:<name>`` matches that project
    exactly; a domain entry applies to that domain and its subdomains (``github.com`` applies to
    ``api.github.com``), compared case-insensitively. Spec ``seeds/000`` "Putting it in context".
    """
    if scope is None or entry_scope == "global":
        return True
    if entry_scope.startswith("project:") or scope.startswith("project:"):
        return entry_scope == scope
    domain, wanted = entry_scope.lower().rstrip("."), scope.lower().rstrip(".")
    return wanted == domain or wanted.endswith("." + domain)

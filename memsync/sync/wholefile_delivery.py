"""Deliver of whole files (DESIGN step 5, "Deletions", I5, I7): the live file is replaced atomically, or
deleted, only while it still equals the last synced version; bytes an agent wrote in the instant between
check and swap are kept in the sync state and published next cycle."""

from __future__ import annotations

import os

from memsync.base.fsio import TEMP_PREFIX
from memsync.base.layout import is_append_only, kind_of
from memsync.merge.kinds import merge_for_path
from memsync.sync import content, echoes
from memsync.sync.clashes import Clash
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import PendingDelivery, WholeState
from memsync.sync.reports import FileChange
from memsync.sync.settle import settle_delivery_whole
from memsync.sync.swap import replace_keeping
from memsync.sync.withheld import withhold


def deliver_whole(f: TrackFile, out: Collector) -> None:
    """Bring the store copy of the whole file ``f`` into the live file: create, replace or delete it when
    the live file is the last synced version (else it waits, ``out.waiting``). Raises ``OSError``."""
    state = out.state
    settle_delivery_whole(f, out)
    current = state.get_whole(f.rel)
    store = content.read(f.store, out.notices)
    if current is not None and current.in_sync and store == current.synced:
        return  # nothing new in the store: the live file need not be read
    live = content.read(f.live, out.notices)
    if current is None or not current.synced_known:
        if store is not None and live is None:
            _deliver_create(f, store, out, record=False)
        elif store is not None and live == store:
            state.put(WholeState.synced_as(f.rel, store))
        return
    if current.kept_present:
        out.waiting.append((f.rel, "a concurrent local edit waits to be published"))
        return
    if live != current.synced:
        if store is not None and live is not None and withhold(f, live, out) == current.synced:
            # The live index differs only by its lines for held-back files: they stay, the rest arrives.
            merged = merge_for_path(f.rel, current.synced or b"", store, live)
            _deliver_replace(f, current, store, out, expected=live, data=merged)
            return
        out.waiting.append((f.rel, "a local edit waits to be published"))
        return
    if f.live.is_symlink():
        out.waiting.append((f.rel, "the live file is a symlink; memsync does not replace it"))
        return
    if live is None and store is not None:
        _deliver_create(f, store, out)
    elif store is None:
        _deliver_remove(f, current, out)
    else:
        _deliver_replace(f, current, store, out)


def give_way(f: TrackFile, clash: Clash, out: Collector) -> bool:
    """Delete the live whole file ``f`` that ``clash`` names when it still equals its last synced version
    (a peer turned it into a directory: a deletion that syncs, DESIGN "Deletions"); True when it is gone.
    Raises ``OSError``."""
    state = out.state
    if clash.here != "file" or clash.path != f.rel or is_append_only(f.rel) or f.live.is_symlink():
        return False
    current = state.get_whole(f.rel)
    if (
        current is None
        or not current.in_sync
        or state.pending_delivery(f.rel) is not None
        or content.read(f.live, out.notices) != current.synced
    ):
        return False
    _deliver_remove(f, current, out)
    return not f.live.exists()


def _deliver_create(f: TrackFile, store: bytes, out: Collector, *, record: bool = True) -> None:
    """Create the missing live file (staged); ``record`` the intent unless a rerun would find live == store
    anyway."""
    state = out.state
    then = WholeState.synced_as(f.rel, store)
    if record:
        state.begin_delivery(f.rel, PendingDelivery(store, None, False, then), durable=False)

    def created(done: bool) -> None:
        if done:
            if record:
                state.finish_delivery(f.rel)
            else:
                state.put(then)
            echoes.note(f.live, len(store))
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "created"))
        else:
            if record:
                state.drop_delivery(f.rel)
            out.waiting.append((f.rel, "a local file appeared; it is published next cycle"))

    out.writes.add("create", f.live, store, created)


def _deliver_replace(
    f: TrackFile,
    current: WholeState,
    store: bytes,
    out: Collector,
    *,
    expected: bytes | None = None,
    data: bytes | None = None,
) -> None:
    """Replace the live file, found as ``expected`` (default: the last synced version), by ``data``
    (default: the store copy); the store copy becomes the last synced version."""
    state = out.state
    expected = current.synced if expected is None else expected
    data = store if data is None else data
    then = WholeState.synced_as(f.rel, store)
    state.begin_delivery(f.rel, PendingDelivery(data, None, False, then))
    try:
        replaced = replace_keeping(f.live, data)
    except FileNotFoundError:
        # The agent deleted the file in that instant: a local deletion, settled by the next publish.
        state.drop_delivery(f.rel)
        return
    if replaced != expected:
        out.warn(f"{f.live}: changed while memsync replaced it; the change is kept and published next cycle")
        then = then.keeping(replaced, expected)
    else:
        echoes.note(f.live, len(data))
    state.finish_delivery(f.rel, then)
    if then.kept_present:
        state.commit()  # the agent's bytes exist only in this record: durable now, not with the pass
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "replaced"))


def _deliver_remove(f: TrackFile, current: WholeState, out: Collector) -> None:
    """Delete the live file (a peer deleted it) unless an agent changed it in the last instant."""
    state = out.state
    then = WholeState.synced_as(f.rel, None)
    state.begin_delivery(f.rel, PendingDelivery(b"", None, True, then))
    aside = f.live.with_name(f"{TEMP_PREFIX}removed-{f.live.name}")
    try:
        os.rename(f.live, aside)
    except FileNotFoundError:
        state.finish_delivery(f.rel)
        return
    removed = content.read(aside, out.notices)
    if removed != current.synced:
        # An agent wrote in that instant: put its version back (unless a new file appeared) and keep it.
        out.warn(f"{f.live}: changed while memsync deleted it (a peer deleted it); the change is kept")
        try:
            os.link(aside, f.live)
        except FileExistsError:
            then = then.keeping(removed, current.synced)
        aside.unlink()
        state.finish_delivery(
            f.rel, then if then.kept_present else WholeState.synced_as(f.rel, current.synced)
        )
        if then.kept_present:
            state.commit()  # the agent's bytes exist only in this record: durable now, not with the pass
        return
    aside.unlink()
    state.finish_delivery(f.rel)
    out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "deleted"))

"""Publish of whole files (curated entries, ``MEMORY.md``): a three-way merge of (last synced, store, live)
with the file's merge driver, written atomically to the store (DESIGN step 2, "Deletions", I5, I6)."""

from __future__ import annotations

from memsync.base.layout import kind_of
from memsync.merge.kinds import merge_for_path
from memsync.secrets.files import scan_whole
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import HeldLine, PendingPublish, WholeState
from memsync.sync.reports import Action, FileChange
from memsync.sync.settle import settle_delivery_whole, settle_publish
from memsync.sync.withheld import withhold


def publish_whole(f: TrackFile, incremental: bool, out: Collector) -> None:
    """Publish the whole file ``f``: merge the live version into the store copy over the last synced one;
    a deletion here deletes the store copy when it still is the last synced version. Without
    ``incremental`` (reconcile) only a file with no known last synced version, or with kept bytes, is
    published. Flagged versions stay here (``out.held``). Raises ``OSError``."""
    state = out.state
    settle_publish(f, out)  # a whole-file merge is idempotent, so "by content" needs nothing more
    settle_delivery_whole(f, out)
    current = state.get_whole(f.rel)
    live = content.read(f.live, out.notices)
    if current is not None and current.in_sync and (not incremental or live == current.synced):
        return  # nothing to publish: the store copy need not be read
    # From here on "live" is what may leave this machine: an index without its lines for held-back files.
    live = withhold(f, live, out)
    if current is not None and current.in_sync and live == current.synced:
        return
    store = content.read(f.store, out.notices)
    if current is not None and current.kept_present:
        _publish_kept(f, current, store, out)
        return
    if current is None or not current.synced_known:
        if live is None:
            return
        if live == store:
            state.put(WholeState.synced_as(f.rel, live))
            return
        # First sight of both: git's add/add rule, a merge over an empty base.
        new = live if store is None else merge_for_path(f.rel, b"", store, live)
        _write_whole(f, current, live, store, new, out)
        return
    if live is None:
        if store == current.synced:
            _store_write(f, store, None, WholeState.synced_as(f.rel, None), out)
            out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "deleted"))
        else:
            # Deleted here, changed by a peer: the change is kept (DESIGN "Deletions"); deliver restores it.
            state.put(WholeState.synced_as(f.rel, None))
        return
    if store == current.synced or store is None:
        new = live  # also a peer's deletion of a file changed here: the change is kept
    else:
        new = merge_for_path(f.rel, current.synced or b"", store, live)
    _write_whole(f, current, live, store, new, out)


def _write_whole(
    f: TrackFile, current: WholeState | None, live: bytes, store: bytes | None, new: bytes, out: Collector
) -> None:
    """Scan ``live`` with the group's other files (``Writes.scan``); then put ``new`` into the store
    unless flagged; the last synced version becomes ``live``."""
    out.writes.scan(live, lambda finding: _write_scanned(f, current, live, store, new, finding, out))


def _write_scanned(
    f: TrackFile,
    current: WholeState | None,
    live: bytes,
    store: bytes | None,
    new: bytes,
    finding: tuple[int, str] | None,
    out: Collector,
) -> None:
    """``_write_whole`` once the scan of ``live`` found ``finding``."""
    if finding is not None:
        held = (HeldLine(*finding),)
        if current is None or current.held != held:  # report a held version once, status lists it
            out.state.put((current or WholeState(f.rel)).holding(held))
            out.report_held(f, held)
        return
    # With no state yet, a rerun after a crash finds live == store (or merges again): no intent needed.
    _store_write(
        f,
        store,
        new,
        WholeState.synced_as(f.rel, live),
        out,
        record=current is not None and current.synced_known,
    )
    if new != store:
        action: Action = "added" if store is None else "changed"
        out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), action))


def _publish_kept(f: TrackFile, current: WholeState, store: bytes | None, out: Collector) -> None:
    """Publish the bytes an agent wrote while deliver replaced the file (merged over their own base)."""
    kept = withhold(f, current.kept, out)
    done = current.kept_published()
    if kept is None:
        # The agent deleted the file in that instant; deliver already restored a version, nothing is lost.
        out.state.put(done)
        return
    finding = scan_whole(kept, out.allowed)
    if finding is not None:
        held = (HeldLine(*finding),)
        if current.held != held:
            out.state.put((current or WholeState(f.rel)).holding(held))
            out.report_held(f, held)
        return
    base = withhold(f, current.kept_base, out) or b""
    new = kept if store is None else merge_for_path(f.rel, base, store, kept)
    _store_write(f, store, new, done, out)
    if new != store:
        out.changes.append(FileChange(f.rel, f.label, kind_of(f.rel), "changed"))


def _store_write(
    f: TrackFile,
    before: bytes | None,
    after: bytes | None,
    then: WholeState,
    out: Collector,
    *,
    record: bool = True,
) -> None:
    """Replace (``after`` bytes) or delete (None) the store copy, recording the intent first (``record``;
    without it, that the path is written: ``SyncState.note_written``); the write is staged in
    ``out.writes`` and ``then`` becomes the state once it is done."""
    state = out.state
    if after == before:
        if state.get_whole(f.rel) != then:
            state.put(then)
        return
    if not record:
        state.note_written(f.rel)
    else:
        state.begin_publish(
            f.rel,
            PendingPublish(
                content.digest_of(before),
                -1 if before is None else len(before),
                content.digest_of(after),
                -1 if after is None else len(after),
                then,
            ),
            durable=False,
        )

    def written(_: bool) -> None:
        if record:
            state.finish_publish(f.rel)
        else:
            state.put(then)

    out.writes.add("remove" if after is None else "replace", f.store, after or b"", written, like=f.live)

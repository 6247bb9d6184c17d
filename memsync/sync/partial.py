"""An unfinished last line of an append-only live file: withheld from publish until it ends, or ended by
memsync once it stood unchanged past the grace period (DESIGN I2: no torn line)."""

from __future__ import annotations

from memsync.fsio import append_once, writer_lock
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import FileState, Partial, digest


def finish_partial(
    f: TrackFile, current: FileState | None, live: bytes, now: float, grace_s: float, out: Collector
) -> tuple[bytes, Partial, tuple[int, int] | None]:
    """Withhold an unfinished last line; past the grace period (``grace_s`` seconds by the clock ``now``)
    end it with a newline in the live file. In a file truncated in place, a last line that begins a line
    of the store copy is what the truncation cut: it is ended with the rest of that line instead, so no
    fragment becomes a line.

    Returns the live bytes to publish from, the unfinished line to record, and the byte range of a line
    completed from the store (None for none), which the store has already. Raises ``OSError``.
    """
    end = len(content.complete(live))
    partial = live[end:]
    if not partial:
        return live, Partial(), None
    partial_hash = digest(partial)
    same = current is not None and current.partial_at == end and current.partial_hash == partial_hash
    since = now
    if same and current is not None and current.partial_since is not None:
        since = current.partial_since
    if now - since < grace_s:
        return live, Partial(end, partial_hash, since), None
    ending = b"\n"
    if current is not None and current.rewritten_since is not None:
        # Only a file truncated in place can end in a cut line: only then is the store copy read.
        ending = next(
            (
                line[len(partial) :]
                for line in content.split(out.read(f.store) or b"")
                if line.startswith(partial) and line.endswith(b"\n")
            ),
            b"\n",
        )
    with writer_lock(f.live):
        now_bytes = out.read(f.live)
        # Only if nobody finished or extended the line meanwhile.
        if now_bytes is None or len(now_bytes) != len(live) or now_bytes[end:] != partial:
            return live, Partial(end, partial_hash, since), None
        append_once(f.live, ending)
    line_no = live.count(b"\n") + 1
    if ending == b"\n":
        out.warn(
            f"{f.live}: line {line_no} had no newline for {grace_s:g} s; memsync ended it "
            "and published it as it is (a malformed line if it is incomplete)"
        )
        return live + ending, Partial(), None
    out.warn(f"{f.live}: line {line_no} was cut by a truncation; memsync completed it from the store")
    return live + ending, Partial(), (end, len(live) + len(ending))

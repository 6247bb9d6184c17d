"""An unfinished last line of an append-only live file: withheld from publish until it ends, or ended by
memsync once it stood unchanged past the grace period (DESIGN I2: no torn line)."""

from __future__ import annotations

from memsync.base.fsio import append_once, read_range, writer_lock
from memsync.sync import content
from memsync.sync.collector import Collector
from memsync.sync.files import TrackFile
from memsync.sync.records import AppendState, Partial, digest


def finish_partial(
    f: TrackFile, current: AppendState | None, end: int, size: int, now: float, grace_s: float, out: Collector
) -> tuple[int, Partial, tuple[int, int] | None]:
    """Withhold the unfinished last line of the live file (``size`` bytes, complete lines up to ``end``);
    past the grace period (``grace_s`` seconds by the clock ``now``) end it with a newline in the live
    file. In a file truncated in place, a last line that begins a line of the store copy is what the
    truncation cut: it is ended with the rest of that line instead, so no fragment becomes a line.

    Returns the end of the complete lines to publish from, the unfinished line to record, and the byte
    range of a line completed from the store (None for none), which the store has already. Reads only
    the unfinished line (and, to number it in a warning, counts the file's lines). Raises ``OSError``.
    """
    if end == size:
        return end, Partial(), None
    partial = read_range(f.live, end, size)
    partial_hash = digest(partial)
    same = current is not None and current.partial_at == end and current.partial_hash == partial_hash
    since = now
    if same and current is not None and current.partial_since is not None:
        since = current.partial_since
    if now - since < grace_s:
        return end, Partial(end, partial_hash, since), None
    ending = b"\n"
    if current is not None and current.rewritten_since is not None:
        # Only a file truncated in place can end in a cut line: only then is the store copy read.
        ending = next(
            (
                line[len(partial) :]
                for line in content.split(content.read(f.store, out.notices) or b"")
                if line.startswith(partial) and line.endswith(b"\n")
            ),
            b"\n",
        )
    with writer_lock(f.live):
        # Only if nobody finished or extended the line meanwhile.
        if content.size(f.live) != size or read_range(f.live, end, size + 1) != partial:
            return end, Partial(end, partial_hash, since), None
        append_once(f.live, ending)
    line_no = content.count_lines(f.live, end) + 1
    done = size + len(ending)
    if ending == b"\n":
        out.warn(
            f"{f.live}: line {line_no} had no newline for {grace_s:g} s; memsync ended it "
            "and published it as it is (a malformed line if it is incomplete)"
        )
        return done, Partial(), None
    out.warn(f"{f.live}: line {line_no} was cut by a truncation; memsync completed it from the store")
    return done, Partial(), (end, done)

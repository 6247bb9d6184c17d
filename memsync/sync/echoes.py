"""The echoes of memsync's own deliveries: a live file memsync wrote raises watch events like an agent's
write would, and a cycle run for them finds nothing to publish (DESIGN "One sync cycle" step 1).

A delivery notes the file it wrote with the size it must have now; the note keeps the file's identity
and times only when the file is exactly that size (no agent appended around the write). Before the
daemon runs a cycle for changed paths, it drops those whose file is still exactly as noted: any later
write (an append, a rewrite, a rename onto it) changes the size, the inode or the modification time.
Process-wide and thread-safe: deliveries run in the daemon's worker threads, the check on its main one.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

# Notes kept at most (the oldest go first); beyond it an echo costs a cycle, never a missed change.
MAX_NOTES = 4096

_Stamp = tuple[int, int, int, int, int]

_lock = threading.Lock()
_notes: dict[str, _Stamp] = {}


def _stamp(path: str) -> _Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def note(path: Path, size: int) -> None:
    """Record that memsync just wrote the live file ``path``, which must now be ``size`` bytes long: its
    stat is kept when it is, forgotten otherwise (someone else wrote too: their events count). Never
    raises."""
    key = os.path.realpath(path)
    stamp = _stamp(key)
    with _lock:
        _notes.pop(key, None)
        if stamp is None or stamp[2] != size:
            return
        _notes[key] = stamp
        while len(_notes) > MAX_NOTES:
            del _notes[next(iter(_notes))]


def is_echo(path: Path) -> bool:
    """True when the live file ``path`` is exactly as memsync's last write to it left it (same file,
    size and times), so its watch events were that write's own. Never raises."""
    key = os.path.realpath(path)
    with _lock:
        noted = _notes.get(key)
    return noted is not None and _stamp(key) == noted

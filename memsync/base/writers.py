"""Who holds a live file open for writing: the processes memsync must not append under.

An append-only file is safe to append to while agents append to it too (every writer's ``O_APPEND``
write lands at the end). A process that opened it for writing *without* ``O_APPEND`` writes at its own
file position, so anything appended meanwhile can be overwritten into a torn line (DESIGN I2, I5):
deliver waits while such a writer holds the file open. psutil reads the open files and their flags
(``/proc`` on Linux); where a platform does not report flags, callers cannot tell.
"""

from __future__ import annotations

import os

import psutil


def positional_writers() -> frozenset[str] | None:
    """The real paths of the files some process holds open for writing at its own file position (opened
    writable without ``O_APPEND``), or None where the platform does not report open flags.

    Only the processes this user may inspect are seen (agents run as the user). Takes about 0.2 ms per
    process. Raises nothing: processes that exit or deny access meanwhile are skipped.
    """
    held: set[str] = set()
    told = False
    for process in psutil.process_iter():
        try:
            opened = process.open_files()
        except psutil.Error:
            continue
        for handle in opened:
            flags = getattr(handle, "flags", None)
            if flags is None:
                continue
            told = True
            if flags & (os.O_WRONLY | os.O_RDWR) and not flags & os.O_APPEND:
                held.add(handle.path)
    return frozenset(held) if told else None

"""The git runner feeds a long stdin whole, however long git takes to read it (``memsync.base.git``): git
that starts reading only after the runner's first poll, given more than a pipe holds (64 KiB), still gets
all of it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from memsync.base import git


def test_a_stdin_longer_than_a_poll_reaches_git_whole(tmp_path: Path) -> None:
    # ~790 KB, far more than a pipe holds: most of it is written after the runner's first poll.
    data = b"".join(b"line %d\n" % n for n in range(100_000))
    # The alias makes git read its stdin only once a few polls have passed, however fast the machine is.
    late = f"alias.late=!sleep {git.POLL_S * 3} && git hash-object --stdin"
    result = git.run(["-c", late, "late"], cwd=tmp_path, timeout=120, stdin=data)
    assert result.ok, result.err
    assert result.out.strip() == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

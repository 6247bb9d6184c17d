"""What a process has warned about already: a clash or an odd file stays in every cycle's report, but is
logged once per process. The caller that lives as long as the process (the cycle) owns one and passes it
to every pass."""

from __future__ import annotations

from collections.abc import Hashable


class Notices:
    """The keys (a ``Clash``, a path that is not a regular file) already warned about in this process."""

    def __init__(self) -> None:
        self._seen: set[Hashable] = set()

    def first(self, key: Hashable) -> bool:
        """True the first time ``key`` is given (warn now), False after that."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

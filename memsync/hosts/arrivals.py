"""Agent hosts installed while memsync runs: a host whose config folder appears (``registry.found``) and
that memsync is not connected to is named once, with the command that connects it (the daemon logs it;
`memsync connect --status`, `status` and `doctor` name hosts on request)."""

from __future__ import annotations

from memsync.errors import MemsyncError
from memsync.hosts import mcp_install, registry


class Arrivals:
    """The hosts found so far; :meth:`new` tells the ones found since, once each."""

    def __init__(self) -> None:
        self._seen = {host for host in registry.NAMES if registry.found(host)}

    def new(self) -> list[str]:
        """One line per host found since the last call (or since this was made) that memsync is not
        connected to: where it appeared and the command that connects it. A host is named once, even
        if it goes and comes back. Reads a few directory entries and those hosts' config files; never
        raises."""
        lines: list[str] = []
        for host in registry.NAMES:
            if host in self._seen or not registry.found(host):
                continue
            self._seen.add(host)
            try:
                connected = mcp_install.registered(host) is not None
            except MemsyncError:  # a file the host is still writing: name it anyway
                connected = False
            if not connected:
                where = registry.user_file(host).parent
                lines.append(f"agent host {host} found ({where}): run `memsync connect {host}` to connect it")
        return lines

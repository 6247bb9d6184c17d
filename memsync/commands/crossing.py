"""Memory moved from one store into another (DESIGN "Vocabulary": nothing reaches a team remote that the
user did not map to it): a handoff between agents of two stores, a track taking a path another store
already synced, an MCP remember or handoff into memory another store syncs. When the receiving store
syncs with remotes the giving one does not, the move waits for the user's say (`--yes`; the MCP tools'
``store`` argument)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memsync.base.remote_url import redacted
from memsync.config.file import PERSONAL_STORE, Config
from memsync.errors import MemsyncError
from memsync.tracks.tracked import locate


@dataclass(frozen=True)
class Crossing:
    """Memory of store ``source`` about to enter store ``target``, whose ``remotes`` (name -> URL) are
    not all the source's: they receive it on the next sync."""

    source: str
    target: str
    remotes: Mapping[str, str]

    def receivers(self) -> str:
        """``store team (origin URL, ...)``: who receives the memory."""
        listed = ", ".join(f"{name} {redacted(url)}" for name, url in self.remotes.items())
        return f"store {self.target} (remote {listed})"

    def refusal(self, what: str, consent: str) -> MemsyncError:
        """The one-line refusal of ``what`` (e.g. ``handoff qa -> reviewer``) until ``consent`` is given."""
        return MemsyncError(
            f"{what}: would copy memory of store {self.source} into {self.receivers()}, which the "
            f"source does not sync with; nothing was written. Run it again with {consent} if that "
            "remote should receive it"
        )


def personal_store(config: Config | None) -> str | None:
    """The store an agent's own memory belongs to: the one named ``personal``, else the first the config
    lists (the one ``init`` made, whatever its name); None without a store."""
    if config is None or not config.stores:
        return None
    return PERSONAL_STORE if PERSONAL_STORE in config.stores else next(iter(config.stores))


def crossing(config: Config | None, source_store: str | None, target: Path) -> Crossing | None:
    """The crossing that writing memory of ``source_store`` (None: memory no store syncs) into the live
    path ``target`` makes, or None when it makes none: ``target`` is in no store, in the source's, or in
    a store with no remote beyond the source's (the same URLs). Reads the config only."""
    found = locate(config, target)
    if config is None or source_store is None or found is None:
        return None
    return between(config, source_store, found[0])


def between(config: Config, source_store: str, target_store: str) -> Crossing | None:
    """The crossing of memory of store ``source_store`` into store ``target_store`` of ``config``, None
    when the target has no remote beyond the source's (the same URLs) or is the source."""
    if source_store == target_store:
        return None
    given = config.stores.get(source_store)
    theirs = set(given.remotes.values()) if given is not None else set()
    new = {name: url for name, url in config.stores[target_store].remotes.items() if url not in theirs}
    return Crossing(source_store, target_store, new) if new else None


def handed_crossing(
    config: Config | None, source: Path, target: Path, what: str, consent: str, given: bool | str
) -> Crossing | None:
    """The crossing of memory moved from the live path ``source`` into ``target`` (see ``crossing``), None
    when there is none. Raises its refusal (``what``, ``consent``) unless ``given`` (see ``check``)."""
    found = locate(config, source)
    return check(crossing(config, None if found is None else found[0], target), what, consent, given)


def check(moved: Crossing | None, what: str, consent: str, given: bool | str | None) -> Crossing | None:
    """``moved`` when the user said yes: ``given`` True, or the name of the receiving store (the MCP
    tools' ``store`` argument); None when nothing crosses. Raises ``moved``'s one-line refusal of
    ``what`` (asking for ``consent``) as ``MemsyncError`` otherwise."""
    if moved is not None and given is not True and given != moved.target:
        raise moved.refusal(what, consent)
    return moved

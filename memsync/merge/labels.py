"""Who wrote each of the two versions an entry merge keeps (DESIGN "Merge drivers", entry): a host and a
time, ``alice-laptop at 2026-12-03 12:24:07 UTC``.

git gives a merge driver no commit data, so where memsync merges or rebases a store it names the host and
author time of the two sides' commits in environment variables (:func:`side_variables`), which git passes
on to the driver (:func:`labels_from`). The time is UTC, so every peer writes the same label for one
commit, and a label travels with its version's content, never with a side: both merge directions write
the same bytes (I4). Imports only ``time`` (a built-in module): the driver starts with this module.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at the driver's start
if TYPE_CHECKING:
    from collections.abc import Mapping

OURS = "OURS"
"""The side git passes as ``%A``: the branch's own commit in a merge, the remote's in a rebase."""
THEIRS = "THEIRS"
"""The side git passes as ``%B``."""
LABEL_TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
"""How a label writes its time (``time.strftime``/``datetime.strptime``), always in UTC."""
_AT = " at "
# A host name comes from a peer's commit: one line of printable characters, bounded.
_HOST_CHARS = 64


def _variables(side: str) -> tuple[str, str]:
    return f"MEMSYNC_{side}_HOST", f"MEMSYNC_{side}_TIME"


def _clean_host(host: str) -> str:
    kept = "".join(char if char.isprintable() else "?" for char in host.strip())
    return kept[:_HOST_CHARS] or "?"


def side_variables(side: str, host: str, when: int) -> dict[str, str]:
    """The environment variables telling the entry driver that side ``side`` (:data:`OURS` or
    :data:`THEIRS`) was written on ``host`` (a peer's text: made one printable line of at most 64
    characters) at ``when`` (Unix seconds)."""
    host_variable, time_variable = _variables(side)
    return {host_variable: _clean_host(host), time_variable: str(int(when))}


def _label(environ: Mapping[str, str], side: str) -> str | None:
    host_variable, time_variable = _variables(side)
    host, when = environ.get(host_variable), environ.get(time_variable, "")
    if not host or not when.isdigit():
        return None
    return f"{_clean_host(host)}{_AT}{time.strftime(LABEL_TIME_FORMAT, time.gmtime(int(when)))}"


def labels_from(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The labels (``HOST at TIME``) of the ours and theirs sides that :func:`side_variables` put in
    ``environ``; None for a side not named there (a merge memsync did not start). Never raises."""
    return _label(environ, OURS), _label(environ, THEIRS)


def split_label(label: str) -> tuple[str, str] | None:
    """A label's host and time text (in :data:`LABEL_TIME_FORMAT`), None when ``label`` is not one."""
    host, at, when = label.rpartition(_AT)
    if not at or not host or not when.endswith(" UTC"):
        return None
    return host, when

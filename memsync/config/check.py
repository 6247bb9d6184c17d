"""The checks of a config file's values, each raising a one-line error that names the key at fault
(the ``MemsyncError`` form: "<what failed>: <why>. <what to do>")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memsync.base.layout import host_problem
from memsync.base.remote_url import PLAIN_NAME, name_problem, url_problem
from memsync.errors import MemsyncError


class Checker:
    """Type checks that raise one-line errors naming the key: and the file ``path`` when it is at fault,
    or, for a change not written yet (``change``), the change. ``known``: the keys each table may hold
    (``config.KNOWN_KEYS``)."""

    def __init__(self, path: Path, known: Mapping[str, frozenset[str]], *, change: bool = False) -> None:
        self.path = path
        self.known = known
        self.change = change

    def fail(self, key: str, why: str) -> MemsyncError:
        """The error for ``key``, wrong because ``why``."""
        if self.change:
            return MemsyncError(f"cannot change the config: `{key}` {why}. Nothing was written")
        return MemsyncError(f"invalid config {self.path}: `{key}` {why}. Edit the file and try again")

    def string(self, value: object, key: str) -> str:
        """``value`` as a non-empty string. Raises ``MemsyncError`` naming ``key`` otherwise."""
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string (got {value!r})")
        return value

    def host(self, value: object, key: str) -> str:
        """``value`` as a host name (``layout.host_problem``). Raises ``MemsyncError`` naming ``key``
        otherwise."""
        text = self.string(value, key)
        why = host_problem(text)
        if why is not None:
            raise self.fail(key, f"= {text!r}: {why}")
        return text

    def table(self, value: object, key: str) -> dict[str, Any]:
        """``value`` as a table. Raises ``MemsyncError`` naming ``key`` otherwise."""
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table (got {value!r})")
        return value

    def seconds(self, value: object, key: str) -> float:
        """``value`` as a positive number of seconds. Raises ``MemsyncError`` naming ``key`` otherwise."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise self.fail(key, f"must be a positive number of seconds (got {value!r})")
        return float(value)

    def name(self, value: str, key: str) -> str:
        """``value`` when it is a plain name (``remote_url.PLAIN_NAME``). Raises ``MemsyncError`` naming
        ``key`` otherwise."""
        if not PLAIN_NAME.match(value):
            raise self.fail(key, "must be a plain name (letters, digits, '.', '_', '-')")
        return value

    def unknown(self, table: Mapping[str, Any], kind: str, where: str) -> None:
        """Refuse a key of ``table`` that ``known[kind]`` lacks; ``where`` names the table."""
        allowed = self.known[kind]
        for key in table:
            if key not in allowed:
                place = f"in table [{where}]" if where else "at the top level"
                known = ", ".join(sorted(allowed))
                raise self.fail(
                    f"{where + '.' if where else ''}{key}", f"is not a known key {place} (known: {known})"
                )

    def remote(self, name: str, url: object, key: str) -> str:
        """The URL ``url`` of remote ``name``, both checked (``remote_url``). Raises ``MemsyncError``
        naming ``key`` otherwise."""
        text = self.string(url, key)
        why = name_problem(name) or url_problem(text)
        if why is None:
            return text
        if name in self.known[""] or name in self.known["author"]:
            why += f" (`{name}` looks like a setting: top-level keys go before the first [table])"
        raise self.fail(key, f"= {text!r}: {why}")

"""The member a device about to join an encrypted remote expects to find there: the verification code a
person read off a member's screen (`memsync join URL --member CODE`), kept beside the device key: the
device's first read of that remote takes the bundle it starts from only when that member signed it.
"""

from __future__ import annotations

from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.crypt.keys import key_path

_FILE = "expected-members"


def path() -> Path:
    """The file that keeps the expected members (one ``URL<TAB>code`` line each), beside the device key."""
    return key_path().parent / _FILE


def expect(url: str, code: str) -> None:
    """Record that the first read of the remote at ``url`` must start from a bundle signed by the member
    whose device id is ``code`` (replacing what was expected there). Raises ``OSError``."""
    kept = {u: c for u, c in _read().items() if u != url}
    kept[url] = code
    atomic_write(path(), "".join(f"{u}\t{c}\n" for u, c in kept.items()).encode(), mode=0o600)


def expected(url: str) -> str | None:
    """The device id of the member expected at ``url``, None when none was given."""
    return _read().get(url)


def _read() -> dict[str, str]:
    try:
        lines = path().read_text().splitlines()
    except FileNotFoundError:
        return {}
    return dict(line.split("\t", 1) for line in lines if "\t" in line)

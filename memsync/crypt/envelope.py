"""The sealed form of one payload (a git bundle) on an encrypted remote.

Inside age's encryption (X25519 or ssh-ed25519 stanzas, ChaCha20-Poly1305 payload: a changed or cut byte
fails authentication) the plaintext is ``MAGIC``, a format byte, the payload's length (8 bytes) and the
payload, padded with zeros to a size bucket (the next power of two, at least ``MIN_BUCKET``), so the
remote learns the size of a change only to within a factor of two.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyrage
from pyrage import x25519

from memsync.crypt.keys import parse
from memsync.errors import MemsyncError

MAGIC = b"memsync-sealed\n"
FORMAT = 1
# The smallest bucket (bytes): a one-entry change (a thin bundle of a few hundred bytes) fits in it.
MIN_BUCKET = 1024
_HEAD = len(MAGIC) + 1 + 8


def bucket(size: int) -> int:
    """The padded size of ``size`` plaintext bytes: the next power of two, at least ``MIN_BUCKET``."""
    return max(MIN_BUCKET, 1 << max(size - 1, 0).bit_length())


def seal(payload: bytes, recipients: Sequence[str]) -> bytes:
    """``payload`` encrypted for every recipient (canonical forms), padded. Raises ``MemsyncError`` when
    there is no recipient or one is not a public key."""
    if not recipients:
        raise MemsyncError("cannot encrypt: no recipient. Add this device's key with `memsync key add`")
    plain = MAGIC + bytes([FORMAT]) + len(payload).to_bytes(8, "big") + payload
    plain += bytes(bucket(len(plain)) - len(plain))
    return pyrage.encrypt(plain, [parse(text) for text in recipients])


def unseal(data: bytes, identities: Sequence[x25519.Identity]) -> bytes:
    """The payload sealed in ``data`` (peer content: any bytes) for one of ``identities``. Raises
    ``MemsyncError`` saying why it cannot be read: not sealed for this device's keys, damaged (changed
    or cut), not memsync's, or of a newer format."""
    try:
        plain = pyrage.decrypt(data, list(identities))
    except pyrage.DecryptError as exc:
        if "No matching keys" in str(exc):
            raise MemsyncError("not encrypted for this device's key") from None
        raise MemsyncError("damaged: changed or cut short after it was written") from None
    if not plain.startswith(MAGIC) or len(plain) < _HEAD:
        raise MemsyncError("not a memsync ciphertext")
    if plain[len(MAGIC)] != FORMAT:
        raise MemsyncError(f"format {plain[len(MAGIC)]} is newer than this memsync's ({FORMAT}): upgrade")
    size = int.from_bytes(plain[len(MAGIC) + 1 : _HEAD], "big")
    if _HEAD + size > len(plain) or any(plain[_HEAD + size :]):
        raise MemsyncError("not a memsync ciphertext (bad length or padding)")
    return plain[_HEAD : _HEAD + size]

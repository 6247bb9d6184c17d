"""The sealed form of one payload (a git bundle) on an encrypted remote, signed by the device that sealed it.

Inside age's encryption (X25519 or ssh-ed25519 stanzas, ChaCha20-Poly1305 payload: a changed or cut byte
fails authentication) the plaintext is ``MAGIC``, a format byte, the body's length (8 bytes) and the
body, padded with zeros to a size bucket (the next power of two, at least ``MIN_BUCKET``), so the
remote learns the size of a change only to within a factor of two. The body (format 2) is an Ed25519
signature (64 bytes) over the record that follows it and the ciphertext commit the bundle goes on top
of (so a member's bundle replayed elsewhere on the branch does not verify): the signer's keys, the
member list (``members``; empty when it does not change it) and the payload. Signed inside the
encryption, so the remote never learns who signed. Age alone is anonymous: anyone holding the members'
public keys can seal for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyrage
from cryptography.exceptions import InvalidSignature
from pyrage import x25519

from memsync.crypt import keys
from memsync.crypt.keys import parse
from memsync.crypt.members import Member
from memsync.errors import MemsyncError

MAGIC = b"memsync-sealed\n"
FORMAT = 2
# The format before bundles were signed: read only to say why it is refused.
UNSIGNED = 1
_SIGNED = b"memsync-signed-bundle\n"
_SIGNATURE = 64
# The smallest bucket (bytes): a one-entry change (a thin bundle of a few hundred bytes, about 700 bytes
# signed) fits in it; the next is 1 KiB, then powers of two. Against a 1 KiB floor it saves a quarter of
# the remote's bytes per small push, and tells the host only whether a push was below 768 bytes.
MIN_BUCKET = 768
_HEAD = len(MAGIC) + 1 + 8


def bucket(size: int) -> int:
    """The padded size of ``size`` plaintext bytes: ``MIN_BUCKET`` when it fits, else the next power of
    two."""
    return MIN_BUCKET if size <= MIN_BUCKET else 1 << (size - 1).bit_length()


@dataclass(frozen=True)
class Opened:
    """What a sealed bundle holds: its ``payload``; for a signed one (format 2) its ``signer`` (the keys
    it names), the ``members`` list it carries (serialized), its ``signature`` and the signed ``record``."""

    payload: bytes
    signer: Member | None = None
    members: bytes = b""
    signature: bytes = b""
    record: bytes = b""

    def verify(self, parent: str | None) -> bool:
        """True when the signature is the signer's over this record on top of the ciphertext commit
        ``parent`` (None: the branch's first); False for an unsigned bundle or a forged, moved one."""
        if self.signer is None or self.signer.signing is None:
            return False
        try:
            keys.verifier(self.signer.signing).verify(self.signature, _message(parent, self.record))
        except (InvalidSignature, MemsyncError):
            return False
        return True


def seal(
    payload: bytes,
    recipients: Sequence[str],
    *,
    identity: x25519.Identity,
    members: bytes,
    parent: str | None,
) -> bytes:
    """``payload`` and the serialized ``members`` (b"": unchanged) signed by ``identity``'s device for
    the place on top of ciphertext commit ``parent``, encrypted for every recipient (canonical forms),
    padded. Raises ``MemsyncError`` when there is no recipient or one is not a public key."""
    if not recipients:
        raise MemsyncError("cannot encrypt: no recipient. Add this device's key with `memsync key add`")
    signer = f"{keys.public_key(identity)}\t{keys.signing_public(identity)}".encode()
    record = b"".join(
        [len(signer).to_bytes(2, "big"), signer, len(members).to_bytes(4, "big"), members, payload]
    )
    body = keys.signing_key(identity).sign(_message(parent, record)) + record
    plain = MAGIC + bytes([FORMAT]) + len(body).to_bytes(8, "big") + body
    plain += bytes(bucket(len(plain)) - len(plain))
    return pyrage.encrypt(plain, [parse(text) for text in recipients])


def unseal(data: bytes, identities: Sequence[x25519.Identity]) -> Opened:
    """What ``data`` (peer content: any bytes) holds, decrypted with one of ``identities``; its
    signature is not checked yet (``Opened.verify``, against the members before it). Raises
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
    version = plain[len(MAGIC)]
    if version > FORMAT:
        raise MemsyncError(f"format {version} is newer than this memsync's ({FORMAT}): upgrade")
    size = int.from_bytes(plain[len(MAGIC) + 1 : _HEAD], "big")
    if version not in (UNSIGNED, FORMAT) or _HEAD + size > len(plain) or any(plain[_HEAD + size :]):
        raise MemsyncError("not a memsync ciphertext (bad format, length or padding)")
    body = plain[_HEAD : _HEAD + size]
    return Opened(body) if version == UNSIGNED else _signed(body)


def _signed(body: bytes) -> Opened:
    """The parts of a signed body. Raises ``MemsyncError`` when they do not add up."""
    signature, record = body[:_SIGNATURE], body[_SIGNATURE:]
    at = 2 + int.from_bytes(record[:2], "big")
    signer = record[2:at].decode("utf-8", "replace").split("\t")
    listed = int.from_bytes(record[at : at + 4], "big")
    if len(signature) < _SIGNATURE or len(signer) != 2 or len(record) < at + 4 + listed:
        raise MemsyncError("not a memsync ciphertext (bad signed record)")
    members = record[at + 4 : at + 4 + listed]
    return Opened(record[at + 4 + listed :], Member(*signer), members, signature, record)


def _message(parent: str | None, record: bytes) -> bytes:
    """What a signature covers: the record, and where on the branch it goes."""
    return _SIGNED + (parent or "").encode() + b"\n" + record

"""A removal notice: what a member that removes a device from an encrypted remote seals for that device
alone, so it is told instead of seeing only bundles it cannot read.

It is sealed and signed like a bundle (``envelope``) on top of the ciphertext commit that removed the
device (the signature covers that place, so a notice replayed elsewhere on the branch does not verify),
and lands in the smallest size bucket like a one-entry change. Its payload names the removed recipient;
the signer's device id, inside the signature, says who removed it.
"""

from __future__ import annotations

_HEADER = b"memsync-removal-notice 1\n"


def notice(recipient: str) -> bytes:
    """The payload of a notice that the device with ``recipient`` (canonical form) was removed."""
    return _HEADER + recipient.encode() + b"\n"


def removed(payload: bytes) -> str | None:
    """The recipient the notice ``payload`` (peer content: any bytes) names, None when it is not a
    notice (a git bundle)."""
    if not payload.startswith(_HEADER):
        return None
    return payload[len(_HEADER) :].decode("utf-8", "replace").strip()

"""This device's age key pair, its signing key, and the recipients an encrypted remote is sealed for.

The device key is an age X25519 identity kept 0600 beside memsync's config; it never leaves the machine
but through ``memsync key export`` (passphrase-protected). The device's Ed25519 signing key is derived
from it (so export, import and rotation carry both at once); its public form is ``ed25519:<base64>``. A
recipient is an age public key (``age1...``) or an ssh-ed25519 public key; its comment (often
``user@host``) is dropped, since recipients travel in the member list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from pathlib import Path

import pyrage
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pyrage import ssh, x25519

from memsync.base.fsio import atomic_write, create_exclusive
from memsync.base.paths import config_path
from memsync.errors import MemsyncError

KEY_FILE = "device.key"
SIGNING_PREFIX = "ed25519:"
# Domain separation: the signing seed is a hash of the age secret that no other use of it produces.
_SIGNING_DOMAIN = b"memsync device signing key\0"
Recipient = x25519.Recipient | ssh.Recipient


def key_path() -> Path:
    """Where this device's secret key lives: beside the config file."""
    return config_path().parent / KEY_FILE


def device_keys(*, create: bool) -> list[x25519.Identity]:
    """This device's identities, one a line of its key file: the first is the one it seals as, the others
    (a rotation underway) still open what was sealed for them. With ``create`` a new key is made (0600)
    when there is none. Raises ``MemsyncError`` when there is none (and not ``create``) or a line is not
    an age key."""
    path = key_path()
    if create and not path.exists():
        fresh = x25519.Identity.generate()
        create_exclusive(path, f"{fresh}\n".encode(), mode=0o600)  # False: another process made one first
    try:
        lines = path.read_text().split()
    except FileNotFoundError:
        raise MemsyncError(
            f"no device key: {path} does not exist, so this device cannot read an encrypted remote. "
            "Run `memsync join URL` (or restore a `memsync key export` backup with `memsync key import`)"
        ) from None
    if not lines:
        raise MemsyncError(f"device key {path} is empty. Restore it from a `memsync key export` backup")
    return [identity(line, f"device key {path}") for line in lines]


def device_key(*, create: bool) -> x25519.Identity:
    """This device's identity, the one it seals as (``device_keys``). Raises ``MemsyncError``."""
    return device_keys(create=create)[0]


def save_keys(identities: list[x25519.Identity]) -> None:
    """Replace this device's key file (0600, atomically) with ``identities``, the first the one it seals
    as. Raises ``OSError``."""
    atomic_write(key_path(), "".join(f"{each}\n" for each in identities).encode(), mode=0o600)


def identity(text: str, what: str) -> x25519.Identity:
    """The age identity ``text`` (``AGE-SECRET-KEY-1...``) of ``what`` (words for where it came from).
    Raises ``MemsyncError`` when it is not one."""
    try:
        return x25519.Identity.from_str(text)
    except pyrage.IdentityError:
        raise MemsyncError(
            f"{what} is not an age secret key. Restore it from a `memsync key export` backup"
        ) from None


def public_key(identity: x25519.Identity) -> str:
    """The public key (``age1...``) of ``identity``."""
    return str(identity.to_public())


def normalized(text: str) -> str:
    """The canonical form of a recipient: an age public key, or ``ssh-ed25519 <key>`` without its
    comment. Raises ``MemsyncError`` when ``text`` is neither."""
    fields = text.split()
    canonical = " ".join(fields[:2]) if fields[:1] == ["ssh-ed25519"] else " ".join(fields[:1])
    parse(canonical)
    return canonical


def parse(text: str) -> Recipient:
    """The recipient ``text`` names (canonical form). Raises ``MemsyncError`` when it is not an age or
    ssh-ed25519 public key."""
    try:
        if text.startswith("ssh-ed25519 "):
            return ssh.Recipient.from_str(text)
        return x25519.Recipient.from_str(text)
    except pyrage.RecipientError:
        raise MemsyncError(
            f"not a public key: {text[:40]!r}. Give an age public key (age1...) or an ssh-ed25519 key"
        ) from None


def signing_key(identity: x25519.Identity) -> Ed25519PrivateKey:
    """The Ed25519 key ``identity``'s device signs its sealed bundles with, derived from its age secret."""
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(_SIGNING_DOMAIN + str(identity).encode()).digest()
    )


def signing_public(identity: x25519.Identity) -> str:
    """The public signing key (``ed25519:<base64>``) of ``identity``'s device."""
    raw = signing_key(identity).public_key().public_bytes_raw()
    return SIGNING_PREFIX + base64.b64encode(raw).decode()


def verifier(text: str) -> Ed25519PublicKey:
    """The public signing key ``text`` (``ed25519:<base64>``). Raises ``MemsyncError`` when it is not one."""
    try:
        raw = base64.b64decode(text.removeprefix(SIGNING_PREFIX), validate=True)
        if not text.startswith(SIGNING_PREFIX) or len(raw) != 32:
            raise ValueError(text)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, binascii.Error):
        raise MemsyncError(
            f"not a signing key: {text[:40]!r}. Give the ed25519:... key `memsync join` printed"
        ) from None


def verification_code(public: str, signing: str | None = None) -> str:
    """A short code for a device's keys, ``public`` (canonical form) and its ``signing`` key (None: a
    recipient that only reads), that two people read aloud to check they hold the same keys: 8 digits in
    two groups, from their SHA-256. It is also the device's id in member lists and messages."""
    text = public if signing is None else f"{public} {signing}"
    number = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % 10**8
    return f"{number // 10**4:04d}-{number % 10**4:04d}"

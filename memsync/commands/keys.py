"""`memsync join`, `memsync encrypt STORE` and `memsync key add|list|remove|export`: the devices an
encrypted store's remote is sealed for and whose signed bundles it takes (``memsync.crypt``,
``memsync.store.sealed``)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyrage
from pyrage import passphrase, x25519

from memsync.base.argcheck import existing_parent, remote_url
from memsync.base.fsio import create_exclusive
from memsync.base.paths import config_path
from memsync.base.remote_url import is_local_path
from memsync.commands.config_edits import reload_daemon, store_table
from memsync.config.file import Config, StoreConfig, load_config, no_store_note
from memsync.crypt import keys, trust
from memsync.crypt.members import Member
from memsync.errors import MemsyncError
from memsync.store.access import cycle_lock, open_store
from memsync.tracks.resolve import edit_tracks

_CODE = re.compile(r"[0-9]{4}-[0-9]{4}")


def this_device() -> str:
    """This device's public keys (made when there are none) and its verification code, in words."""
    identity = keys.device_key(create=True)
    public, signing = keys.public_key(identity), keys.signing_public(identity)
    return f"{public} {signing} (verification code {keys.verification_code(public, signing)})"


def join(url: str, member: str | None = None) -> list[str]:
    """This device's public keys (made when there are none: the age key it reads with, the signing key
    its bundles are signed with) and their verification code, and what to do to join the encrypted
    remote at ``url`` (`memsync init` on a device with no store yet, else `memsync store add`). With
    ``member`` (a member's verification code, read off its screen) this device's first read of ``url``
    takes the history only when that member sealed it. Raises ``MemsyncError`` when ``member`` is not a
    verification code, or ``url`` is one git cannot use or a local path where nothing is (checked before
    a key is made)."""
    where = remote_url(url)
    if is_local_path(url) and not Path(where).expanduser().exists():
        raise MemsyncError(
            f"URL {url!r}: nothing is there, so there is no remote to join. Give the path or URL of the "
            "encrypted remote the other device syncs with"
        )
    identity = keys.device_key(create=True)
    public, signing = keys.public_key(identity), keys.signing_public(identity)
    code = keys.verification_code(public, signing)
    if member is not None:
        if not _CODE.fullmatch(member):
            raise MemsyncError(
                f"cannot join: {member!r} is not a verification code. Give the NNNN-NNNN code "
                "`memsync key add` or `memsync key list` shows on the member's screen"
            )
        trust.expect(url, member)
    # A device with no store yet joins with its first store, which tracks the memory found here.
    step, command = ("init", "init") if no_store_note() is not None else ("store add", "store add NAME")
    checked = (
        f"; this device takes the history only if device {member} sealed it"
        if member is not None
        else "; to check who adds you, run `memsync join URL --member CODE` with the code the member's "
        f"`memsync key add` shows, before the {step}"
    )
    return [
        f"this device's key: {public} {signing}",
        f"verification code: {code}",
        f"on a device that syncs {url}, run `memsync key add {shlex.quote(public)} {shlex.quote(signing)}` "
        "and check it shows code "
        f"{code}; then here: `memsync {command} --remote {shlex.quote(url)} --encrypt`{checked}",
    ]


def encrypt(name: str, path: Path | None = None) -> list[str]:
    """Set store ``name`` to encrypt and push its whole history sealed for this device to each of its
    remotes; what they held before stays there in plaintext, which the lines say. Raises
    ``MemsyncError`` (unknown store, a remote that cannot be reached)."""
    cfg_path = config_path() if path is None else path

    def mutate(raw: dict[str, Any]) -> None:
        store_table(raw, name)["encrypt"] = True

    config = edit_tracks(cfg_path, mutate)
    store_cfg = config.stores[name]
    for remote in store_cfg.remotes:
        _reseal(config, store_cfg, remote)
    return [
        f"store {name}: its remotes now receive ciphertext only, sealed for this device ({this_device()})",
        "warning: what the remotes received before stays there in plaintext; to remove it, make a new "
        "remote and `memsync remote add` it instead",
        f"every other device of {name}: run `memsync join URL` there, `memsync key add KEY --store {name}` "
        f"here, then `memsync encrypt {name}` there",
        *reload_daemon(cfg_path, silent_without=True),
    ]


def key_add(
    key: str, signing: str | None = None, store: str | None = None, path: Path | None = None
) -> list[str]:
    """Seal store ``store``'s remotes for the device with ``key`` too (an age or ssh-ed25519 public key),
    whole history included, and take bundles signed with ``signing`` (its ``ed25519:`` key; None: the
    device reads but what it seals is refused). Raises ``MemsyncError``."""
    member = Member(keys.normalized(key), None if signing is None else _signing(signing))
    config, store_cfg = _encrypted(store, path)
    for remote in store_cfg.remotes:
        _reseal(config, store_cfg, remote, add=member)
    return [
        f"store {store_cfg.name}: added device {member.device} ({member.recipient}): it reads all history "
        "from its next sync"
        + ("" if signing else "; without its signing key, what it pushes is refused (it only reads)"),
        f"verification code: {member.device} (`memsync join` printed the same there?)",
        f"this device's code: {_own_code()} (there, `memsync join URL --member {_own_code()}` checks that "
        "this device sealed what it reads)",
    ]


def _member_key(config: Config, store_cfg: StoreConfig, code: str) -> str:
    """The public key of the member of ``store_cfg``'s remotes whose device id is ``code`` (as `key list`
    shows it). Raises ``MemsyncError`` when no member has it, or several keys do (ids are short)."""
    with cycle_lock(store_cfg, config=config.path):
        opened = open_store(config, store_cfg)
        found = {
            m.recipient
            for remote in store_cfg.remotes
            for m in opened.members(remote).members
            if m.device == code
        }
    if len(found) != 1:
        why = "no member has" if not found else f"{len(found)} members have"
        raise MemsyncError(
            f"cannot remove {code}: {why} that code in store {store_cfg.name}. "
            "Give the public key `memsync key list` shows"
        )
    return found.pop()


def key_remove(key: str, store: str | None = None, path: Path | None = None) -> list[str]:
    """Seal store ``store``'s remotes, from now on, for their recipients less ``key`` (a public key, or a
    member's device id as `key list` shows it). Raises ``MemsyncError`` (this device's own key, an
    unknown store, a device id no member or several have)."""
    config, store_cfg = _encrypted(store, path)
    public = _member_key(config, store_cfg, key) if _CODE.fullmatch(key) else keys.normalized(key)
    if public == keys.public_key(keys.device_key(create=False)):
        raise MemsyncError(
            f"cannot remove {public}: it is this device's own key. Remove it from another device"
        )
    for remote in store_cfg.remotes:
        _reseal(config, store_cfg, remote, remove=public)
    return [
        f"store {store_cfg.name}: removed {public}: nothing pushed from now on is sealed for it, and what "
        "it signs is refused",
        "what that device already fetched stays readable to it",
    ]


def key_rotate(path: Path | None = None) -> list[str]:
    """Give this device a new key: every encrypted store's remotes are sealed, whole history included,
    for the new key instead of the old, then the old key is dropped. Until then the key file holds both,
    so an interrupted rotation loses nothing and runs again to its end. Raises ``MemsyncError``."""
    config = load_config(config_path() if path is None else path)
    held = keys.device_keys(create=False)
    fresh = held[1] if len(held) > 1 else x25519.Identity.generate()  # the rotation left unfinished
    old, new = keys.public_key(held[0]), keys.public_key(fresh)
    keys.save_keys([held[0], fresh])
    for store_cfg in config.stores.values():
        for remote in store_cfg.remotes if store_cfg.encrypt else ():
            _reseal(config, store_cfg, remote, add=Member(new, keys.signing_public(fresh)), remove=old)
    keys.save_keys([fresh])
    return [
        f"this device's key is now {new} {keys.signing_public(fresh)} (verification code "
        f"{keys.verification_code(new, keys.signing_public(fresh))})",
        f"the old key {old} opens nothing pushed from now on; back the new one up: `memsync key export FILE`",
    ]


def key_list(store: str | None = None, path: Path | None = None) -> list[str]:
    """One line per member of each remote of store ``store``: device id (its verification code), age key,
    whether it signs, who added it, and which is this device; first, on a device a member removed, who
    removed it (its list is then the last it read)."""
    config, store_cfg = _encrypted(store, path)
    mine = keys.public_key(keys.device_key(create=True))
    lines = []
    with cycle_lock(store_cfg, config=config.path):
        opened = open_store(config, store_cfg)
        for remote in store_cfg.remotes:
            members = opened.members(remote).members
            removed = opened.removed(remote)
            if removed is not None:  # its list is the last one it read: say so before it
                lines.append(f"{remote}: {removed}")
            # A removed device still finds itself in the last list it read: it is no member any more.
            count = sum(1 for m in members if removed is None or m.recipient != mine)
            this = "  (this device, removed)" if removed is not None else "  (this device)"
            # The count is of members; the removed device's own row below is said beside it.
            listed = removed is not None and any(m.recipient == mine for m in members)
            beside = ", and this device, removed" if listed else ""
            lines.append(f"{remote}: {count} device{'' if count == 1 else 's'}{beside}")
            lines += [
                f"  {m.device}  {m.recipient}  {'signs' if m.signing else 'reads only'}"
                f"{f'  added by {m.added_by}' if m.added_by else ''}"
                f"{this if m.recipient == mine else ''}"
                for m in members
            ]
    return lines


def key_export(out: Path, ask: Callable[[], str]) -> str:
    """Write this device's key to ``out`` encrypted with the passphrase ``ask()`` returns (age scrypt),
    0600; never over an existing file. ``ask`` is called only once the key and ``out`` are known good, so
    a typo costs no passphrase. Raises ``MemsyncError``."""
    held = "".join(f"{identity}\n" for identity in keys.device_keys(create=False))
    if out.exists() or out.is_symlink():
        raise MemsyncError(f"cannot export the key: {out} exists. Name a new file")
    existing_parent(out, "FILE")
    secret = ask()
    if len(secret) < 8:
        raise MemsyncError(
            "cannot export the key: the passphrase is shorter than 8 characters. Pick a longer one"
        )
    if not create_exclusive(out, passphrase.encrypt(held.encode(), secret), mode=0o600):
        raise MemsyncError(f"cannot export the key: {out} exists. Name a new file")
    return f"wrote this device's key to {out}, protected by the passphrase (keep both apart)"


def _encrypted(store: str | None, path: Path | None) -> tuple[Config, StoreConfig]:
    config = load_config(config_path() if path is None else path)
    encrypted = [
        cfg for cfg in config.stores.values() if cfg.encrypt and (store is None or cfg.name == store)
    ]
    if len(encrypted) != 1:
        named = f"store {store!r} is" if store else "no store is" if not encrypted else "several stores are"
        raise MemsyncError(
            f"cannot change keys: {named} {'not ' if store else ''}encrypted. "
            "Name an encrypted store with --store, or `memsync encrypt STORE`"
        )
    return config, encrypted[0]


def _own_code() -> str:
    """This device's verification code (its device id)."""
    identity = keys.device_key(create=False)
    return keys.verification_code(keys.public_key(identity), keys.signing_public(identity))


def _signing(text: str) -> str:
    """``text`` checked as a signing key. Raises ``MemsyncError``."""
    keys.verifier(text)
    return text


def _reseal(
    config: Config,
    store_cfg: StoreConfig,
    remote: str,
    *,
    add: Member | None = None,
    remove: str | None = None,
) -> None:
    with cycle_lock(store_cfg, config=config.path):
        open_store(config, store_cfg).reseal(remote, add=add, remove=remove)


def key_import(backup: Path, ask: Callable[[], str]) -> str:
    """Restore this device's key from ``backup`` (a ``key_export`` file) with the passphrase ``ask()``
    returns; never over an existing key. ``ask`` is called only once ``backup`` is read and this device
    has no key. Raises ``MemsyncError``."""
    try:
        sealed = backup.read_bytes()
    except OSError as exc:
        raise MemsyncError(f"cannot import the key: {backup}: {exc.strerror}. Check the path") from None
    if keys.key_path().exists():
        raise MemsyncError(f"cannot import the key: {keys.key_path()} exists. Move it away first")
    try:
        text = passphrase.decrypt(sealed, ask()).decode("ascii", "replace").strip()
    except pyrage.DecryptError:
        raise MemsyncError(
            f"cannot import the key: {backup} does not open with that passphrase (wrong, or not a key "
            "backup). Retry with the passphrase given to `memsync key export`"
        ) from None
    public = keys.public_key(keys.identity(text.split()[0] if text else "", str(backup)))
    if not create_exclusive(keys.key_path(), f"{text}\n".encode(), mode=0o600):
        raise MemsyncError(f"cannot import the key: {keys.key_path()} exists. Move it away first")
    return f"restored this device's key ({public})"

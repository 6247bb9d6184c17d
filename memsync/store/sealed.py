"""The exchange with an encrypted remote (a store with ``encrypt = true``): what ``exchange`` fetches and
pushes goes through the ciphertext repository (``memsync.crypt.vault``) instead of straight to the remote.

A push bundles the commits the remote lacks (``git bundle create`` of the branch less the remote's
tracking ref), seals the bundle for the remote's recipients and appends it to the ciphertext branch as a
fast-forward. A fetch reads the ciphertext commits it has not read, unseals each and fetches its bundle
into the remote's tracking ref, so the exchange integrates it like any remote's head: replay or merge
through memsync's drivers, nothing lost. A ciphertext that cannot be read (not sealed for this device,
damaged, of a newer format, its bundle missing commits) is named in one warning, nothing is taken from
it, and the rest goes on; one that a later whole-history bundle readable here supersedes (history from
before this device was added) is passed over silently. A remote holding ciphertext none of which this
device can read is an error, never an empty store.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from memsync.base import git
from memsync.base.fsio import temp_beside
from memsync.crypt import envelope, keys
from memsync.crypt.vault import Vault
from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit, log

_BUNDLE_HEAD = b"# v2 git bundle\n"


def vault(g: StoreGit, remote: str) -> Vault:
    """The ciphertext repository of ``remote`` (in the store's meta dir), one per URL: what was read
    from a remote's earlier URL says nothing about its new one."""
    url = g.cfg.remotes[remote]
    where = g.meta_dir / "crypt" / f"{remote}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"
    return Vault(where, url, g.cfg.branch, g.network_timeout_s, g.stop)


def tracking(g: StoreGit, remote: str) -> str:
    """The store's tracking ref of ``remote``'s branch."""
    return f"refs/remotes/{remote}/{g.cfg.branch}"


def fetch(g: StoreGit, remote: str) -> git.Result | None:
    """Fetch ``remote``'s ciphertext and bring every new bundle this device can read into its tracking
    ref (deleted when the remote has no ciphertext yet). Returns the failed git's result when the remote
    cannot be reached, else None. Raises ``MemsyncError`` when the remote holds ciphertext of which this
    device can read nothing, or its ciphertext history was rewritten."""
    v = vault(g, remote)
    failure = v.fetch()
    if failure is not None:
        return failure
    ref = tracking(g, remote)
    if v.tip is None:
        g.run("update-ref", "-d", ref)
        return None
    unread = v.unread()
    if not unread:
        return None
    # A device that read from this remote before and has no key now lost it: an error, not a new key.
    identities = keys.device_keys(create=v.read is None)
    opened: list[bytes | str] = []
    for sealed in unread:
        if not sealed.data:  # no ciphertext: the remote's plaintext history from before it was encrypted
            opened.append(b"")
            continue
        try:
            opened.append(envelope.unseal(sealed.data, identities))
        except MemsyncError as exc:
            opened.append(str(exc))
    whole = [i for i, payload in enumerate(opened) if isinstance(payload, bytes) and _whole(payload)]
    start = whole[-1] if whole else 0
    if not any(isinstance(payload, bytes) and payload for payload in opened) and g.rev(ref) is None:
        public = keys.public_key(identities[0])
        raise MemsyncError(
            f"cannot read {remote}: none of its encrypted bundles is sealed for this device's "
            f"key, so its memory cannot be read here. Ask a member to run `memsync key add {public}` "
            f"(verification code {keys.verification_code(public)}), or restore this device's key backup"
        )
    for sealed, payload in zip(unread[start:], opened[start:], strict=True):
        if not payload:
            continue
        problem = payload if isinstance(payload, str) else _take(g, remote, payload)
        if problem is not None:
            log.warning(
                "store %s: %s: encrypted bundle %s cannot be read (%s); nothing taken from it",
                g.name,
                remote,
                sealed.commit[:10],
                problem,
            )
    v.mark_read(unread[-1].commit)
    # Each bundle fetched is a pack of its own (git indexes a bundle whole), and a device that only reads
    # never reaches the cycle's periodic gc: packs would pile up and slow every git here. About one
    # fetch with news in 16 lets `gc --auto` fold them (it does nothing below its thresholds).
    if unread[-1].commit.startswith("0"):
        g.gc_auto()
        v.gc_auto()
    return None


def push(g: StoreGit, remote: str, *, add: str | None = None, remove: str | None = None) -> git.Result:
    """Seal the branch's commits ``remote`` lacks (all of them with ``add``/``remove`` or when it lacks
    none: a whole-history bundle that a newly added key reads everything from) for the remote's
    recipients, plus ``add`` and less ``remove`` (canonical public keys), and push them as one
    ciphertext commit, never forced.
    Returns git's result (a refused push: fetch, integrate and push again). Raises ``MemsyncError`` when
    this device's key is not among the recipients (removed, or another store's remote)."""
    v = vault(g, remote)
    public = keys.public_key(keys.device_key(create=v.read is None))
    present = v.recipients()
    if present and public not in present:
        raise MemsyncError(
            f"cannot push to {remote}: this device's key is not among its recipients (removed, or never "
            f"added), so nothing is sent. Ask a member to run `memsync key add {public}`"
        )
    recipients = sorted(({*present, public} | ({add} if add else set())) - ({remove} if remove else set()))
    ref = tracking(g, remote)
    head = g.rev("HEAD")
    assert head is not None  # the exchange pushes only a branch with commits
    # Nothing new (the remote has HEAD): a re-seal for other recipients, of the whole history too.
    whole = add is not None or remove is not None or g.rev(ref) in (None, head)
    with _scratch(g) as path:
        g.check(
            "bundle", "create", "-q", str(path), f"refs/heads/{g.cfg.branch}", *([] if whole else [f"^{ref}"])
        )
        bundle = path.read_bytes()
    result = v.push(v.append(envelope.seal(bundle, recipients), recipients))
    if result.ok:
        g.check("update-ref", ref, head)
    return result


def _whole(bundle: bytes) -> bool:
    """True for a bundle that needs no commit beforehand (no prerequisite lines): all of a history."""
    header = bundle[: bundle.find(b"\n\n") + 1] if b"\n\n" in bundle else bundle
    return bundle.startswith(_BUNDLE_HEAD) and not any(line.startswith(b"-") for line in header.splitlines())


def _take(g: StoreGit, remote: str, bundle: bytes) -> str | None:
    """Fetch the bundle ``bundle`` (peer content) into ``remote``'s tracking ref: None when done, else why
    not in a few words."""
    if not bundle.startswith(_BUNDLE_HEAD):
        return "not a git bundle"
    with _scratch(g, bundle) as path:
        result = g.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            str(path),
            f"+refs/heads/{g.cfg.branch}:{tracking(g, remote)}",
        )
    return None if result.ok else result.reason


@contextlib.contextmanager
def _scratch(g: StoreGit, data: bytes = b"") -> Iterator[Path]:
    """A temp file in the store's meta dir holding ``data``, removed afterwards."""
    path = temp_beside(g.meta_dir / "crypt" / "bundle", data, 0o600, fsync=False)
    try:
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

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

import hashlib
import re
import weakref
from pathlib import Path

from memsync.base import git
from memsync.crypt import envelope, keys
from memsync.crypt.vault import Vault
from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit, log

_BUNDLE_HEAD = b"# v2 git bundle\n"
_SHA = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
# Objects in a bundle from which its pack is kept as a pack rather than loose objects: git's own
# threshold for a fetched pack (transfer.unpackLimit's default).
_UNPACK_LIMIT = 100
# The ciphertext repositories of each open store, kept so that what an exchange's fetch read of its refs
# serves the push that follows (every fetch reads them anew: another process may have pushed meanwhile).
_vaults: weakref.WeakKeyDictionary[StoreGit, dict[Path, Vault]] = weakref.WeakKeyDictionary()


def vault(g: StoreGit, remote: str) -> Vault:
    """The ciphertext repository of ``remote`` (in the store's meta dir), one per URL: what was read
    from a remote's earlier URL says nothing about its new one. The same ``Vault`` while ``g`` lives."""
    url = g.cfg.remotes[remote]
    where = g.meta_dir / "crypt" / f"{remote}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"
    kept = _vaults.setdefault(g, {})
    if where not in kept:
        kept[where] = Vault(where, url, g.cfg.branch, g.network_timeout_s, g.stop)
    return kept[where]


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
        problem = payload if isinstance(payload, str) else take(g, remote, payload)
        if problem is not None:
            log.warning(
                "store %s: %s: encrypted bundle %s cannot be read (%s); nothing taken from it",
                g.name,
                remote,
                sealed.commit[:10],
                problem,
            )
    v.mark_read(unread[-1].commit)
    # Each bundle taken leaves loose objects (or a pack), and a device that only reads never reaches the
    # cycle's periodic gc: they would pile up and slow every git here. About one fetch with news in 16
    # lets `gc --auto` fold them (it does nothing below its thresholds).
    if unread[-1].commit.startswith("0"):
        g.gc_auto()
        v.gc_auto()
    return None


def push(
    g: StoreGit,
    remote: str,
    *,
    known: tuple[str, str | None] | None = None,
    add: str | None = None,
    remove: str | None = None,
) -> git.Result:
    """Seal the branch's commits ``remote`` lacks (all of them with ``add``/``remove`` or when it lacks
    none: a whole-history bundle that a newly added key reads everything from) for the remote's
    recipients, plus ``add`` and less ``remove`` (canonical public keys), and push them as one
    ciphertext commit, never forced. ``known``: the branch head and the remote's tracking ref (None:
    none) when the caller just read them (the exchange), else they are read here.
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
    head, theirs = known if known is not None else (g.rev("HEAD"), g.rev(ref))
    assert head is not None  # the exchange pushes only a branch with commits
    # Nothing new (the remote has HEAD): a re-seal for other recipients, of the whole history too.
    whole = add is not None or remove is not None or theirs in (None, head)
    result = v.push(
        v.append(envelope.seal(_bundle(g, head, None if whole else theirs), recipients), recipients)
    )
    if result.ok:
        g.check("update-ref", ref, head)
    return result


def _bundle(g: StoreGit, head: str, base: str | None) -> bytes:
    """A git bundle (v2) of the branch at ``head`` less ``base``'s history (all of it when None): what
    ``git bundle create`` writes, made by one ``git pack-objects`` from the tips already known (its
    prerequisite is ``base`` itself, which every reader of the bundles before this one holds)."""
    revs = f"{head}\n" + (f"^{base}\n" if base is not None else "")
    pack = g.check(
        "pack-objects", "--stdout", "--thin", "--delta-base-offset", "--revs", "-q", stdin=revs.encode()
    )
    prerequisite = f"-{base}\n" if base is not None else ""
    return _BUNDLE_HEAD + f"{prerequisite}{head} refs/heads/{g.cfg.branch}\n\n".encode() + pack.stdout


def _whole(bundle: bytes) -> bool:
    """True for a bundle that needs no commit beforehand (no prerequisite lines): all of a history."""
    header = bundle[: bundle.find(b"\n\n") + 1] if b"\n\n" in bundle else bundle
    return bundle.startswith(_BUNDLE_HEAD) and not any(line.startswith(b"-") for line in header.splitlines())


def take(g: StoreGit, remote: str, bundle: bytes) -> str | None:
    """Bring the bundle ``bundle`` (peer content: any bytes) into ``remote``'s tracking ref: None when
    done, else why not in a few words. Its pack is written the way a fetch writes a received one
    (loose objects when small, else a pack of its own), checked strictly: an object whose links this
    store lacks (a bundle whose base it never got) fails and nothing points at it."""
    end = bundle.find(b"\n\n")
    if not bundle.startswith(_BUNDLE_HEAD) or end < 0:
        return "not a git bundle"
    wanted = f"refs/heads/{g.cfg.branch}".encode()
    tips = [
        line.split(b" ", 1)[0]
        for line in bundle[len(_BUNDLE_HEAD) : end].splitlines()
        if not line.startswith(b"-") and line.split(b" ", 1)[1:] == [wanted]
    ]
    if len(tips) != 1 or not _SHA.fullmatch(tips[0]) or not tips[0].strip(b"0"):  # zeros: a deletion
        return f"no {g.cfg.branch} branch in it"
    pack = bundle[end + 2 :]
    count = int.from_bytes(pack[8:12], "big") if pack.startswith(b"PACK") else 0
    write = (
        ("index-pack", "--stdin", "--fix-thin", "--strict")
        if count >= _UNPACK_LIMIT
        else ("unpack-objects", "-q", "--strict")
    )
    result = g.run(*write, stdin=pack)
    if result.ok:
        result = g.run("update-ref", tracking(g, remote), tips[0].decode())
    return None if result.ok else result.reason

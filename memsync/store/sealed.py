"""The exchange with an encrypted remote (a store with ``encrypt = true``): what ``exchange`` fetches and
pushes goes through the ciphertext repository (``memsync.crypt.vault``) instead of straight to the remote.

A push bundles the commits the remote lacks (``git bundle create`` of the branch less the remote's
tracking ref), signs it with the member list and seals both for the members, and appends it to the
ciphertext branch as a fast-forward. A fetch reads the ciphertext commits it has not read, unseals each,
takes it only when its signer is a member as of the bundle before it (``crypt.members``), and fetches
its bundle into the remote's tracking ref, so the exchange integrates it like any remote's head: replay
or merge through memsync's drivers, nothing lost. A ciphertext that cannot be read or is refused (not
sealed for this device, damaged, of a newer format, unsigned, signed by a device that is not a member,
its bundle missing commits) is named in one warning, nothing is taken from it, and the rest goes on; on
a first read, bundles before the last whole-history bundle readable here (history from before this
device was added) are passed over silently. A remote holding ciphertext none of which this device can
read is an error, never an empty store.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import weakref
from dataclasses import replace
from pathlib import Path

from pyrage import x25519

from memsync.base import git
from memsync.base.remote_url import redacted
from memsync.crypt import envelope, keys, notice, trust
from memsync.crypt.members import Member, Members
from memsync.crypt.vault import Sealed, Vault
from memsync.errors import MemsyncError
from memsync.store.repo import StoreGit, log

_BUNDLE_HEAD = b"# v2 git bundle\n"
_UNREADABLE = "cannot be read: "
# Why a bundle whose base commits are missing here was not taken.
_MISSING_BASE = "cannot be taken: it builds on commits this device does not have"
_SHA = re.compile(git.OBJECT_ID.encode())
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


def fetch(g: StoreGit, remote: str) -> tuple[str | None, git.Result | None]:
    """Fetch ``remote``'s ciphertext and bring every new bundle this device can read, signed by a member,
    into its tracking ref (deleted when the remote has no ciphertext yet). Returns the tracking ref's
    head then (None: none) and None, or None and the failed git's result when the remote cannot be
    reached. Raises ``MemsyncError`` when the remote holds ciphertext of which this device can read
    nothing, or its ciphertext history was rewritten."""
    v = vault(g, remote)
    failure = v.fetch()
    if failure is not None:
        return None, failure
    ref = tracking(g, remote)
    if v.tip is None:
        g.run("update-ref", "-d", ref)
        return None, None
    unread = v.unread()
    if not unread:
        return g.rev(ref), None
    # A device that read from this remote before and has no key now lost it: an error, not a new key.
    identities = keys.device_keys(create=v.read is None)
    opened = [_open(sealed, identities) for sealed in unread]
    # A first read starts from a whole-history bundle readable here; given the member expected to have
    # sealed it (`join --member`), from one that member signed, not a later snapshot by another.
    vouching = trust.expected(v.url) if v.read is None else None

    def starts(item: envelope.Opened | str | None) -> bool:
        return _readable_whole(item) and (
            vouching is None or (isinstance(item, envelope.Opened) and _signed_by(item, vouching))
        )

    # A first fetch took the tip alone: deepen, doubling, until a bundle to start from is in, or the
    # whole branch is.
    while v.read is None and v.shallow and not any(starts(item) for item in opened):
        failure = v.fetch(deepen=len(unread))
        if failure is not None:
            return None, failure
        older = v.unread()[: -len(unread)]
        opened[:0] = [_open(sealed, identities) for sealed in older]
        unread[:0] = older
    if not any(isinstance(item, envelope.Opened) for item in opened) and g.rev(ref) is None:
        public = keys.public_key(identities[0])
        raise MemsyncError(
            f"cannot read {remote}: none of its encrypted bundles is sealed for this device's "
            f"key, so its memory cannot be read here. Ask a member to run "
            f"`memsync key add {shlex.quote(public)} {shlex.quote(keys.signing_public(identities[0]))}` "
            "(verification code "
            f"{keys.verification_code(public, keys.signing_public(identities[0]))}), or restore this "
            "device's key backup"
        )
    held = v.members
    members = None if held is None else Members.parse(held)
    # A first read starts at the last whole-history bundle readable here (all before it: history from
    # before this device was added); a device that knows the members reads every bundle, so a forged
    # whole-history bundle cannot make it pass over a member's.
    whole = [i for i, item in enumerate(opened) if starts(item)] or [
        i for i, item in enumerate(opened) if _readable_whole(item)
    ]
    start = whole[-1] if whole and members is None else 0
    first = opened[start] if whole and members is None else None
    if isinstance(first, envelope.Opened):
        _vouched(g, remote, v.url, first)
    missed: Sealed | None = None  # the first bundle this device could not open
    waiting: list[Sealed] = []  # bundles that build on commits this device lacks
    due = v.snapshot_due
    removed = v.removed
    mine = {keys.public_key(identity) for identity in identities}
    dropped: str | None = None  # a bundle that removed a member: the notice sealed for it comes next
    said: list[tuple[Sealed, str]] = []  # said once all are read: a notice silences its removal's line
    head: str | None = None  # the tracking ref as the last bundle taken left it (None: as it was)
    for sealed, item in zip(unread[start:], opened[start:], strict=True):
        if item is None:
            continue
        if isinstance(item, str):
            if removed is not None or sealed.parent == dropped:
                continue  # sealed after this device's removal, or the notice for the device removed
            problem: str | None = item
            missed = missed or sealed
        elif notice.removed(item.payload) is not None:
            problem, told = _noticed(g, remote, item, sealed.parent, members, mine)
            if told is not None:
                removed = told
                said = [(each, why) for each, why in said if each.commit != sealed.parent]
                missed = None if missed is not None and missed.commit == sealed.parent else missed
        else:
            before = members
            problem, members = _admit(item, sealed.parent, members)
            if problem is None and before is not None and members is not None:
                dropped = sealed.commit if _dropped(before, members) else None
                if removed is not None and mine & set(members.recipients):
                    removed = None  # added again: it reads and pushes as before
            problem = problem or take(g, remote, item.payload)
            if problem is None:
                head = _head(g, item.payload)
            if problem is None and _whole(item.payload):
                # A whole history taken: whatever this device missed before it is in it.
                missed, waiting, due = None, [], False
            elif problem is None and members is not None and _stanzas(sealed.data) != len(members.members):
                # Sealed for another member list than the current one (a device added meanwhile may
                # miss it): the next push snapshots, so every member reads it.
                due = True
            if problem == _MISSING_BASE:
                waiting.append(sealed)  # said below, unless a whole history after it mends it
                continue
        if problem is not None:
            said.append((sealed, problem))
    if missed is None:
        said += [(sealed, _MISSING_BASE) for sealed in waiting]
    for sealed, problem in said:
        log.warning(
            "store %s: %s: encrypted bundle %s %s; nothing taken from it",
            g.name,
            remote,
            sealed.commit[:10],
            problem,
        )
    if missed is not None and waiting:
        log.warning(
            "store %s: %s: %d later encrypted bundle(s) build on commits of bundle %s, which this device "
            "could not read; nothing taken from them, and nothing pushed from here until a member's "
            "next snapshot or `memsync key add` of this device seals the whole history for it again",
            g.name,
            remote,
            len(waiting),
            missed.commit[:10],
        )
    if removed is not None and removed != v.removed:
        log.warning("%s", removed)
    # Bundles wait on one this device could not read: its push would not build on them, and the others
    # would take its branch for a rewritten one. It does not push until a whole history mends it.
    stalled = missed is not None and bool(waiting)
    v.due(due)
    v.mark_read(
        unread[-1].commit, None if members is None else members.dump(), stalled=stalled, removed=removed
    )
    # Each bundle taken leaves loose objects (or a pack), and a device that only reads never reaches the
    # cycle's periodic gc: they would pile up and slow every git here. About one fetch with news in 16
    # lets `gc --auto` fold them (it does nothing below its thresholds).
    if unread[-1].commit.startswith("0"):
        g.gc_auto()
        v.gc_auto()
    return head if head is not None else g.rev(ref), None


def push(
    g: StoreGit,
    remote: str,
    *,
    known: tuple[str, str | None] | None = None,
    add: Member | None = None,
    remove: str | None = None,
) -> git.Result:
    """Seal the branch's commits ``remote`` lacks (all of them with ``add``/``remove`` or when it lacks
    none: a whole-history bundle that a newly added key reads everything from), signed by this device
    with the member list, for the members plus ``add`` and less the one with recipient ``remove``, and
    push them as one ciphertext commit, never forced. ``known``: the branch head and the remote's
    tracking ref (None: none) when the caller just read them (the exchange), else they are read here.
    Returns git's result (a refused push: fetch, integrate and push again). Raises ``MemsyncError`` when
    this device is not a member (removed, never added, or another store's remote) or waits on a bundle
    it missed."""
    v = vault(g, remote)
    identity = keys.device_key(create=v.read is None)
    public, signing = keys.public_key(identity), keys.signing_public(identity)
    held = v.members
    if v.stalled or (held is None and v.tip is not None and v.sealed(v.tip)):
        me = None  # bundles wait on one this device missed, or no member's list was read here
    else:
        members = Members.parse(held) if held is not None else Members((Member(public, signing),))
        me = members.find(public, signing)
    if v.removed is not None:
        raise MemsyncError(v.removed)
    if me is None:
        raise MemsyncError(
            f"cannot push to {remote}: this device is not among its members (removed, or never added) or "
            "missed a bundle the newest build on, so nothing is sent and its memory stays here. Ask a "
            f"member to run `memsync key add {shlex.quote(public)} {shlex.quote(signing)}`"
        )
    if add is not None:
        members = members.with_member(replace(add, added_by=me.device))
    if remove is not None:
        members = members.without(remove)
    ref = tracking(g, remote)
    head, theirs = known if known is not None else (g.rev("HEAD"), g.rev(ref))
    assert head is not None  # the exchange pushes only a branch with commits
    # Nothing new (the remote has HEAD): a re-seal for other recipients, of the whole history too.
    whole = add is not None or remove is not None or theirs in (None, head)
    # The list travels when it may be news to a reader (a change, the first seal, a whole history a new
    # device starts from); the others carry none and keep it: a one-entry bundle stays in the smallest one.
    news = add is not None or remove is not None or held is None or whole
    listed = members.dump()
    sealed = envelope.seal(
        _bundle(g, head, None if whole else theirs),
        members.recipients,
        identity=identity,
        members=listed if news else b"",
        parent=v.tip,
    )
    result = v.push(v.append(sealed), listed)
    if result.ok:
        g.check("update-ref", ref, head)
        due = v.snapshot_due and not whole
        if due:
            # A snapshot: the whole history again, for the members as of now, as one more fast-forward.
            # Refused when another device pushed meanwhile: still due, the next push makes it on top.
            snapshot = envelope.seal(
                _bundle(g, head, None), members.recipients, identity=identity, members=listed, parent=v.tip
            )
            due = not v.push(v.append(snapshot), listed).ok
        v.due(due)
    return result


def snapshot_next(g: StoreGit) -> None:
    """Make the next push to each of the encrypted store ``g``'s remotes a snapshot too (``memsync
    compact``), where this device has read that remote; the others start from one anyway."""
    for remote in g.cfg.remotes:
        v = vault(g, remote)
        if (v.git_dir / "HEAD").exists():
            v.due(True)


def notify_removed(g: StoreGit, remote: str, recipient: str) -> git.Result:
    """Push, on top of the ciphertext branch, a removal notice (``crypt.notice``) sealed for the device
    with ``recipient`` alone and signed by this device, so that device is told who removed it instead of
    finding only bundles it cannot read. Call it right after the push that removed it: the members pass
    over the one commit after a removal that they cannot open. Returns git's result (a refused push:
    exchange and call again)."""
    v = vault(g, remote)
    # Throwaway recipients (no one holds their keys) give its header as many stanzas as the members'
    # bundles have, so the host cannot pick the notice out by its one stanza.
    held = Members.parse(v.members) if v.members is not None else Members(())
    decoys = [keys.public_key(x25519.Identity.generate()) for _ in held.members[1:]]
    sealed = envelope.seal(
        notice.notice(recipient),
        [recipient, *decoys],
        identity=keys.device_key(create=False),
        members=b"",
        parent=v.tip,
    )
    return v.push(v.append(sealed), v.members or b"")


def _noticed(
    g: StoreGit,
    remote: str,
    opened: envelope.Opened,
    parent: str | None,
    members: Members | None,
    mine: set[str],
) -> tuple[str | None, str | None]:
    """Whether to believe the removal notice ``opened`` (on top of ciphertext commit ``parent``), given
    the ``members`` this device knows before it and its own recipients ``mine``: (None, what to tell
    the user) when a member signed it there for this device, else (why it is refused, None)."""
    signer = opened.signer
    if signer is None or members is None or members.find(signer.recipient, signer.signing) is None:
        who = "unsigned" if signer is None else f"signed by device {signer.device}"
        return (
            f"is a removal notice that is refused: {who}, not a member at this point; nothing changed",
            None,
        )
    if not opened.verify(parent):
        return (
            "is a removal notice that is refused: its signature does not verify (forged, or replayed from "
            "elsewhere on the branch); nothing changed",
            None,
        )
    if notice.removed(opened.payload) not in mine:
        return "is a removal notice for another device's key: refused; nothing changed", None
    identity = keys.device_key(create=False)
    public, signing = keys.public_key(identity), keys.signing_public(identity)
    return None, (
        f"store {g.name}: this device was removed from the encrypted remote {remote} by device "
        f"{signer.device}; what it fetched before stays readable here; it no longer receives or pushes. "
        f"To rejoin: `memsync join {shlex.quote(redacted(vault(g, remote).url))}` and ask a member to run "
        f"`memsync key add {shlex.quote(public)} {shlex.quote(signing)}`"
    )


def _vouched(g: StoreGit, remote: str, url: str, start: envelope.Opened) -> None:
    """Check who sealed ``start``, the bundle a first read of ``remote`` (at ``url``) takes its members
    from: with a member expected there (`memsync join URL --member CODE`), it must be that member's;
    without, say once that the members were not checked and how to check them. Raises ``MemsyncError``
    (nothing taken) when another device sealed it."""
    code = trust.expected(url)
    signer = "no device" if start.signer is None else f"device {start.signer.device}"
    if code is None:
        log.warning(
            "store %s: %s: took the members as %s listed them, unchecked: compare each code in "
            "`memsync key list` with the one on that member's screen (`memsync join URL --member CODE` "
            "checks it before anything is taken)",
            g.name,
            remote,
            signer,
        )
    elif start.signer is None or start.signer.device != code:
        raise MemsyncError(
            f"cannot read {remote}: the history sealed for this device is signed by {signer}, not by "
            f"{code}, the member given to `memsync join --member`, so nothing was taken. Check the code on "
            "that member's screen (`memsync key list` there) and run "
            f"`memsync join {shlex.quote(redacted(url))} --member CODE` again"
        )


def _dropped(before: Members, after: Members) -> bool:
    """True when ``after`` lost a member of ``before`` and gained none: a removal, which a notice follows
    (a rotation, which also adds, has none)."""
    return bool(set(before.recipients) - set(after.recipients)) and set(after.recipients) <= set(
        before.recipients
    )


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


def _admit(
    opened: envelope.Opened, parent: str | None, members: Members | None
) -> tuple[str | None, Members | None]:
    """Whether to take ``opened`` (on top of ciphertext commit ``parent``) given the ``members`` before it
    (None: none known yet, so the bundle's own list, which must name its signer): (None, the members as
    of it: its list, or ``members`` when it carries none) when its signer is a member and the signature
    verifies, else (why not, ``members``)."""
    if opened.signer is None:
        return (
            "is refused: unsigned (an older format any holder of the members' public keys could seal)",
            members,
        )
    try:
        listed = Members.parse(opened.members) if opened.members else None
        judge = members if members is not None else listed
        if judge is None:
            return "is refused: it names no members and this device knows none yet", members
        if judge.find(opened.signer.recipient, opened.signer.signing) is None:
            return (
                f"is refused: signed by device {opened.signer.device}, which is not a member at this point "
                "of the branch (removed, or never added)",
                members,
            )
        if not opened.verify(parent):
            return "is refused: its signature does not verify (forged, or moved on the branch)", members
        return None, judge if listed is None else listed
    except MemsyncError as exc:
        return f"is refused: {exc}", members


def _open(sealed: Sealed, identities: list[x25519.Identity]) -> envelope.Opened | str | None:
    """``sealed`` opened with ``identities``: what it holds, why it cannot be read, or None for a commit
    without ciphertext (the remote's plaintext history from before it was encrypted)."""
    if not sealed.data:
        return None
    try:
        return envelope.unseal(sealed.data, identities)
    except MemsyncError as exc:
        return f"{_UNREADABLE}{exc}"


def _signed_by(opened: envelope.Opened, device: str) -> bool:
    """True when ``opened`` names ``device`` (a device id) as its signer."""
    return opened.signer is not None and opened.signer.device == device


def _readable_whole(item: envelope.Opened | str | None) -> bool:
    """True for an opened bundle that holds a whole history."""
    return isinstance(item, envelope.Opened) and _whole(item.payload)


def _stanzas(data: bytes) -> int:
    """How many recipients the age file ``data`` is sealed for: its header's X25519 and ssh-ed25519
    stanzas (age adds a random "grease" stanza of another type, not counted)."""
    header = data[: data.find(b"\n---")]
    return sum(1 for line in header.splitlines() if line.startswith((b"-> X25519 ", b"-> ssh-ed25519 ")))


def _whole(bundle: bytes) -> bool:
    """True for a bundle that needs no commit beforehand (no prerequisite lines): all of a history."""
    header = bundle[: bundle.find(b"\n\n") + 1] if b"\n\n" in bundle else bundle
    return bundle.startswith(_BUNDLE_HEAD) and not any(line.startswith(b"-") for line in header.splitlines())


def _head(g: StoreGit, bundle: bytes) -> str | None:
    """The head of the store's branch that the bundle ``bundle`` (peer content: any bytes) names, None
    when it is not a git bundle or names no such head, or several, or a deletion."""
    end = bundle.find(b"\n\n")
    if not bundle.startswith(_BUNDLE_HEAD) or end < 0:
        return None
    wanted = f"refs/heads/{g.cfg.branch}".encode()
    tips = [
        line.split(b" ", 1)[0]
        for line in bundle[len(_BUNDLE_HEAD) : end].splitlines()
        if not line.startswith(b"-") and line.split(b" ", 1)[1:] == [wanted]
    ]
    if len(tips) != 1 or not _SHA.fullmatch(tips[0]) or not tips[0].strip(b"0"):  # zeros: a deletion
        return None
    return tips[0].decode()


def take(g: StoreGit, remote: str, bundle: bytes) -> str | None:
    """Bring the bundle ``bundle`` (peer content: any bytes) into ``remote``'s tracking ref: None when
    done, else why not in a few words. Its pack is written the way a fetch writes a received one
    (loose objects when small, else a pack of its own), checked strictly: an object whose links this
    store lacks (a bundle whose base it never got) fails and nothing points at it."""
    end = bundle.find(b"\n\n")
    if not bundle.startswith(_BUNDLE_HEAD) or end < 0:
        return "cannot be taken: not a git bundle"
    head = _head(g, bundle)
    if head is None:
        return f"cannot be taken: no {g.cfg.branch} branch in it"
    if (
        not any(line.startswith(b"-") for line in bundle[len(_BUNDLE_HEAD) : end].splitlines())
        and g.rev(tracking(g, remote)) == head
    ):
        return None  # a snapshot of what this device already took: it adds nothing, nothing to write
    pack = bundle[end + 2 :]
    count = int.from_bytes(pack[8:12], "big") if pack.startswith(b"PACK") else 0
    write = (
        ("index-pack", "--stdin", "--fix-thin", "--strict")
        if count >= _UNPACK_LIMIT
        else ("unpack-objects", "-q", "--strict")
    )
    result = g.run(*write, stdin=pack)
    if result.ok:
        result = g.run("update-ref", tracking(g, remote), head)
    if result.ok:
        return None
    # Only a failed bundle asks whether its base is here: a bundle built on one this device missed.
    bases = [line[1:41].decode() for line in bundle[len(_BUNDLE_HEAD) : end].splitlines() if line[:1] == b"-"]
    listed = g.run("cat-file", "--batch-check", stdin="".join(f"{sha}\n" for sha in bases).encode())
    return _MISSING_BASE if bases and "missing" in listed.out else f"cannot be taken: {result.reason}"

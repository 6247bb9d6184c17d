"""The members of an encrypted remote: who its bundles are sealed for and whose signatures are taken.

A member is a device: its age recipient (what bundles are encrypted for), its Ed25519 signing key (None:
a recipient that only reads, such as an ssh-ed25519 key) and the device id of the member that added it.
The list travels inside every sealed bundle (encrypted, signed with the bundle), so each device knows the
members at each point of the ciphertext branch: a bundle is taken only when its signer is a member as of
the bundle before it, and only then does its list become the one that judges the next.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memsync.crypt import keys
from memsync.errors import MemsyncError

# The first line of a serialized list: a later layout gets a new one, and this memsync refuses it.
_HEADER = b"memsync-members 1\n"
_NONE = "-"


@dataclass(frozen=True)
class Member:
    """One device: its age (or ssh-ed25519) ``recipient``, its ``signing`` key (``ed25519:...``; None:
    it reads but cannot write) and ``added_by``, the device id of the member that added it ("" for the
    device that sealed the remote first)."""

    recipient: str
    signing: str | None
    added_by: str = ""

    @property
    def device(self) -> str:
        """This device's id: the verification code of its keys."""
        return keys.verification_code(self.recipient, self.signing)


@dataclass(frozen=True)
class Members:
    """The members of one encrypted remote at one point of its ciphertext branch, in order."""

    members: tuple[Member, ...]

    @property
    def recipients(self) -> list[str]:
        """Every member's recipient: what a bundle is sealed for."""
        return [member.recipient for member in self.members]

    def find(self, recipient: str, signing: str | None) -> Member | None:
        """The member with both keys, None when there is none (a removed device, a forger)."""
        for member in self.members:
            if member.recipient == recipient and member.signing == signing and signing is not None:
                return member
        return None

    def with_member(self, member: Member) -> Members:
        """These members with ``member`` too, replacing any with its recipient (a device re-added)."""
        return Members((*self.without(member.recipient).members, member))

    def without(self, recipient: str) -> Members:
        """These members less the one with ``recipient`` (both its keys go)."""
        return replace(self, members=tuple(m for m in self.members if m.recipient != recipient))

    def dump(self) -> bytes:
        """The serialized list (``parse`` reads it): a header, then one member a line, tab-separated."""
        lines = (
            f"{m.recipient}\t{m.signing or _NONE}\t{m.added_by or _NONE}\n".encode() for m in self.members
        )
        return _HEADER + b"".join(lines)

    @classmethod
    def parse(cls, data: bytes) -> Members:
        """The list ``data`` holds (peer content: any bytes). Raises ``MemsyncError`` when it is not a
        member list this memsync reads (its keys checked too)."""
        if not data.startswith(_HEADER):
            raise MemsyncError("its member list is not one this memsync reads")
        found = []
        try:
            for line in data[len(_HEADER) :].decode().splitlines():
                recipient, signing, added_by = line.split("\t")
                if keys.normalized(recipient) != recipient:
                    raise ValueError(recipient)
                if signing != _NONE:
                    keys.verifier(signing)
                found.append(
                    Member(
                        recipient,
                        None if signing == _NONE else signing,
                        "" if added_by == _NONE else added_by,
                    )
                )
        except (ValueError, UnicodeDecodeError, MemsyncError):
            raise MemsyncError("its member list is damaged") from None
        return cls(tuple(found))

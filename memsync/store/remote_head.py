"""A remote's HEAD: the branch a plain ``git clone`` of it checks out.

A store that pushes ``main`` to a bare repository whose HEAD names ``master`` (``git init --bare`` on git
2.39 without ``init.defaultBranch``) leaves that repository looking empty to anyone who clones it with
plain git ("remote HEAD refers to nonexistent ref"). So a new store adopts the branch the remote's HEAD
names when the user named none, and a local bare remote whose HEAD names a branch it lacks is pointed at
the store's branch.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from memsync.base.git import remote_attempt

log = logging.getLogger(__name__)

_HEADS = "refs/heads/"


def remote_head_branch(url: str, timeout_s: float) -> str | None:
    """The branch ``url``'s HEAD names, or None when git cannot tell (unreachable; a HEAD that is
    detached, or that names a branch missing from a repository with history).

    A repository with history: what ``git ls-remote --symref URL HEAD`` says. An empty one: its unborn
    HEAD, which protocol v2 advertises and a ``git clone`` of the empty repository records (ls-remote
    does not print it), read from a bare clone into a temporary directory. ``timeout_s`` bounds each git
    call (seconds). Never raises.
    """
    listed = remote_attempt("ls-remote", "--symref", url, timeout_s=timeout_s)
    if listed is None or listed.status != 0:
        return None
    for line in listed.out.splitlines():
        target, _, name = line.partition("\t")
        if name == "HEAD" and target.startswith(f"ref: {_HEADS}"):
            return target.removeprefix(f"ref: {_HEADS}")
    if listed.out.strip():
        return None  # refs but no usable HEAD: the store keeps its own branch
    with tempfile.TemporaryDirectory(prefix="memsync-head-") as scratch:
        clone = Path(scratch) / "empty.git"
        cloned = remote_attempt("clone", "--quiet", "--bare", url, str(clone), timeout_s=timeout_s)
        if cloned is None or cloned.status != 0:
            return None
        head = remote_attempt("-C", str(clone), "symbolic-ref", "-q", "HEAD", timeout_s=timeout_s)
    if head is None or head.status != 0 or not head.out.strip().startswith(_HEADS):
        return None
    return head.out.strip().removeprefix(_HEADS)


def point_local_head(remote_dir: Path, branch: str, timeout_s: float = 30.0) -> bool:
    """Point the HEAD of the bare repository at ``remote_dir`` at ``branch`` when HEAD names a branch the
    repository lacks and it has ``branch``; True when it did. A non-bare repository (someone's checkout)
    and a HEAD that names an existing branch are left alone. Never raises."""
    bare = remote_attempt("-C", str(remote_dir), "rev-parse", "--is-bare-repository", timeout_s=timeout_s)
    if bare is None or bare.out.strip() != "true":
        return False
    head = remote_attempt("-C", str(remote_dir), "symbolic-ref", "-q", "HEAD", timeout_s=timeout_s)
    current = head.out.strip() if head is not None and head.status == 0 else ""
    if not current or current == f"{_HEADS}{branch}":
        return False
    for ref, wanted in ((current, False), (f"{_HEADS}{branch}", True)):
        found = remote_attempt("-C", str(remote_dir), "rev-parse", "-q", "--verify", ref, timeout_s=timeout_s)
        if found is None or (found.status == 0) != wanted:
            return False
    done = remote_attempt(
        "-C", str(remote_dir), "symbolic-ref", "HEAD", f"{_HEADS}{branch}", timeout_s=timeout_s
    )
    if done is None or done.status != 0:
        return False
    log.info("%s: HEAD named %s, which it lacks; it now names %s", remote_dir, current, branch)
    return True

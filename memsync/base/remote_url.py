"""What git accepts as a remote: a URL it can parse and a name it allows.

Checked before a remote enters the config (``remote add``, ``init --remote``, ``store add --remote``,
``config set``) and whenever the config is loaded, so a typo is refused with its reason instead of
failing later at every sync. The rules are git's own: a ``scheme://`` URL needs a transport git speaks
itself or a ``git-remote-<scheme>`` helper (git runs one for every other scheme, and fails without it);
``transport::address`` needs that helper too; ``host:path`` (a colon before any slash) is git's scp-like
ssh syntax; anything else is a local path. A remote name must make a valid ref
(``git check-ref-format refs/remotes/<name>/x``) and, since it also names files, stay plain.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path

from memsync.base import git

# Transports git speaks without a helper (connect.c, transport.c); http(s)/ftp(s) are helpers it ships.
_NATIVE = {"ssh", "git", "file", "git+ssh", "ssh+git"}
# Schemes a person types by hand: `htps:/x` or `https:/x` is one of them with a slash missing, which git
# would take for an ssh host named `htps` (scp-like syntax) and fail on at every sync.
_TYPED = ("http", "https", "ssh", "git", "file", "ftp", "ftps")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)
_HELPER = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::(.+)$", re.DOTALL)
_HOST = re.compile(r"^(?:[^@/\s]+@)?([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])$")
# A store or remote name becomes part of git ref names and of file names: keep it plain.
PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def url_problem(url: str, *, relative_ok: bool = False) -> str | None:
    """Why git could not use ``url`` as a remote, as a phrase ("git has no transport for ..."), or None.

    ``relative_ok``: accept a relative local path (a command line resolves it against the current
    directory; the config needs an absolute one, as git would resolve it against the store). Runs
    nothing but a look-up of ``git-remote-<scheme>`` for an unknown scheme; never raises.
    """
    if not url.strip() or url != url.strip():
        return "is empty or has leading or trailing spaces"
    if any(ord(char) < 32 for char in url):
        return "contains a control character"
    scheme = _SCHEME.match(url)
    if scheme is not None:
        name, rest = scheme.group(1).lower(), scheme.group(2)
        if name not in _NATIVE and not has_remote_helper(name):
            return f"uses the scheme {name}://, which git has no transport for (no git-remote-{name} helper)"
        if not rest.strip("/") or (name != "file" and rest.startswith("/")):
            return f"names no host or path after {name}://"
        return None
    helper = _HELPER.match(url)
    if helper is not None:
        name = helper.group(1)
        return None if has_remote_helper(name) else f"needs the git-remote-{name} helper, not installed here"
    if not is_local_path(url):  # git's scp-like syntax: [user@]host:path
        host, _, path = url.partition(":")
        bare = host.rpartition("@")[2].lower()
        if path.startswith("/") and any(_near(bare, typed) for typed in _TYPED):
            return (
                f"looks like a URL with a slash missing ({host}:/ for {host}://): git would take "
                f"{bare!r} for an ssh host"
            )
        if not _HOST.match(host):
            return f"is neither a URL, a host:path address nor a path ({host!r} is no host name)"
        if not path:
            return f"names no path after {host}:"
        return None
    if not relative_ok and not url.startswith(("/", "~")):
        return "is a relative path: give an absolute path, a URL or host:path"
    return None


def redacted(url: str) -> str:
    """``url`` as memsync shows it (status, sync, doctor, listings, logs): a password in its userinfo
    (``user:password@``) dropped, leaving ``user@``; everything else as given. The authority of a
    ``scheme://`` URL ends at the first ``/``, ``?`` or ``#``, as git reads it. Pure; never raises."""
    helper = _HELPER.match(url)
    if helper is not None:
        return f"{helper.group(1)}::{redacted(helper.group(2))}"
    scheme = _SCHEME.match(url)
    if scheme is not None:
        prefix, rest = url[: scheme.start(2)], scheme.group(2)
        cut = len(rest) if (end := re.search(r"[/?#]", rest)) is None else end.start()
    else:  # scp-like `user:password@host:path` or a path: the userinfo, if any, ends before any `/`
        prefix, rest = "", url
        cut = len(rest) if (end := re.search(r"/", rest)) is None else end.start()
    userinfo, at, host = rest[:cut].rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return f"{prefix}{userinfo.partition(':')[0]}@{host}{rest[cut:]}"


def is_local_path(url: str) -> bool:
    """True when git reads ``url`` as a local path: no ``scheme://``, no ``transport::``, and no colon
    before the first slash (that is scp-like ``host:path``)."""
    if _SCHEME.match(url) or _HELPER.match(url):
        return False
    colon, slash = url.find(":"), url.find("/")
    return not (colon > 0 and (slash < 0 or colon < slash))


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a remote, as a phrase, or None. Asks git (``check-ref-format``); memsync
    also wants a plain name (letters, digits, '.', '_', '-'), since it names files. Never raises."""
    if not _valid_ref(f"refs/remotes/{name}/x"):
        return "is refused by git as a remote name (`git check-ref-format`)"
    if not PLAIN_NAME.match(name):
        return "must be a plain name (letters, digits, '.', '_', '-', starting with a letter or digit)"
    return None


def has_remote_helper(scheme: str) -> bool:
    """True when git can run ``git-remote-<scheme>``: in git's exec path or on PATH."""
    helper = f"git-remote-{scheme}"
    exec_path = _git_exec_path()
    return shutil.which(helper) is not None or (
        exec_path is not None and os.access(exec_path / helper, os.X_OK)
    )


def _near(word: str, target: str) -> bool:
    """``word`` is ``target`` or one typo away from it (one letter added, dropped or changed), for
    schemes of four letters or more (shorter ones would match too many host names)."""
    if word == target:
        return True
    if len(target) < 4 or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        return sum(a != b for a, b in zip(word, target, strict=True)) == 1
    short, long = sorted((word, target), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


@functools.lru_cache(maxsize=1)
def _git_exec_path() -> Path | None:
    done = git.attempt(["--exec-path"], timeout=10)
    return Path(done.out.strip()) if done is not None and done.ok and done.out.strip() else None


@functools.lru_cache(maxsize=64)
def _valid_ref(ref: str) -> bool:
    done = git.attempt(["check-ref-format", ref], timeout=10)
    if done is None:
        return True  # git is missing or stuck: every git step then reports it; do not blame the name
    return done.ok

"""A project's identity: what makes one project's memory meet on every machine (DESIGN "Agent hosts").

The identity is the normalised URL of the project's git remote, so the same project checked out at
``/home/ada/src/shop`` on one machine and ``/Users/ada/code/shop`` on another has one store path; without
a remote it is the project folder's own name. Normalising drops what differs between spellings of one
remote: the scheme (``ssh://``, ``https://``, git's scp-like ``git@host:path``), the user and password,
the port, a trailing ``.git`` or ``/``, and letter case (git hosts treat owner and repository names
case-insensitively): ``git@github.com:Org/Shop.git``, ``https://github.com/org/shop`` and
``ssh://git@github.com:22/org/shop`` are all ``github.com/org/shop``.

As a store path component the identity is one name, ``/`` written as ``~`` (a character git hosts refuse
in owner and repository names), so no project's path can lie inside another's (GitLab's nested groups):
``github.com~org~shop``.
"""

from __future__ import annotations

import re
from pathlib import Path

from memsync import git

GIT_TIMEOUT_S = 10.0
SEPARATOR = "~"
# What may stay in a store path component; anything else becomes '-'.
_UNSAFE = re.compile(r"[^a-z0-9._~-]+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# git's scp-like syntax: [user@]host:path, where the host part holds no slash (else it is a local path).
_SCP = re.compile(r"^(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+):(.*)$")


def normalise_remote_url(url: str) -> str | None:
    """``url`` (a git remote URL in any spelling) as ``host/path`` in lower case, or None when it names no
    host (a local path, a ``file://`` URL, an empty or unparsable string).

    Drops the scheme, user and password, port, query, fragment, a trailing ``.git`` and slashes. Pure;
    never raises.
    """
    text = url.strip()
    if not text:
        return None
    if _SCHEME.match(text):
        scheme, _, rest = text.partition("://")
        if scheme.lower() == "file":
            return None
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
        host = re.sub(r":\d*$", "", host) if not host.endswith("]") else host
    else:
        scp = _SCP.match(text)
        if scp is None or (len(scp.group(1)) == 1 and text[1:2] == ":"):  # C:\... is a Windows path
            return None
        host, path = scp.group(1), scp.group(2)
    path = re.split(r"[?#]", path, maxsplit=1)[0].strip("/")
    path = path.removesuffix(".git").rstrip("/")
    host = host.strip("[]").lower()
    if not host or not path:
        return None
    parts = [part for part in path.lower().split("/") if part not in ("", ".", "..")]
    return "/".join([host, *parts]) if parts else None


def identity_name(identity: str) -> str:
    """``identity`` (``host/org/shop``, or a folder name) as one store path component: ``/`` becomes
    ``~``, letters are lowered, characters outside ``[a-z0-9._~-]`` become ``-``, leading dots go (no
    hidden or ``.git`` names). "project" when nothing is left. Pure."""
    name = _UNSAFE.sub("-", identity.lower().replace("/", SEPARATOR).replace("\\", SEPARATOR))
    name = name.strip(SEPARATOR).lstrip(".")
    return name or "project"


def remote_urls(project: Path) -> dict[str, str]:
    """The remotes of the git repository at ``project`` (name -> URL as configured), {} when it is no
    repository or git fails. Reads only that repository's config (``GIT_CEILING_DIRECTORIES`` keeps git
    from using a repository that merely encloses ``project``), and never contacts a remote."""
    done = git.attempt(
        ["-C", str(project), "config", "--get-regexp", r"^remote\..*\.url$"],
        env={"GIT_CEILING_DIRECTORIES": str(project.parent)},
        timeout=GIT_TIMEOUT_S,
    )
    if done is None or not done.ok:
        return {}
    urls: dict[str, str] = {}
    for line in done.out.splitlines():
        key, _, url = line.partition(" ")
        name = key.removeprefix("remote.").removesuffix(".url")
        urls.setdefault(name, url.strip())
    return urls


def project_identity(project: Path) -> str:
    """The identity of the project whose checkout is ``project``: the normalised URL of its ``origin``
    remote (else of its first remote by name that has a host), else the folder's own name (DESIGN "Agent
    hosts"). Runs ``git config`` (no network); never raises."""
    urls = remote_urls(project)
    for name in sorted(urls, key=lambda remote: (remote != "origin", remote)):
        normalised = normalise_remote_url(urls[name])
        if normalised is not None:
            return normalised
    return project.name


def project_key(project: Path) -> str:
    """``project_identity(project)`` as a store path component (``identity_name``)."""
    return identity_name(project_identity(project))

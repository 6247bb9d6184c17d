"""A project's identity: what makes one project's memory meet on every machine (DESIGN "Agent hosts").

The identity is the normalised URL of the project's git remote, so the same project checked out at
``/home/ada/src/shop`` on one machine and ``/Users/ada/code/shop`` on another has one store path.
Normalising drops what differs between spellings of one remote and nothing that tells two remotes
apart: the scheme (``ssh://``, ``https://``, git's scp-like ``git@host:path``), the user and password
(everything before the last ``@``, whatever characters a password holds), the scheme's default port, a
trailing ``.git`` or ``/``, and the host's letter case; another port stays (``host:2222/org/shop``), and
the path's case is folded only on hosts known to treat owner and repository names case-insensitively
(``CASE_FOLDED_HOSTS``): ``git@github.com:Org/Shop.git``, ``https://github.com/org/shop`` and
``ssh://git@github.com:22/org/shop`` are all ``github.com/org/shop``.

A project without a remote has no identity another machine could share: its key is its folder's name,
this machine's host name and a hash of its path (``shop@laptop-a-3f2a1c``), so its memory stays its own,
unless the user names the identity (``memsync project alias PATH NAME``: the ``[projects]`` table of
``config.toml``, read here), so that two machines naming one NAME meet. An alias wins over the remote.

As a store path component the identity is one name, ``/`` written as ``~`` (a character git hosts refuse
in owner and repository names), so no project's path can lie inside another's (GitLab's nested groups):
``github.com~org~shop``.
"""

from __future__ import annotations

import functools
import os
import re
import socket
import tomllib
from pathlib import Path

from memsync.base import git
from memsync.base.paths import config_path
from memsync.base.remote_url import is_local_path
from memsync.config.file import ALIASES_TABLE

GIT_TIMEOUT_S = 10.0
SEPARATOR = "~"

# Hosts whose owner and repository names are case-insensitive: there `Org/Shop` is `org/shop`.
CASE_FOLDED_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org"})
_DEFAULT_PORTS = {"ssh": "22", "git+ssh": "22", "ssh+git": "22", "git": "9418", "http": "80", "https": "443"}
# What may stay in a store path component; anything else becomes '-'.
_UNSAFE = re.compile(r"[^a-z0-9._~-]+")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
_HELPER = re.compile(r"^[a-z][a-z0-9+.-]*::", re.IGNORECASE)
_AUTHORITY_END = re.compile(r"[/?#]")
_PORT = re.compile(r"^(?P<host>\[[^\]]*\]|[^:]*)(?::(?P<port>\d*))?$")


def _scp_address(text: str) -> str:
    """The ``host:path`` of an scp-like address ``[userinfo@]host:path``: what follows the last ``@`` that
    a host and a colon follow (a password may hold ``@`` and ``:``, a path may hold ``@``); ``text``
    itself when no ``@`` is followed so."""
    at = text.rfind("@")
    while at >= 0:
        after = text[at + 1 :]
        host = after.partition("]")[0] if after.startswith("[") else after.partition(":")[0]
        if ":" in after and host and "/" not in host:
            return after
        at = text.rfind("@", 0, at)
    return text


def normalise_remote_url(url: str) -> str | None:
    """``url`` (a git remote URL in any spelling) as ``host[:port]/path``, or None when it names no host
    (a local path, a ``file://`` URL, an empty or unparsable string).

    Drops the scheme, the user information (all before the last ``@`` of the authority, which ends at the
    first ``/``, ``?`` or ``#`` as git reads it), the scheme's default port, ``;params``, query,
    fragment, a trailing ``.git`` and slashes; lowers the host, and the path on ``CASE_FOLDED_HOSTS``.
    Pure; never raises.
    """
    text = url.strip()
    if _HELPER.match(text):  # transport::address: the address names the remote
        text = text.partition("::")[2].strip()
    if not text:
        return None
    scheme = _SCHEME.match(text)
    if scheme is not None:
        name = scheme.group(1).lower()
        if name == "file":
            return None
        # The authority ends at the first `/`, `?` or `#` (git and curl read a backslash literally);
        # the userinfo is what comes before its last `@`: an `@` further on belongs to the path.
        rest = text[scheme.end() :]
        end = _AUTHORITY_END.search(rest)
        cut = len(rest) if end is None else end.start()
        hostport, path = rest[:cut].rpartition("@")[2], rest[cut:]
        found = _PORT.match(hostport)
        if found is None:
            return None
        host, port = found.group("host"), found.group("port") or ""
        port = "" if port == _DEFAULT_PORTS.get(name) else port
    else:
        if is_local_path(text) or (text[1:2] == ":" and text[0].isalpha() and text[2:3] in ("\\", "/", "")):
            return None  # a local path, or C:\... (a Windows path)
        rest = _scp_address(text)
        if rest.startswith("["):  # [::1]:org/shop
            host, _, path = rest.partition("]")
            host, path = f"{host}]", path.removeprefix(":")
        else:
            host, _, path = rest.partition(":")
        port = ""
    path = re.split(r"[;?#]", path, maxsplit=1)[0].strip("/")  # `;params`, query, fragment
    path = path.removesuffix(".git").rstrip("/")
    host = host.lower()
    if not host.strip("[]") or "/" in host or not path:
        return None
    if host in CASE_FOLDED_HOSTS:
        path = path.lower()
    parts = [part for part in path.split("/") if part not in ("", ".", "..")]
    authority = f"{host}:{port}" if port else host.strip("[]")
    return "/".join([authority, *parts]) if parts else None


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


def remote_identity(project: Path) -> str | None:
    """The normalised URL of the ``origin`` remote of the checkout ``project`` (else of its first remote
    by name that has a host), None when it has none. Runs ``git config`` (no network); never raises."""
    urls = remote_urls(project)
    for name in sorted(urls, key=lambda remote: (remote != "origin", remote)):
        normalised = normalise_remote_url(urls[name])
        if normalised is not None:
            return normalised
    return None


def project_identity(project: Path) -> str | None:
    """The identity of the project whose checkout is ``project``, shared by every machine that gives
    the same: the alias the user named (``aliases``), else ``remote_identity``; None for a project
    without either, which stays on this machine. Reads the config file and ``git config``; never
    raises."""
    alias = aliases().get(_absolute(project))
    return alias if alias is not None else remote_identity(project)


def project_key(project: Path) -> str:
    """The store path component of the project whose checkout is ``project``: its identity as
    ``identity_name`` writes it, plus a short hash of the identity when it has capitals (on a host
    that tells ``Org/Shop`` from ``org/shop``, two projects that a lowered name would join); for a
    project without an identity, ``local_key``. Never raises."""
    identity = project_identity(project)
    if identity is None:
        return local_key(project)
    if identity == identity.lower():
        return identity_name(identity)
    return f"{identity_name(identity)}-{_digest(identity)}"


def local_key(project: Path) -> str:
    """The key of the project at ``project`` known only on this machine: ``<folder name>@<host>-<hash
    of its path>`` (the config's ``host``, else this machine's host name), which no other machine and
    no other folder gives, whatever order folders are listed in. Never raises."""
    return f"{identity_name(project.name)}@{identity_name(_host())}-{_digest(str(_absolute(project)))}"


def _digest(text: str) -> str:
    """The first six hex digits of ``text``'s SHA-256."""
    # Imported here: hashlib's import sets up OpenSSL (7 ms), and a recall imports this module only.
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:6]


def legacy_keys(project: Path) -> tuple[str, ...]:
    """The keys earlier versions gave the project at ``project`` where they differ from
    ``project_key(project)``, whose content is folded into it: its remote identity with the port
    dropped and every letter lowered; and, for a project with an alias, the key it had without one.
    Not the bare folder name a project without a remote had: other machines' unrelated projects of
    that name wrote there too (that key stays in the store, listed by ``memsync status``; naming the
    project by it, ``memsync project alias PATH NAME``, joins it again). Never raises."""
    remote = remote_identity(project)
    old: list[str] = []
    if remote is not None:
        authority, _, path = remote.partition("/")
        host = re.sub(r":\d+$", "", authority) if not authority.startswith("[") else authority
        old.append(identity_name(f"{host.strip('[]')}/{path}"))
    if _absolute(project) in aliases():
        old.append(local_key(project) if remote is None else identity_name(remote))
    current = project_key(project)
    return tuple(key for key in dict.fromkeys(old) if key != current)


def aliases() -> dict[Path, str]:
    """The project aliases of the config file (``[projects]``: absolute project path -> identity),
    {} when there is no config or it cannot be read (``memsync.config`` reports a bad one). Never
    raises."""
    table = _config_table().get(ALIASES_TABLE)
    if not isinstance(table, dict):
        return {}
    return {
        _absolute(Path(path).expanduser()): name.strip()
        for path, name in table.items()
        if isinstance(name, str) and name.strip()
    }


def _host() -> str:
    host = _config_table().get("host")
    return host if isinstance(host, str) and host.strip() else socket.gethostname()


def _config_table() -> dict[str, object]:
    """The config file's TOML table, {} when it is missing or unreadable."""
    path = config_path()
    try:
        stat = path.stat()
    except OSError:
        return {}
    return _read_table(path, stat.st_ino, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read_table(path: Path, *stamp: int) -> dict[str, object]:
    """The TOML table of ``path`` as it was at ``stamp`` (inode, size, mtime): read once per change of
    the file, not once per project (a daemon reloads the config when it changes)."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))

"""Checks of what a user typed, made before anything is written: a typo is refused in one line that names
the argument, instead of creating directories or config entries nobody meant."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memsync.base.remote_url import is_local_path, name_problem, url_problem
from memsync.errors import MemsyncError


def _default_roots() -> tuple[Path, ...]:
    """The folders agents and their hosts write into by default (``detect``; Claude Code's ``~/.claude``):
    memsync may track them, and paths in them, before they exist."""
    home = Path(os.path.abspath(Path.home()))
    return (home / ".agents" / "memory", home / ".agent-memory", home / ".claude")


def existing_parent(path: Path, what: str) -> Path:
    """``path`` made absolute (``~`` expanded) when it exists or its parent directory does; a path that
    does not exist yet under an existing directory is fine (it is created later), and so is any path in
    the default memory folders (``~/.agents/memory``, ``~/.agent-memory``, ``~/.claude``), which agents
    and their hosts create.
    ``what`` names the argument in the error (``--file``, ``PATH``). Raises ``MemsyncError`` when the
    parent is missing or is not a directory."""
    absolute = Path(os.path.abspath(path.expanduser()))
    if absolute.exists() or absolute.is_symlink():
        return absolute
    if any(absolute.is_relative_to(root) and absolute != root for root in _default_roots()):
        return absolute
    parent = absolute.parent
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise MemsyncError(
            f"{what} {path}: its directory {parent} {why}. Fix the path, or create the directory first"
        )
    return absolute


# What is never agent memory: the system's own directories (a path under one is refused unless it lies
# in HOME or the temp directory, which a HOME of /root or /var/lib/<user> puts there) ...
_SYSTEM_DIRS = (
    *("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/proc"),
    *("/sys", "/run", "/var", "/opt", "/srv", "/root", "/snap", "/lost+found"),
)
# ... and the folders and files under HOME that hold credentials (keys, tokens, password stores).
_CREDENTIALS = (
    *(".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".pki", ".vault-token"),
    *(".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".terraform.d", ".local/share/keyrings"),
    *(".config/gcloud", ".config/gh", ".config/op", ".config/hub", ".config/rclone"),
)


def _forms(path: Path) -> tuple[Path, ...]:
    """``path`` as given (absolute) and with its symbolic links resolved: a link to /etc is /etc."""
    return (path, Path(os.path.realpath(path)))


def refusal(path: Path) -> str | None:
    """Why the absolute ``path`` cannot be agent memory, or None when memsync may track it: the file-system
    root, HOME or a folder holding it, a system directory (/etc, /usr, /var, ...) or anything in one (but
    in HOME or the temp directory), a credential folder or file of HOME (~/.ssh, ~/.aws, ~/.netrc, ...),
    anything in one or a folder holding one. Symbolic links are followed. Never raises. Implements DESIGN
    I6 (no secret leaves the machine): such a track would publish password hashes and keys."""
    home = Path(os.path.abspath(Path.home()))
    homes = _forms(home)
    allowed = (*homes, *_forms(Path(os.path.abspath(tempfile.gettempdir()))))
    for form in _forms(path):
        if form == form.parent:
            return "the file-system root"
        if form in homes:
            return "your home directory"
        if any(h.is_relative_to(form) for h in homes):
            return f"a folder holding your home directory {home}"
        for name in _CREDENTIALS:
            for h in homes:
                secret = h / name
                if form.is_relative_to(secret):
                    where = "the credential" if form == secret else "in the credential folder"
                    return f"{where} ~/{name}"
                if secret.is_relative_to(form):
                    return f"a folder holding the credential ~/{name}"
        system = next((d for d in _SYSTEM_DIRS if form.is_relative_to(d)), None)
        if system is not None and not any(form.is_relative_to(a) for a in allowed):
            return f"in the system directory {system}" if form != Path(system) else "a system directory"
    return None


def memory_path(path: Path, what: str) -> Path:
    """``existing_parent(path, what)``, refused when it cannot be agent memory (``refusal``). Raises
    ``MemsyncError`` naming ``what`` and the reason; nothing is written."""
    absolute = existing_parent(path, what)
    why = refusal(absolute)
    if why is not None:
        raise MemsyncError(
            f"cannot track {what} {path}: it is {why}, not agent memory, and memsync never publishes "
            "system files or credentials. Track an agent's memory folder or file instead"
        )
    return absolute


def remote_url(url: str, what: str = "URL") -> str:
    """``url`` as the config should hold it: a relative local path made absolute, anything else as
    given. Raises ``MemsyncError`` naming ``what`` when git could not use it (``remote_url``'s rules),
    or when it is a local path whose parent directory does not exist."""
    why = url_problem(url, relative_ok=True)
    if why is not None:
        raise MemsyncError(f"{what} {url!r} {why}. Fix the URL")
    if not is_local_path(url):
        return url
    absolute = existing_parent(Path(url), what)
    return url if url.startswith(("/", "~")) else str(absolute)


def remote_name(name: str) -> str:
    """``name`` when it can name a remote; raises ``MemsyncError`` saying why not otherwise."""
    why = name_problem(name)
    if why is not None:
        raise MemsyncError(f"remote name {name!r} {why}. Pick another name, such as origin or laptop")
    return name

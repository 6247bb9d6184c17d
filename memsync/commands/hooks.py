"""`memsync hooks install|uninstall|status`: memsync's hooks in an agent host's hook settings (Claude
Code, Codex, Gemini CLI, Qwen Code, Cursor, Copilot CLI; ``hosts.hooks``: the handlers and the edits;
DESIGN "Agent hosts")."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memsync.commands.installs import found_before, new_dirs, record
from memsync.errors import MemsyncError
from memsync.hosts import codex, jsonc_text
from memsync.hosts.hooks import (
    HOSTS,
    OWN_FILE,
    Host,
    add_ours,
    handlers,
    installed,
    interpreter,
    others,
    remove_ours,
    settings_path,
)
from memsync.hosts.settings_file import (
    backup_path,
    edit_file,
    json_update,
    parse_json_object,
    preview,
    read_json_object,
    read_settled,
)

Settings = dict[str, Any]
Update = Callable[[bytes | None, Settings | None], bytes | None]


def install(host: Host, project: Path | None = None) -> list[str]:
    """Install memsync's hooks for ``host`` into its user settings, or into the project directory
    ``project``'s. Idempotent: an install that is already there writes nothing. Returns report lines.
    Raises ``MemsyncError`` for a settings file memsync cannot read or edit, and for a project directory
    that does not exist."""
    path = _target(host, project)
    wanted = list(handlers(host))
    existed, dirs = path.exists(), new_dirs(path)
    changed = edit_file(path, *_edit(host, path, add=True))
    # Recorded even when they were there already, so uninstall visits this file wherever it is.
    record(path, host, "hooks", created=not existed, dirs=dirs, project=project)
    if not changed:
        return [f"{host}: memsync's hooks are already installed in {path}"]
    lines = [f"{host}: installed memsync's hooks in {path} ({', '.join(h.event for h in wanted)})"]
    if existed:
        lines.append(f"{host}: the previous file is saved as {backup_path(path)}")
    if host == "codex":
        lines.append("codex: open /hooks in Codex and trust the new hooks; Codex skips hooks until trusted")
    return lines


def uninstall(host: Host, project: Path | None = None, held: Settings | None = None) -> list[str]:
    """Remove memsync's hooks for ``host`` from its user (or ``project``'s) settings, nothing else: an
    emptied event list or hooks object the file held before memsync's first edit stays (``held``, read
    by the caller when another edit of the file comes first; default ``installs.found_before``).
    Returns report lines. Raises ``MemsyncError`` for a settings file memsync cannot read."""
    path = _target(host, project)
    before = found_before(path) if held is None else held
    if not edit_file(path, *_edit(host, path, add=False, held=before)):
        return [f"{host}: no memsync hooks in {path}"]
    if path.name == OWN_FILE and not read_json_object(path):
        path.unlink()  # memsync's own file (Copilot CLI reads every file of its hooks folder)
        backup_path(path).unlink(missing_ok=True)
        return [f"{host}: deleted memsync's hooks file {path}"]
    return [f"{host}: removed memsync's hooks from {path}; other hooks kept"]


def settings(host: Host, project: Path | None) -> Settings:
    """``host``'s hook settings (user or ``project``), {} when there is no file. Raises MemsyncError
    for a file memsync cannot read."""
    path = settings_path(host, project)
    return read_settled(path, _parser(host, path)) or {}


def _edit(
    host: Host, path: Path, *, add: bool, held: Settings | None = None
) -> tuple[Callable[[bytes], Settings], Update]:
    """How memsync's hooks are added (``add``) to or removed from ``host``'s settings file ``path`` (an
    emptied event list or hooks object that the file ``held`` before memsync's first edit stays): its
    parser and the ``edit_file`` update. Gemini CLI and Qwen Code read their settings.json through
    strip-json-comments: it is edited as JSON with comments, as text, every comment kept."""
    change = _change(host, path, add=add, held=held)
    update = jsonc_text.rewrite(path, change) if _commented(host) else json_update(path, change)
    return _parser(host, path), update


def _commented(host: Host) -> bool:
    """Whether ``host`` reads its settings.json as JSON with comments (Gemini CLI, Qwen Code)."""
    return host in ("gemini-cli", "qwen-code")


def _parser(host: Host, path: Path) -> Callable[[bytes], Settings]:
    """How ``host``'s settings file ``path`` is read (``_commented``: as JSON with comments)."""
    if _commented(host):
        return lambda data: jsonc_text.parse(data, path)
    return lambda data: parse_json_object(data, path)


def _change(
    host: Host, path: Path, *, add: bool, held: Settings | None = None
) -> Callable[[dict[str, Any]], None]:
    """The change to ``host``'s hook settings (read from ``path``): memsync's handlers added (``add``,
    unless they are there as they should be) or removed."""
    wanted = list(handlers(host))

    def change(settings: dict[str, Any]) -> None:
        if not add:
            remove_ours(settings, path, held)
        elif installed(settings, path) != wanted:
            add_ours(settings, path, host)

    return change


def planned(host: Host, project: Path | None, *, add: bool) -> tuple[Path, bytes | None, bytes | None]:
    """What :func:`install` (``add``) or :func:`uninstall` would do, doing nothing: the settings file,
    its bytes (None: none) and the bytes memsync would write (None: no change). Raises MemsyncError."""
    path = _target(host, project)
    return (path, *preview(path, *_edit(host, path, add=add)))


def status(hosts: Sequence[Host] = HOSTS, project: Path | None = None) -> list[str]:
    """One line per host settings file: which memsync hooks are installed, whether they run this memsync,
    how many other hooks the file holds; for Codex, whether hooks are switched off in its config."""
    lines: list[str] = []
    for host in hosts:
        path = settings_path(host, project)
        try:
            found = settings(host, project)
            ours, other = installed(found, path), others(found, path)
        except MemsyncError as exc:
            lines.append(f"{host}: {exc}")
            continue
        if not ours:
            lines.append(f"{host}: not installed in {path} ({other} other hooks)")
            continue
        events = ", ".join(dict.fromkeys(h.event for h in ours))
        current = {h.command for h in handlers(host)}
        stale = [h.command for h in ours if h.command not in current]
        state = (
            "runs this memsync"
            if not stale
            else f"runs another memsync ({interpreter(stale[0])}): run `memsync hooks install {host}` again"
        )
        lines.append(f"{host}: installed in {path}: {events}; {state}; {other} other hooks")
    if "codex" in hosts and _codex_hooks_off():
        lines.append("codex: hooks are switched off in config.toml ([features] hooks = false)")
    return lines


def _target(host: Host, project: Path | None) -> Path:
    if project is not None and not project.is_dir():
        raise MemsyncError(f"cannot install hooks in {project}: no such directory. Give a project directory")
    return settings_path(host, project)


def _codex_hooks_off() -> bool:
    try:
        config = tomllib.loads((codex.codex_home() / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    features = config.get("features")
    if not isinstance(features, Mapping):
        return False
    return any(features.get(key) is False for key in ("hooks", "codex_hooks"))

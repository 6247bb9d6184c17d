"""`memsync connect HOST`, `connect --dry-run HOST`, `connect --status`, `disconnect HOST`: memsync's MCP
server (``hosts.mcp_install``, every host of ``hosts.registry``) and, where memsync has hooks for the
host (``hosts.hooks``: Claude Code, Codex, Gemini CLI, Qwen Code, Cursor, Copilot CLI), its
session-start and end-of-session hooks, in the host's own files. `mcp install` and `hooks install` do
each half alone."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from memsync.base.fsio import atomic_write
from memsync.base.paths import state_dir
from memsync.commands import hooks, installs
from memsync.commands.mcp_install import install_line, uninstall_line
from memsync.errors import MemsyncError
from memsync.hosts import hooks as host_hooks
from memsync.hosts import mcp_install, registry
from memsync.hosts.settings_file import backup_path

Plan = Callable[[], tuple[Path, bytes | None, bytes | None]]


def _hooked(host: str) -> host_hooks.Host | None:
    """``host`` as a host memsync installs hooks for, else None."""
    return next((h for h in host_hooks.HOSTS if h == host), None)


def connect(
    host: str, project: Path | None = None, dry_run: bool = False, *, mcp: bool = True, hooked: bool = True
) -> list[str]:
    """Register memsync's MCP server (unless not ``mcp``), and its hooks where it has some (unless not
    ``hooked``), with ``host`` (for the user, or in ``project``); with ``dry_run``, the change as a
    unified diff and nothing written. Returns the lines to print. Idempotent. Each file edited is sealed
    in the install record, so that `disconnect` and `uninstall` put it back byte for byte while it holds
    what this left. Raises MemsyncError for an unknown host, a file memsync cannot read or edit without
    changing more than its own entry, or a missing project directory."""
    registry.spec(host)
    known = _hooked(host)
    with_hooks = known if hooked else None
    if dry_run:
        plans: list[Plan] = [lambda: mcp_install.planned(host, project, True)] if mcp else []
        if with_hooks is not None:
            plans.append(lambda: hooks.planned(with_hooks, project, add=True))
        return [line for plan in plans for line in _diff(*plan())]
    files = _files(host, project, mcp=mcp, hooked=hooked)
    found = {file: installs.file_bytes(file) for file in files}
    # A backup beside a file memsync never edited is not memsync's (the user's own, or one handed over
    # by an earlier disconnect): this edit's backup would write over it.
    known_files = {Path(e.path) for e in installs.recorded()}
    lines = [
        f"an earlier {backup_path(file)} that memsync did not make is kept as {aside}"
        for file in files
        if file not in known_files and (aside := installs.set_aside(backup_path(file))) is not None
    ]
    kept = {file: installs.file_bytes(backup_path(file)) for file in files}
    # memsync's own directories (~/.local/state, ...) a connect before any `init` makes: recorded, so
    # `uninstall --purge` removes them too.
    made = installs.new_dirs(state_dir() / "-")
    ours = (
        {mcp_install.config_file(host, project)}
        if mcp and mcp_install.registered(host, project) is not None
        else set()
    )
    if known is not None and hooks_installed(known, project):
        ours.add(host_hooks.settings_path(known, project))
    lines += [install_line(host, project)] if mcp else []
    if with_hooks is not None:
        lines += hooks.install(with_hooks, project)
    for file, before in found.items():
        backup = backup_path(file)
        if mcp and with_hooks is not None and len(files) == 1 and backup.exists():
            # Gemini CLI, Qwen Code: two edits of one file; its backup is the file as connect found it,
            # and there is none when there was no file (the second edit saved the first's half).
            if before is None:
                backup.unlink()
                lines = [line for line in lines if not line.endswith(str(backup))]
            else:
                atomic_write(backup, before)
        installs.seal(file, before, clean=file not in ours, kept=kept[file])
    if made:
        installs.record(state_dir(), "memsync", "dirs", created=False, dirs=made, project=None)
    return lines


def _files(host: str, project: Path | None, *, mcp: bool = True, hooked: bool = True) -> list[Path]:
    """The files connect edits for ``host``: its MCP config (unless not ``mcp``) and, where memsync has
    hooks (unless not ``hooked``), its hook settings (one file for Gemini CLI and Qwen Code)."""
    with_hooks = _hooked(host) if hooked else None
    files = [mcp_install.config_file(host, project)] if mcp else []
    if with_hooks is not None:
        files.append(host_hooks.settings_path(with_hooks, project))
    return list(dict.fromkeys(files))


def disconnect(host: str, project: Path | None = None, *, mcp: bool = True, hooked: bool = True) -> list[str]:
    """Remove what :func:`connect` added for ``host`` (its MCP entry unless not ``mcp``, its hooks unless
    not ``hooked``), nothing else: a file still exactly as connect left it and holding nothing else of
    memsync's is put back byte for byte (or deleted, with the directories memsync made for it); another
    has memsync's entries taken out, and is deleted when memsync created it and nothing else is left; a
    file that keeps memsync's other half stays sealed, so a later removal of that half still puts it back
    byte for byte. Returns the lines to print. Raises MemsyncError for an unknown host or a file memsync
    cannot read."""
    registry.spec(host)
    with_hooks = _hooked(host) if hooked else None
    halves = {"mcp"} if mcp else set()
    if with_hooks is not None:
        halves.add("hooks")
    files = set(_files(host, project, mcp=mcp, hooked=hooked))
    recorded = [e for e in installs.recorded() if Path(e.path) in files]
    entries = [e for e in recorded if e.added in halves]
    # A file with another half of memsync's (Gemini CLI's one settings file) keeps that half.
    shared = {Path(e.path) for e in recorded if e.added not in halves}
    kept = {file: installs.file_bytes(backup_path(file)) for file in shared}
    # Read before the MCP half's edit, which writes its own backup over the one sealed at connect
    # (Gemini CLI and Qwen Code keep both halves in one file).
    hooks_file = None if with_hooks is None else host_hooks.settings_path(with_hooks, project)
    held = None if hooks_file is None else installs.found_before(hooks_file)
    lines, restored = installs.restore([e for e in entries if Path(e.path) not in shared])
    if mcp and mcp_install.config_file(host, project) not in restored:
        lines.append(uninstall_line(host, project))
    if with_hooks is not None and hooks_file not in restored:
        lines += hooks.uninstall(with_hooks, project, held)
    lines += installs.remove_created([e for e in entries if Path(e.path) not in restored | shared])
    lines += installs.remove_dirs([e for e in entries if Path(e.path) not in shared])
    for file in sorted(files - restored - shared):
        # Handed to the user under a name of its own: a later connect's edit would write its own
        # backup over it.
        kept_as = installs.set_aside(backup_path(file))
        if kept_as is not None:
            lines.append(
                f"{file} changed since `memsync connect`: the file before this edit is kept as {kept_as}"
            )
    for file in shared:
        installs.seal(file, None, clean=False, kept=kept[file])
    installs.drop(entries)
    return lines


def _diff(path: Path, old: bytes | None, new: bytes | None) -> list[str]:
    if new is None:
        return [f"no change to {path}"]
    before = [] if old is None else old.decode("utf-8").splitlines(keepends=True)
    after = new.decode("utf-8").splitlines(keepends=True)
    source = "/dev/null" if old is None else str(path)
    return [line.rstrip("\n") for line in difflib.unified_diff(before, after, source, str(path))]


def status(project: Path | None = None) -> list[str]:
    """One line per host (every host of the registry, or those with a file in ``project``): found or
    not, connected or not, and whether memsync's entries still match this memsync (else which command
    fixes them), or why its file cannot be read."""
    lines: list[str] = []
    for host in mcp_install.hosts_for(project):
        found = "found" if project is not None or registry.found(host) else "not found"
        path = mcp_install.config_file(host, project)
        try:
            entry = mcp_install.registered(host, project)
            hooked = _hooked(host)
            ours = [] if hooked is None else hooks_installed(hooked, project)
        except MemsyncError as exc:  # one unreadable file does not hide the other hosts
            lines.append(f"{host}: {found}; {exc}")
            continue
        if entry is None and not ours:
            lines.append(f"{host}: {found}; not connected ({path})")
            continue
        stale = entry != mcp_install.server_entry(host) or (
            hooked is not None and set(ours) != set(host_hooks.handlers(hooked))
        )
        state = (
            f"config differs from this memsync's: run `memsync connect {host}`" if stale else "config matches"
        )
        lines.append(f"{host}: {found}; connected ({path}); {state}")
    return lines


def hooks_installed(host: host_hooks.Host, project: Path | None) -> list[host_hooks.Handler]:
    """memsync's hook handlers in ``host``'s settings (user or ``project``). Raises MemsyncError."""
    return host_hooks.installed(hooks.settings(host, project), host_hooks.settings_path(host, project))

"""`memsync uninstall [--dry-run] [--purge] [--force]`: take memsync out of this machine's agent hosts.

It stops the daemon and removes the user service, memsync's hooks and MCP registrations from every host
(the user's settings, and those of the projects memsync knows: the projects of its tracks, Claude Code's
project folders, the current directory), each through the command that installed it, so only memsync's
own entries go and nothing else in those files changes. It lists what stays: the config, the device's
private key, the stores, the memory files themselves; the files memsync created that are then empty,
the directories it created that are then empty, and its backups of the host files it edited are
deleted. ``--purge`` also deletes
the stores, the config, the device key (named, with what losing it means) and memsync's state, after
checking each store's history is on a remote (``--force``: even if not).
``--dry-run`` says all that would be done and changes nothing.
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from memsync.base.paths import StoreLayout, config_path, state_dir
from memsync.commands import hooks, installs, service
from memsync.commands.config_edits import Report
from memsync.commands.connect import hooks_installed
from memsync.commands.mcp_install import uninstall_line
from memsync.commands.stop import stop
from memsync.config.file import Config, default_store_dir, load_config
from memsync.crypt import trust
from memsync.crypt.keys import key_path
from memsync.daemon.instance import running_daemon_pid
from memsync.errors import MemsyncError
from memsync.hosts import claude_code, mcp_install, registry
from memsync.hosts.hooks import HOSTS as HOOK_HOSTS
from memsync.hosts.hooks import settings_path
from memsync.hosts.settings_file import BACKUP_SUFFIX, backup_path
from memsync.projects import claude_folders
from memsync.store.facade import Store


@dataclass(frozen=True)
class Step:
    """One thing uninstall does: what it is, in words (``says``), and doing it (``run``: report lines)."""

    says: str
    run: Callable[[], Sequence[str]]
    by_hand: bool = False  # a warning: memsync's entry stays, for the user to remove


# The exit code of an uninstall that removed all it could but left memsync's entry in a file it cannot
# read (named in a warning line), for the user to remove by hand.
BY_HAND = 3


@dataclass(frozen=True)
class Uninstalled(Report):
    """What uninstall did (``Report``) and whether some file still holds memsync's entry (``by_hand``)."""

    by_hand: bool = False


def uninstall(
    *, dry_run: bool = False, purge: bool = False, force: bool = False, path: Path | None = None
) -> Uninstalled:
    """Uninstall memsync from this machine as the module doc says, for the config file ``path``
    (default ``config_path()``). Returns what was done (or, with ``dry_run``, would be) and what stays;
    a host file it cannot read is left alone, with a warning when it names memsync (``by_hand``).
    Raises ``MemsyncError`` before changing anything when ``purge`` would delete a store whose history no
    remote has (unless ``force``) or the config does not load."""
    path = config_path() if path is None else path
    try:
        config = load_config(path) if path.exists() else None
    except MemsyncError:
        if purge:
            raise  # the stores to delete are unknown
        config = None  # uninstalling needs the config only for the stores it lists and purges
    if purge and not force and config is not None:
        _refuse_unpushed(config)
    projects = _projects(config)
    # Read before the steps run: a purge deletes the state dir that holds the record.
    recorded = installs.recorded()
    # A host file still exactly as connect left it goes back byte for byte, before any entry is edited.
    lines: list[str] = []
    restored: set[Path] = set()
    if not dry_run:
        lines, restored = installs.restore(recorded)
    steps = list(_steps(path, config, projects, purge))
    if not steps and not restored:
        lines.append("nothing of memsync's to remove from this machine")
    elif dry_run:
        lines.extend(f"would {step.says}" for step in steps)
        lines.append(f"would delete the *{BACKUP_SUFFIX} copies memsync made of the files it edited")
    else:
        for step in steps:
            lines.extend(step.run())
        lines.extend(installs.remove_created([e for e in recorded if Path(e.path) not in restored]))
        lines.extend(_remove_backups(projects))
        installs.forget()
        if state_dir().is_dir() and not any(state_dir().iterdir()):
            state_dir().rmdir()
        if purge:
            lines.extend(_remove_empty_dirs(path))
        lines.extend(installs.remove_dirs(recorded))
    lines.extend(_kept(path, config, projects, purge))
    if dry_run:
        lines.append("nothing was changed (--dry-run)")
    return Uninstalled(tuple(lines), bool(steps or restored) and not dry_run, any(s.by_hand for s in steps))


def _stores(config: Config | None) -> list[tuple[str, Path]]:
    if config is None:
        return []
    return [(s.name, s.path) for s in config.stores.values() if StoreLayout(s.path).exists]


def _refuse_unpushed(config: Config) -> None:
    """Raise ``MemsyncError`` naming the first store whose commits no remote has, as of the last sync."""
    for cfg in config.stores.values():
        if not StoreLayout(cfg.path).exists:
            continue
        if not cfg.remotes:
            why = "it has no remote: its history exists only here"
        else:
            store = Store(cfg, config.host, config.identity())
            missing = min(store.unpushed_count(remote) for remote in cfg.remotes)
            if missing == 0:
                continue
            why = f"{missing} of its commits are on no remote yet (as of the last sync)"
        raise MemsyncError(
            f"cannot purge store {cfg.name} ({cfg.path}): {why}. Run `memsync sync` to push it "
            "(or `memsync remote add`), or add --force to delete it anyway"
        )


def _projects(config: Config | None) -> list[Path]:
    """The project directories memsync may have installed hooks or MCP entries in (``--project``):
    those of its tracks (``<project>/.agents/memory/...``), of Claude Code's project memory folders, and
    the current directory, and those an install recorded (``installs``)."""
    found: list[Path] = [Path.cwd()]
    found.extend(Path(i.project) for i in installs.recorded() if i.project is not None)
    for store in config.stores.values() if config is not None else ():
        for entry in store.entries:
            parts = entry.live.parts
            for i in range(1, len(parts) - 1):
                if parts[i : i + 2] == (".agents", "memory"):
                    found.append(Path(*parts[:i]))
    for folder in claude_code.project_folders(claude_code.projects_root()):
        project = claude_folders.project_path(folder)
        if project is not None:
            found.append(project)
    home = Path(os.path.abspath(Path.home()))
    unique = dict.fromkeys(Path(os.path.abspath(p)) for p in found)
    return [p for p in unique if p != home and p.is_dir()]


def _steps(path: Path, config: Config | None, projects: list[Path], purge: bool) -> Iterator[Step]:
    unit = service.unit_path()
    if unit.exists():
        yield Step(f"stop and remove the user service {unit}", lambda: service.uninstall().lines)
    pid = running_daemon_pid(path)
    if pid is not None:
        yield Step(f"stop the memsync daemon (PID {pid})", lambda: stop(path).lines)
    for project in [None, *projects]:
        for host in HOOK_HOSTS:
            file = settings_path(host, project)
            ours = _holds(
                file,
                partial(hooks_installed, host, project),
                "memsync's hooks (commands running memsync)",
            )
            if isinstance(ours, Step):
                yield ours
            elif ours:
                yield Step(f"remove memsync's hooks from {file}", partial(hooks.uninstall, host, project))
        for mcp_host in mcp_install.hosts_for(project):
            file = mcp_install.config_file(mcp_host, project)
            servers = registry.spec(mcp_host).key
            ours = _holds(
                file,
                partial(mcp_install.registered, mcp_host, project),
                f'the "{mcp_install.SERVER_NAME}" server under `{servers}`',
            )
            if isinstance(ours, Step):
                yield ours
            elif ours:
                yield Step(
                    f"remove memsync's MCP server from {file}",
                    partial(lambda h, p: [uninstall_line(h, p)], mcp_host, project),
                )
    if not purge:
        return
    for name, store in _stores(config):
        yield Step(f"delete store {name} ({store})", partial(_delete, store, f"deleted store {name}"))
    if path.exists():
        yield Step(f"delete {path}", partial(_delete, path, "deleted"))
    key = key_path()
    if key.exists():
        # A private key is never dropped unnamed: without it this device cannot open an encrypted remote.
        yield Step(
            f"delete this device's private key {key} ({_KEY_LOSS})",
            lambda: [*_delete(key, "deleted this device's private key"), f"warning: {_KEY_LOSS}"],
        )
    if trust.path().exists():
        yield Step(f"delete {trust.path()}", partial(_delete, trust.path(), "deleted"))
    if state_dir().exists():
        yield Step(f"delete memsync's state {state_dir()}", partial(_delete, state_dir(), "deleted"))


def _holds(file: Path, read: Callable[[], object], what: str) -> bool | Step:
    """Whether ``read`` (of ``file``) finds memsync's entries there. A file it cannot read (a host's own
    empty file, JSON with comments) is no reason to stop: when its text does not name memsync at all it
    is none of memsync's business (False); when it does, the Step warns, naming ``what`` to remove by
    hand (uninstall then exits with ``BY_HAND``)."""
    try:
        return bool(read())
    except MemsyncError as exc:
        try:
            mentioned = mcp_install.SERVER_NAME.encode() in file.read_bytes()
        except OSError:
            mentioned = False
        if not mentioned:
            return False
        warning = f"warning: memsync left {file} as it is, unreadable ({exc}); remove {what} from it by hand"
        return Step(f"leave {file} as it is (unreadable; it names memsync)", lambda: [warning], by_hand=True)


_KEY_LOSS = (
    "memory on an encrypted remote is unreadable to this device from now on, "
    "unless the key was saved with `memsync key export`"
)


def _host_files(projects: list[Path]) -> list[Path]:
    """The host files memsync may have edited: hook settings and MCP configs, the user's and
    ``projects``'."""
    files = [
        file
        for project in [None, *projects]
        for file in (
            *(settings_path(host, project) for host in HOOK_HOSTS),
            *(mcp_install.config_file(host, project) for host in mcp_install.hosts_for(project)),
        )
    ]
    return list(dict.fromkeys(files))


def _remove_backups(projects: list[Path]) -> list[str]:
    """Delete the backups memsync made of the host files it edited, now its entries are gone from them:
    each holds a file as it was before one of memsync's edits (uninstall's own: with memsync's entries),
    so restoring it would only bring memsync back; the file itself holds everything else. A backup whose
    file is missing, not a regular file, or still names memsync (unreadable, half-written by a host,
    left for the user to edit by hand) is kept and named: it may be the only whole copy."""
    lines: list[str] = []
    for file in _host_files(projects):
        backup = backup_path(file)
        if not backup.is_file() or backup.is_symlink():
            continue
        now = installs.file_bytes(file)
        if now is None or mcp_install.SERVER_NAME.encode() in now:
            # Unreadable, half-written, gone, or still naming memsync: the backup may be the only whole
            # copy of the user's file, so it stays.
            lines.append(
                f"kept {backup}: {file} still names memsync or cannot be read; the backup holds it as before"
            )
            continue
        backup.unlink()
        lines.append(f"deleted memsync's backup {backup} (memsync's entries are gone from the file)")
    return lines


def _remove_empty_dirs(path: Path) -> list[str]:
    """After a purge: delete memsync's own directories left empty (the stores' root and its parent, the
    config's directory), innermost first; a directory still holding anything stays."""
    stores = default_store_dir("-").parent
    lines: list[str] = []
    for directory in (stores, stores.parent, path.parent):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            lines.append(f"deleted the empty directory {directory}")
    return lines


def _delete(target: Path, done: str) -> list[str]:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink()
    return [f"{done} {target}"]


def _kept(path: Path, config: Config | None, projects: list[Path], purge: bool) -> list[str]:
    """The lines saying what stays on this machine."""
    lines: list[str] = []
    if not purge:
        if path.exists():
            lines.append(f"kept: the config {path}")
        if key_path().exists():
            lines.append(
                f"kept: this device's private key {key_path()} (it opens encrypted remotes; "
                "`memsync key export` backs it up; --purge deletes it)"
            )
        lines.extend(
            f"kept: store {name} {store} (its history; `memsync uninstall --purge` deletes it once pushed)"
            for name, store in _stores(config)
        )
    lines.extend(
        f"kept: {dated} (a copy memsync set aside for you rather than write over it; delete it when "
        "you no longer need it)"
        for file in _host_files(projects)
        for dated in sorted(file.parent.glob(f"{glob.escape(backup_path(file).name)}.*"))
    )
    if not purge and state_dir().exists():
        lines.append(f"kept: memsync's state {state_dir()} (sessions, locks; --purge deletes it)")
    lines.append("kept: the memory files agents wrote, where they are (memsync only synced them)")
    lines.append("memsync itself stays installed: `pip uninstall memsync` (or `pipx uninstall memsync`)")
    return lines

"""Run the daemon as a per-user service: a systemd user unit on Linux, a launchd agent on macOS.

The unit runs ``<this python> -P -m memsync daemon`` (``base.self_command``): the absolute path of the
interpreter memsync is installed in, so the service runs the same memsync as the shell that installed it,
and nothing from its working directory. Where no user systemd
is reachable (containers, WSL without systemd, SSH sessions without a user bus) installing writes the unit
file anyway, says so in one line and prints the command to run the daemon by other means.

Hardening: only options that work in a user unit without privileges. The seccomp-based ones
(``RestrictSUIDSGID=``, ``RestrictRealtime=``, ``RestrictNamespaces=``, ``LockPersonality=``,
``SystemCallArchitectures=``, ``RestrictAddressFamilies=``) are documented in systemd.exec(5) to work in
user mode, implying ``NoNewPrivileges=yes``, which we also set. The file-system namespacing options
(``ProtectSystem=``, ``ProtectHome=``, ``PrivateTmp=``, ``PrivateDevices=``, ``ProtectKernel*=``,
``ProtectControlGroups=``) are not used: in a user unit they need unprivileged user namespaces and imply
``PrivateUsers=`` (systemd >= 254; silently ignored or failing before), and memsync must write the tracked
memory directories, which may live anywhere under the home directory or a project. No ordering after
``network-online.target``: a user manager cannot see system targets, and memsync retries offline remotes.
``MemoryDenyWriteExecute=`` is left out because libffi (used through ctypes by the inotify observer)
may need writable+executable memory on some platforms.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memsync.base.paths import config_path
from memsync.base.self_command import memsync_argv
from memsync.commands.installs import new_dirs, record
from memsync.errors import MemsyncError

UNIT_NAME = "memsync.service"
LAUNCHD_LABEL = "io.github.memsync.daemon"
SYSTEMCTL_TIMEOUT_S = 30.0
# Paths the daemon must see exactly as the installing shell did (test sandboxes, custom XDG layouts).
PASSED_ENV = ("MEMSYNC_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
# The daemon sends READY=1 to $NOTIFY_SOCKET once its observer runs (memsync/daemon/loop.py).
SERVICE_TYPE = "notify"

HARDENING = (
    "NoNewPrivileges=yes",
    "LockPersonality=yes",
    "RestrictRealtime=yes",
    "RestrictSUIDSGID=yes",
    "RestrictNamespaces=yes",
    "SystemCallArchitectures=native",
    # AF_NETLINK: glibc's getaddrinfo asks the kernel for local addresses over netlink.
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
)


@dataclass(frozen=True)
class ServiceReport:
    """What a service command did: the unit (or plist) path, whether it is running, and lines for the user."""

    path: Path
    active: bool
    lines: tuple[str, ...]


def daemon_argv() -> list[str]:
    """The command the service runs: ``<this python> -P -m memsync daemon``."""
    return memsync_argv("daemon")


def service_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``PASSED_ENV`` set in ``environ`` (default ``os.environ``), to pin in the unit."""
    environ = os.environ if environ is None else environ
    return {key: environ[key] for key in PASSED_ENV if environ.get(key)}


def _quote(value: str) -> str:
    # systemd's own quoting: double quotes, with backslash escapes for backslash and the quote.
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def _exec_start(argv: Sequence[str]) -> str:
    return "ExecStart=" + " ".join(_quote(arg) for arg in argv)


def unit_text(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The systemd user unit that runs ``argv`` with ``env``; text of ``systemd/memsync.service``'s form.

    Arguments are quoted for systemd (spaces, quotes, ``%`` specifiers). Logs go to the journal.
    """
    lines = [
        "# memsync user service: written by `memsync service install`; rerun it after reinstalling memsync.",
        "[Unit]",
        "Description=memsync: sync AI-agent memory through git",
        # A daemon failing at start (bad config) is retried 5 times, then left stopped: see the journal.
        "StartLimitIntervalSec=300",
        "StartLimitBurst=5",
        "",
        "[Service]",
        f"Type={SERVICE_TYPE}",
        _exec_start(argv),
        "ExecReload=kill -HUP $MAINPID",
        *(f"Environment={_quote(f'{key}={value}')}" for key, value in sorted(env.items())),
        "Environment=PYTHONUNBUFFERED=1",
        "Restart=on-failure",
        "RestartSec=5",
        "TimeoutStopSec=60",
        "StandardOutput=journal",
        "StandardError=journal",
        "SyslogIdentifier=memsync",
        *HARDENING,
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def launchd_plist(argv: Sequence[str], env: Mapping[str, str], log_path: Path) -> bytes:
    """The launchd agent (macOS) that keeps ``argv`` running with ``env``, logging to ``log_path``."""
    return plistlib.dumps(
        {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(argv),
            "EnvironmentVariables": {**env, "PYTHONUNBUFFERED": "1"},
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "StandardOutPath": str(log_path),
            "StandardErrorPath": str(log_path),
        }
    )


def unit_dir() -> Path:
    """Where systemd looks for the user's own units: ``$XDG_CONFIG_HOME/systemd/user`` (``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def launchd_path() -> Path:
    """Where the macOS launchd agent goes: ``~/Library/LaunchAgents/<label>.plist``."""
    return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def unit_path() -> Path:
    """The service file of this platform: the launchd plist on macOS, else the systemd user unit."""
    return launchd_path() if sys.platform == "darwin" else unit_dir() / UNIT_NAME


def _systemctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemctl", "--user", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=SYSTEMCTL_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def user_systemd() -> str | None:
    """None when a user systemd manager answers, else one line saying why it cannot be used.

    ``systemctl --user is-system-running`` prints ``offline`` (exit 1) when no user manager or bus exists,
    as in most containers; ``running``, ``degraded``, ``starting`` mean a manager that can run the unit.
    """
    if sys.platform == "darwin":
        return "macOS has no systemd"
    if shutil.which("systemctl") is None:
        return "systemd --user is not available here (systemctl is not installed)"
    try:
        state = _systemctl("is-system-running").stdout.strip()
    except subprocess.TimeoutExpired:
        return f"systemctl --user did not answer within {SYSTEMCTL_TIMEOUT_S:.0f} s"
    if state in ("running", "degraded", "starting", "initializing", "maintenance"):
        return None
    answer = state or "no answer"
    return f"systemd --user is not available here (systemctl --user is-system-running: {answer})"


def _fallback(reason: str) -> str:
    command = shlex.join(daemon_argv())
    return (
        f"service install: not started, and nothing will start it: {reason}, so the service file is only a "
        "file. Run `memsync up` (the daemon, in a terminal left open), or in the background "
        f"`nohup {command} >>~/.memsync.log 2>&1 &`, or from your session's autostart"
    )


def install() -> ServiceReport:
    """Write the service for this user and start it where a service manager is reachable.

    Linux: writes ``<unit_dir()>/memsync.service``, then ``systemctl --user daemon-reload`` and
    ``enable --now``. macOS: writes the launchd plist and loads it with ``launchctl``. Otherwise the file
    is written and the report says how to run the daemon instead. Rerunning rewrites the file (a new
    interpreter path after reinstalling). Raises ``MemsyncError`` when there is no config yet (the
    service would fail at every start) and ``OSError`` if the file cannot be written; a failing
    ``systemctl`` is reported in the lines, not raised.
    """
    if not config_path().exists():
        raise MemsyncError(
            f"cannot install the service: no config at {config_path()}. "
            "Run `memsync init` first, then install the service"
        )
    argv, env = daemon_argv(), service_env()
    if sys.platform == "darwin":
        path = launchd_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        log = Path.home() / "Library" / "Logs" / "memsync.log"
        path.write_bytes(launchd_plist(argv, env, log))
        if shutil.which("launchctl") is None:
            return ServiceReport(path, False, (f"wrote {path}", _fallback("launchctl is not available")))
        loaded = subprocess.run(
            ["launchctl", "load", "-w", str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=SYSTEMCTL_TIMEOUT_S,
        )
        ok = loaded.returncode == 0
        return ServiceReport(
            path,
            ok,
            (
                f"wrote {path}",
                f"launchd agent loaded; logs in {log}"
                if ok
                else f"launchctl load failed: {loaded.stderr.strip()}",
            ),
        )
    path = unit_dir() / UNIT_NAME
    dirs = new_dirs(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Recorded so uninstall removes the unit's directory again when memsync made it and it is left empty.
    record(path, "systemd", "service", created=not path.exists(), dirs=dirs, project=None)
    path.write_text(unit_text(argv, env), encoding="utf-8")
    lines = [f"wrote {path}"]
    reason = user_systemd()
    if reason is not None:
        return ServiceReport(path, False, (*lines, _fallback(reason)))
    for args in (("daemon-reload",), ("enable", "--now", UNIT_NAME)):
        done = _systemctl(*args)
        if done.returncode != 0:
            lines.append(f"systemctl --user {' '.join(args)} failed: {done.stderr.strip()}")
            return ServiceReport(path, False, tuple(lines))
    lines.append("enabled and started memsync.service; logs: journalctl --user -u memsync -f")
    return ServiceReport(path, True, tuple(lines))


def uninstall() -> ServiceReport:
    """Stop and disable the service where a manager is reachable, and remove its file.

    Removing a service that is not installed is not an error (the report says so).
    """
    if sys.platform == "darwin":
        path = launchd_path()
        if path.exists() and shutil.which("launchctl"):
            subprocess.run(
                ["launchctl", "unload", "-w", str(path)],
                capture_output=True,
                check=False,
                timeout=SYSTEMCTL_TIMEOUT_S,
            )
    else:
        path = unit_dir() / UNIT_NAME
        if user_systemd() is None:
            _systemctl("disable", "--now", UNIT_NAME)
    if not path.exists():
        return ServiceReport(path, False, (f"no service installed ({path} does not exist)",))
    path.unlink()
    if sys.platform != "darwin" and user_systemd() is None:
        _systemctl("daemon-reload")
    return ServiceReport(path, False, (f"stopped and removed {path}",))


def status() -> ServiceReport:
    """Whether the service file exists and, where a manager is reachable, whether it is active."""
    path = unit_path()
    if not path.exists():
        return ServiceReport(
            path, False, (f"not installed ({path} does not exist); run `memsync service install`",)
        )
    installed = (f"installed: {path}", *_stale(path))
    if sys.platform == "darwin":
        return ServiceReport(path, False, installed)
    reason = user_systemd()
    if reason is not None:
        return ServiceReport(path, False, (*installed, f"state unknown: {reason}"))
    state = _systemctl("is-active", UNIT_NAME).stdout.strip()
    enabled = _systemctl("is-enabled", UNIT_NAME).stdout.strip()
    return ServiceReport(path, state == "active", (*installed, f"{state}, {enabled}"))


def _stale(path: Path) -> tuple[str, ...]:
    """A line saying so when the service file at ``path`` does not run ``daemon_argv()`` (an older
    memsync's command, or another interpreter's); else none."""
    argv = daemon_argv()
    try:
        data = path.read_bytes()
        if sys.platform == "darwin":
            runs = plistlib.loads(data).get("ProgramArguments") == argv
        else:
            runs = _exec_start(argv) in data.decode().splitlines()
    except (OSError, ValueError, plistlib.InvalidFileException):
        runs = False
    if runs:
        return ()
    return (f"its command differs from this memsync's ({shlex.join(argv)}): run `memsync service install`",)

"""`memsync demo`: two simulated machines and one shared bare remote in a temporary directory.

Each machine has its own HOME, XDG directories, git identity and config, and runs a real
``python -P -m memsync daemon`` subprocess, exactly as a user's machine would. The demo appends memory on
one and shows it arriving on the other, appends on both at once, edits one curated entry on both, shows
the merged results and ``memsync log``, then stops the daemons, removes the directory (unless ``--keep``)
and prints how long it all took. Needs only git.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memsync.base import git
from memsync.base.self_command import memsync_argv
from memsync.errors import MemsyncError

ROLE = "demo-agent"
WAIT_S = 25.0
POLL_S = 0.05
# Short timings so the demo takes seconds; the defaults (1 s debounce, 10 s pull) suit real use.
DEMO_CONFIG = 'debounce_s = 0.2\nmax_delay_s = 2.0\npull_interval_s = 2.0\nhost = "{host}"\n'
# Variables of the calling shell that would leak its identity or config into the simulated machines.
_DROPPED_ENV = (
    "MEMSYNC_CONFIG",
    "NOTIFY_SOCKET",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_GLOBAL",
)

ENTRY = """---
name: Deploy window
description: When deploys are allowed
type: project
---

Deploys happen on weekdays.
Ask in #ops before deploying.
"""


@dataclass
class Machine:
    """One simulated machine: its home, environment and daemon process."""

    name: str
    home: Path
    env: dict[str, str]
    daemon: subprocess.Popen[bytes] | None = None

    @property
    def role_dir(self) -> Path:
        """The agent's role directory on this machine."""
        return self.home / ".agents" / "memory" / ROLE

    @property
    def log_path(self) -> Path:
        """Where this machine's daemon writes its log."""
        return self.home / "daemon.log"


def _machine(root: Path, name: str) -> Machine:
    home = root / name
    home.mkdir(parents=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        f"[user]\n\tname = {name.title()}\n\temail = {name}@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = {key: value for key, value in os.environ.items() if key not in _DROPPED_ENV}
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "PYTHONUNBUFFERED": "1",
        }
    )
    config = home / ".config" / "memsync" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(DEMO_CONFIG.format(host=f"{name}-laptop"))
    return Machine(name, home, env)


def _memsync(machine: Machine, *args: str) -> str:
    done = subprocess.run(
        memsync_argv(*args),
        env=machine.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise MemsyncError(
            f"demo failed: `memsync {' '.join(args)}` failed on {machine.name}: "
            f"{done.stderr.strip()}. Run `memsync doctor`"
        )
    return done.stdout


def _start(machine: Machine) -> None:
    with machine.log_path.open("ab") as log:
        machine.daemon = subprocess.Popen(
            memsync_argv("daemon"),
            env=machine.env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )


def _stop(machines: list[Machine]) -> None:
    """SIGTERM every running daemon at once, then wait for each (SIGKILL after 30 s)."""
    running = [m.daemon for m in machines if m.daemon is not None and m.daemon.poll() is None]
    for daemon in running:
        daemon.send_signal(signal.SIGTERM)
    for daemon in running:
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def _wait(what: str, predicate: Callable[[], bool], machines: list[Machine]) -> float:
    """Poll ``predicate`` until true; the seconds it took. On timeout raise with the daemons' log tails."""
    start = time.monotonic()
    while not predicate():
        for machine in machines:
            if machine.daemon is not None and machine.daemon.poll() is not None:
                raise MemsyncError(
                    f"demo failed: the daemon on {machine.name} exited "
                    f"({machine.daemon.returncode}) while waiting for {what}: "
                    f"{_tail(machine)}. Run `memsync doctor`"
                )
        if time.monotonic() - start > WAIT_S:
            logs = "; ".join(f"{m.name}: {_tail(m)}" for m in machines)
            raise MemsyncError(
                f"demo failed: {what} did not happen within {WAIT_S:.0f} s ({logs}). Run `memsync doctor`"
            )
        time.sleep(POLL_S)
    return time.monotonic() - start


def _tail(machine: Machine) -> str:
    try:
        lines = machine.log_path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return " | ".join(lines[-3:]) or "empty log"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(text)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines())


def run_demo(print_line: Callable[[str], None], keep: bool = False) -> int:
    """Run the demo, printing what happens through ``print_line``; return 0 when everything arrived.

    Uses a new temporary directory (removed at the end unless ``keep``), two daemon subprocesses and a
    bare git remote; 11-13 s on a 2-core machine (its last line says how long it took). Raises
    ``MemsyncError`` (with the daemons' last log lines) when a step does not complete within ``WAIT_S``
    seconds; the daemons are stopped in every case.
    """
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="memsync-demo-"))
    machines: list[Machine] = []
    try:
        print_line(f"demo directory: {root}")
        remote = root / "remote.git"
        git.check(["init", "--quiet", "--bare", "--initial-branch=main", str(remote)], timeout=60)
        alice, bob = _machine(root, "alice"), _machine(root, "bob")
        machines = [alice, bob]
        today = datetime.now(UTC).strftime("%Y-%m-%d")
        daily = f"daily/{today}.md"

        alice.role_dir.joinpath("daily").mkdir(parents=True)
        alice.role_dir.joinpath("deploy_window.md").write_text(ENTRY)
        alice.role_dir.joinpath("MEMORY.md").write_text(
            f"# Memory index — {ROLE}\n\n- [Deploy window](deploy_window.md) — When deploys are allowed\n"
        )
        alice.role_dir.joinpath(daily).write_text(f"# Daily log — {today}\n\n")
        print_line(f"\n== alice: an agent's memory in {alice.role_dir}; `memsync init --remote {remote}`")
        print_line(_indent(_memsync(alice, "init", "--remote", str(remote))))
        _start(alice)

        bob.role_dir.mkdir(parents=True)
        print_line(
            "\n== bob: an empty role directory; `memsync init` clones the remote, alice's daemon "
            "pushes her memory"
        )
        print_line(_indent(_memsync(bob, "init", "--remote", str(remote))))
        _start(bob)
        took = _wait(
            "alice's memory on bob", lambda: _read(bob.role_dir / "deploy_window.md") == ENTRY, machines
        )
        names = sorted(p.name for p in bob.role_dir.iterdir())
        print_line(f"bob received alice's memory in {took:.1f} s: {names}")

        line = "- [09:00] The staging database is reset every Monday.\n"
        print_line(f"\n== alice appends to {daily}: {line.strip()}")
        _append(alice.role_dir / daily, line)
        took = _wait("the appended line on bob", lambda: line in _read(bob.role_dir / daily), machines)
        print_line(f"arrived on bob after {took:.1f} s")

        lines = [
            (alice, "- [09:05] alice: CI is green again.\n"),
            (bob, "- [09:05] bob: flaky test quarantined.\n"),
        ]
        print_line("\n== alice and bob append to the same daily log at the same moment")
        for machine, text in lines:
            _append(machine.role_dir / daily, text)
        took = _wait(
            "both appends on both machines",
            lambda: all(text in _read(m.role_dir / daily) for m in machines for _, text in lines),
            machines,
        )
        print_line(f"both machines hold both lines after {took:.1f} s; bob's {daily}:")
        print_line(_indent(_read(bob.role_dir / daily)))

        print_line("\n== both edit deploy_window.md at once: alice changes the first rule, bob adds one")
        alice_text = ENTRY.replace("Deploys happen on weekdays.", "Deploys happen Monday to Thursday.")
        bob_text = ENTRY + "Never deploy during a release freeze.\n"
        alice.role_dir.joinpath("deploy_window.md").write_text(alice_text)
        bob.role_dir.joinpath("deploy_window.md").write_text(bob_text)

        def merged() -> bool:
            texts = {_read(m.role_dir / "deploy_window.md") for m in machines}
            text = texts.pop()
            return not texts and "Monday to Thursday" in text and "freeze" in text

        took = _wait("the merged entry on both machines", merged, machines)
        print_line(f"merged on both machines after {took:.1f} s:")
        print_line(_indent(_read(alice.role_dir / "deploy_window.md")))

        print_line("\n== `memsync log` on bob: who wrote what, and when")
        for machine in machines:  # the log reads git history only: let the daemons stop meanwhile
            if machine.daemon is not None:
                machine.daemon.send_signal(signal.SIGTERM)
        print_line(_indent(_memsync(bob, "log")))
    finally:
        _stop(machines)
        if keep:
            print_line(f"\nkept {root} (daemon logs: */daemon.log)")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print_line(f"\ndemo finished in {time.monotonic() - started:.1f} s")
    return 0

"""What the daemon benchmarks share: the idle cost of a running daemon read from ``/proc`` (CPU seconds
of the process and of its reaped git children, resident set size), and the role directories it tracks
meanwhile."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class IdleResult:
    """Idle cost of one daemon over ``window_s`` seconds: its own CPU seconds, its reaped children's
    (git) CPU seconds, and its resident set size (bytes) at the end and at peak."""

    window_s: float
    dirs: int
    cpu_s: float
    children_cpu_s: float
    rss_bytes: int
    hwm_bytes: int


def proc_cpu(pid: int) -> tuple[float, float]:
    """(own utime + stime, reaped children's cutime + cstime) of process ``pid``, in CPU seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rpartition(")")[2].split()
    # fields[0] is field 3 (state) of proc(5): utime, stime, cutime, cstime are fields 14-17.
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime) / TICKS, (cutime + cstime) / TICKS


def proc_status_bytes(pid: int, key: str) -> int:
    """A ``kB`` line of ``/proc/<pid>/status`` (e.g. ``VmRSS``), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"/proc/{pid}/status has no {key}")


def fill_role(role_dir: Path, n: int) -> None:
    """A role directory in the markdown layout: index, two curated entries and a daily log."""
    (role_dir / "daily").mkdir(parents=True, exist_ok=True)
    (role_dir / "MEMORY.md").write_text(
        f"# Memory of role {n}\n\n- [Build](build.md) - how the build runs\n"
        "- [Deploy](deploy.md) - how deploys run\n"
    )
    for slug in ("build", "deploy"):
        (role_dir / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {slug} notes of role {n}\ntype: project\n---\n\n"
            f"The {slug} of role {n} runs from the Makefile.\n"
        )
    (role_dir / "daily" / "2026-11-30.md").write_text(f"# 2026-11-30\n\n- [09:00] role {n} started\n")


def make_roles(home: Path, count: int) -> dict[str, str]:
    """Role directories ``role01`` .. under ``home/.agents/memory`` for a peer at ``home``: ``count - 1`` of
    them (Peer.create makes and tracks the ``count``-th itself). Returns them as extra tracks."""
    extra: dict[str, str] = {}
    for n in range(1, count):
        role_dir = home / ".agents" / "memory" / f"role{n:02d}"
        fill_role(role_dir, n)
        extra[str(role_dir)] = f"roles/role{n:02d}"
    return extra


def idle_cost(pid: int, window_s: float, dirs: int) -> IdleResult:
    """CPU and RSS of the running process ``pid`` over ``window_s`` seconds (it tracks ``dirs`` role
    directories)."""
    cpu0, children0 = proc_cpu(pid)
    start = time.monotonic()
    time.sleep(window_s)
    cpu1, children1 = proc_cpu(pid)
    window = time.monotonic() - start
    rss, hwm = proc_status_bytes(pid, "VmRSS"), proc_status_bytes(pid, "VmHWM")
    return IdleResult(window, dirs, cpu1 - cpu0, children1 - children0, rss, hwm)


def load() -> str:
    """The machine's 1-minute load average, with the CPU count (other work skews every figure here)."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"

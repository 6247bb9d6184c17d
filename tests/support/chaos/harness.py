"""The chaos run shared by ``tests/system/test_chaos.py`` (short) and ``bench/chaos.py`` (long).

Three peers by default (own HOME, config, store, daemon) and one bare remote, reached as a local path or
over real ssh or HTTPS (``tests.support.servers.transport``). On each peer two writer processes
(``tests/support/chaos/writer.py``) append entries, tombstones, supersedes and daily-log lines and rewrite
curated
entries; one peer's writers skew their timestamps by up to +/- 90 s. Meanwhile daemons are killed with
SIGKILL at random moments and restarted, the remote is taken away for random periods (a path remote is
renamed away, a server is killed; with partitions, the links of a random group of peers are cut while
the others go on), and one peer runs ``memsync compact`` on its memory file once. Then the writers stop
and the daemons sync until every peer agrees. ``check`` measures DESIGN I1-I4 on the result.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memsync.base.layout import is_append_only
from memsync.formats.jsonl.canonical import canonical_json
from memsync.formats.jsonl.parse import parse_memory
from memsync.formats.jsonl.view import build_view
from tests.support.blobs import blobs, whole_lines
from tests.support.helpers import REPO_ROOT, wait_for
from tests.support.peers import DAY, MEMORY_FILE, Peer, encrypted
from tests.support.servers.transport import Kind, Remote, open_remote

NAMES = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")
SKEWED = "carol"
SHARED_SLUG = "shared-notes"
MARKERS = (b"<<<<<<<", b">>>>>>>")


@dataclass
class Figures:
    """What a chaos run measured (counts; durations in seconds)."""

    setup: str = ""
    entries_written: int = 0
    daily_lines_written: int = 0
    lost: int = 0
    duplicated_memory: int = 0
    duplicated_daily: int = 0
    compacted_away: int = 0
    blobs_checked: int = 0
    torn_blobs: int = 0
    markers: int = 0
    kills: int = 0
    outages: int = 0
    outage_s: float = 0.0
    converge_s: float = 0.0
    views_identical: bool = False
    whole_files_identical: bool = False
    daily_identical: bool = False
    compact_done: bool = False
    problems: list[str] = field(default_factory=list)

    def render(self) -> str:
        """The figures as printed lines."""
        return "\n".join(
            [
                *([self.setup] if self.setup else []),
                f"memory lines written (entries, tombstones, supersedes): {self.entries_written}",
                f"daily-log lines written: {self.daily_lines_written}",
                f"lines lost (I1): {self.lost}  (removed by compact as dead: {self.compacted_away}); "
                f"extra copies: memory {self.duplicated_memory}, daily {self.duplicated_daily}",
                f"append-only blobs checked: {self.blobs_checked}; torn (I2): {self.torn_blobs}",
                f"conflict markers in blobs or live files (I3): {self.markers}",
                f"identical on all peers (I4): views {self.views_identical}, whole files "
                f"{self.whole_files_identical}, daily-log lines {self.daily_identical}",
                f"daemon SIGKILLs survived: {self.kills}",
                f"remote outages: {self.outages}, {self.outage_s:.1f} s in all",
                f"compact run once: {self.compact_done}",
                f"seconds to converge after the writers stopped: {self.converge_s:.1f}",
                *(f"PROBLEM: {p}" for p in self.problems),
            ]
        )


@dataclass
class Chaos:
    """One chaos run under ``root``: build with :meth:`create`, then :meth:`run` and :meth:`check`."""

    root: Path
    link: Remote
    peers: list[Peer]
    rng: random.Random
    stack: ExitStack
    figures: Figures = field(default_factory=Figures)
    writers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    # The store is encrypted: the remote holds sealed bundles, so its branch head is no store head.
    encrypt: bool = False

    @classmethod
    def create(
        cls,
        root: Path,
        seed: int,
        *,
        peers: int = 3,
        transport: Kind = "path",
        partitions: bool = False,
        encrypt: bool = False,
    ) -> Chaos:
        """Lay out the remote (behind its server, for ``transport`` ssh or https; with ``partitions``,
        in network namespaces) and ``peers`` peers (stores initialised, daemons not started; with
        ``encrypt``, set to encrypt, each key added by the first peer). Raises
        ``tests.support.servers.process.Unavailable`` when this machine cannot run that transport."""
        stack = ExitStack()
        try:
            link = stack.enter_context(open_remote(transport, root, partitions=partitions))
            names = [*NAMES, *(f"peer{n}" for n in range(len(NAMES) + 1, peers + 1))][:peers]
            made: list[Peer] = []
            for name in names:
                peer = link.peer(root, name, pull_interval_s=2.0, init_store=not encrypt)
                made.append(encrypted(peer, made[0] if made else None) if encrypt else peer)
        except BaseException:
            stack.close()
            raise
        chaos = cls(root, link, made, random.Random(seed), stack, encrypt=encrypt)
        chaos.figures.setup = f"{peers} {'encrypted ' if encrypt else ''}peers over {transport}" + (
            ", partitions (links cut in network namespaces)" if partitions else ""
        )
        return chaos

    @property
    def remote(self) -> Path:
        """The bare repository (on this machine whatever the transport)."""
        return self.link.path

    @property
    def stop_file(self) -> Path:
        """The file whose existence tells every writer to stop."""
        return self.root / "stop-writers"

    def record(self, peer: Peer, n: int) -> Path:
        """Where writer ``n`` of ``peer`` records every line it wrote."""
        return self.root / "records" / f"{peer.name}-{n}.jsonl"

    # --- the run ---------------------------------------------------------------------------------

    def start_writers(self) -> None:
        """Two writer processes per peer, with the peer's environment (the same writer lock)."""
        (self.root / "records").mkdir(exist_ok=True)
        for peer in self.peers:
            for n in (1, 2):
                spec = {
                    "memory_file": str(peer.memory_file),
                    "role_dir": str(peer.role_dir),
                    "tag": f"{peer.name[0]}{n}x",
                    "seed": self.rng.randrange(1 << 30),
                    "skew_s": 90.0 if peer.name == SKEWED else 0.0,
                    "pause_s": [0.02, 0.25],
                    "stop_file": str(self.stop_file),
                    "record": str(self.record(peer, n)),
                    "day": DAY,
                    "shared_slug": SHARED_SLUG,
                }
                self.writers.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "tests.support.chaos.writer", json.dumps(spec)],
                        cwd=REPO_ROOT,
                        env={**os.environ, **peer.env},
                    )
                )

    def stop_writers(self) -> None:
        """Tell the writers to stop and wait for them (a writer that failed is a problem)."""
        self.stop_file.touch()
        for proc in self.writers:
            code = proc.wait(30)
            if code != 0:
                self.figures.problems.append(f"a writer exited {code}")

    def run(self, write_s: float, min_kills: int, log: bool = False, converge_timeout_s: float = 180) -> None:
        """Write for ``write_s`` seconds while killing daemons (at least ``min_kills`` in all, spread
        over the period), taking the remote away now and then and compacting once; then stop the writers,
        bring everything back and wait until every peer agrees (``figures.converge_s``)."""
        for peer in self.peers:
            peer.start(wait_ready=False)
        for peer in self.peers:
            # All start-up cycles at once contend for the remote: more peers, longer.
            peer.wait_ready(timeout=30 + 15 * len(self.peers))
        self.start_writers()
        start = time.monotonic()
        end = start + write_s
        kill_gap = write_s / max(1, min_kills)
        next_kill = start + self.rng.uniform(0.2, 1.0) * kill_gap
        next_outage = start + self.rng.uniform(2.0, 6.0)
        outage_until: float | None = None
        outage_from = 0.0
        compact_at = start + write_s * self.rng.uniform(0.3, 0.6)
        # In a thread: compact waits for the daemon's cycle, which a cut link can hold for a while.
        compactor = threading.Thread(
            target=self._compact_once, args=(self.peers[min(2, len(self.peers) - 1)],)
        )
        shown = (0, 0)
        while (now := time.monotonic()) < end or self.figures.kills < min_kills:
            if now >= next_kill:
                peer = self.rng.choice(self.peers)
                if not peer.proc_dead():
                    peer.kill()
                    self.figures.kills += 1
                peer.start(wait_ready=False)
                next_kill = now + self.rng.uniform(0.3, 1.7) * kill_gap
            if outage_until is None and now >= next_outage and now < end - 2:
                cut = self.rng.sample(self.peers, self.rng.randint(1, max(1, len(self.peers) // 2)))
                self.link.take_down(cut)
                outage_from, outage_until = now, now + self.rng.uniform(1.0, 5.0)
                self.figures.outages += 1
            elif outage_until is not None and now >= outage_until:
                self.link.bring_back()
                self.figures.outage_s += now - outage_from
                outage_until = None
                next_outage = now + self.rng.uniform(3.0, 10.0)
            if compactor.ident is None and now >= compact_at:
                compactor.start()
            progress = (self.figures.kills, self.figures.outages)
            if log and progress != shown:
                print(f"{now - start:6.1f} s  kills {progress[0]}  outages {progress[1]}", flush=True)
                shown = progress
            time.sleep(0.05)
        if outage_until is not None:
            self.link.bring_back()
            self.figures.outage_s += time.monotonic() - outage_from
        if compactor.ident is not None:
            compactor.join(300)
        self.stop_writers()
        for peer in self.peers:
            if peer.proc_dead():
                peer.start(wait_ready=False)
        settled = time.monotonic()
        wait_for(self.converged, timeout=converge_timeout_s, interval=0.5, what="convergence of the peers")
        self.figures.converge_s = time.monotonic() - settled

    def _compact_once(self, peer: Peer) -> None:
        self.figures.compact_done = self.compact(peer)

    def compact(self, peer: Peer) -> bool:
        """``memsync compact`` on ``peer``'s memory file (retried while a writer holds the lock; it
        waits for the daemon's cycle, which a cut link holds up to ssh's keep-alive limit)."""
        why = "no attempt"
        for _ in range(50):
            try:
                result = peer.cli("compact", str(peer.memory_file), timeout=180)
            except subprocess.TimeoutExpired:
                why = "it waited for the daemon's cycle for 180 s"
                continue
            if result.returncode == 0:
                return True
            why = result.stderr.strip()
            time.sleep(0.02)
        self.figures.problems.append(f"compact never succeeded: {why}")
        return False

    def stop_daemons(self) -> None:
        """SIGTERM every daemon; each must exit 0."""
        for peer in self.peers:
            if not peer.proc_dead():
                code = peer.stop()
                if code != 0:
                    self.figures.problems.append(f"{peer.name}: daemon exited {code} on SIGTERM")

    def kill_all(self) -> None:
        """Clean-up: kill whatever still runs (writers, daemons), then stop the servers and delete the
        namespaces."""
        self.stop_file.touch()
        for proc in self.writers:
            with suppress(ProcessLookupError):
                proc.kill()
        for peer in self.peers:
            if not peer.proc_dead():
                peer.kill()
        self.stack.close()

    # --- convergence and checks --------------------------------------------------------------------

    def snapshot(self, peer: Peer) -> tuple[bytes, Counter[bytes], Counter[bytes], dict[str, bytes], str]:
        """(view, memory line multiset, daily line multiset, whole files, store head) of ``peer``."""
        memory = peer.read_live(MEMORY_FILE)
        parsed = parse_memory(memory)
        view = b"\n".join(
            canonical_json(e.to_obj())
            for e in build_view([r.record for r in parsed.records], datetime(2026, 12, 1, tzinfo=UTC))
        )
        daily = peer.read_live(f"daily/{DAY}.md")
        whole = {
            p.relative_to(peer.role_dir).as_posix(): p.read_bytes()
            for p in sorted(peer.role_dir.rglob("*"))
            if p.is_file() and not is_append_only(p.relative_to(peer.role_dir).as_posix())
        }
        head = peer.store_git("rev-parse", "HEAD").strip()
        return (
            view,
            Counter(memory.splitlines(keepends=True)),
            Counter(daily.splitlines(keepends=True)),
            whole,
            head,
        )

    def converged(self) -> bool:
        """Every peer has the same memory view, daily-log lines, whole files and store head, and so has
        the remote. (Memory-file lines may differ: a compacted file lacks dead lines the others keep.)"""
        snaps = [self.snapshot(peer) for peer in self.peers]
        remote_head = subprocess.run(
            ["git", "rev-parse", "main"], cwd=self.remote, capture_output=True, text=True, check=False
        ).stdout.strip()
        same = all(
            (s[0], s[2], s[3], s[4]) == (snaps[0][0], snaps[0][2], snaps[0][3], snaps[0][4]) for s in snaps
        )
        if self.encrypt:  # every peer's record of what the remote holds is its own head
            remote_head = snaps[0][4]
            for peer in self.peers:
                tracking = subprocess.run(
                    ["git", "rev-parse", "-q", "--verify", "refs/remotes/origin/main"],
                    cwd=peer.store,
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout.strip()
                if tracking != remote_head:
                    return False
        return same and snaps[0][4] == remote_head

    def check(self) -> Figures:
        """Measure I1-I4 on the settled peers and return the figures."""
        f = self.figures
        written: Counter[tuple[str, bytes]] = Counter()
        for path in sorted((self.root / "records").glob("*.jsonl")):
            for raw in path.read_bytes().splitlines():
                item = json.loads(raw)
                written[(item["file"], item["line"].encode())] += 1
        f.entries_written = sum(n for (kind, _), n in written.items() if kind == "memory")
        f.daily_lines_written = sum(n for (kind, _), n in written.items() if kind == "daily")
        dead = self._dead_ids(line for (kind, line), _ in written.items() if kind == "memory")
        snaps = [self.snapshot(peer) for peer in self.peers]
        for _view, memory, daily, _whole, _head in snaps:
            for (kind, line), n in written.items():
                have = (memory if kind == "memory" else daily)[line]
                if have < n:
                    obj = json.loads(line) if kind == "memory" else {}
                    if f.compact_done and not obj.get("deleted") and obj.get("id") in dead:
                        f.compacted_away += 1
                    else:
                        f.lost += n - have
                if kind == "memory":
                    f.duplicated_memory += max(0, have - n)
                else:
                    f.duplicated_daily += max(0, have - n)
        f.views_identical = all(s[0] == snaps[0][0] for s in snaps)
        f.daily_identical = all(s[2] == snaps[0][2] for s in snaps)
        f.whole_files_identical = all(s[3] == snaps[0][3] for s in snaps)
        for peer in self.peers:
            self._check_blobs(peer.store)
            for path in [peer.memory_file, *peer.role_dir.rglob("*")]:
                if path.is_file() and any(m in path.read_bytes() for m in MARKERS):
                    f.markers += 1
                    f.problems.append(f"conflict marker in live file {path}")
        self._check_blobs(self.remote)
        return f

    @staticmethod
    def _dead_ids(lines: Iterable[bytes]) -> set[str]:
        dead: set[str] = set()
        for line in lines:
            obj = json.loads(line)
            if obj.get("deleted"):
                dead.add(obj["id"])
            elif obj.get("supersedes"):
                dead.add(obj["supersedes"])
        return dead

    def _check_blobs(self, repo: Path) -> None:
        """Every blob in ``repo``'s history: no conflict marker; append-only files: whole lines that
        parse (JSON objects for memory files, UTF-8 for daily logs)."""
        f = self.figures
        for path, data in blobs(repo):
            if any(line.startswith(MARKERS) for line in data.splitlines()):
                f.markers += 1
                f.problems.append(f"conflict marker in a blob of {path} in {repo}")
            if not is_append_only(path):
                continue
            f.blobs_checked += 1
            if not whole_lines(path, data):
                f.torn_blobs += 1
                f.problems.append(f"torn blob of {path} in {repo}")

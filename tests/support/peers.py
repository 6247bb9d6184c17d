"""A peer for end-to-end tests: its own HOME, config, store and `python -m memsync daemon` subprocess.

Typical use::

    remote = bare_remote(tmp_path / "remote.git")
    a = Peer.create(tmp_path, "alice", remote)
    b = Peer.create(tmp_path, "bob", remote)
    with a.running(), b.running():
        line = a.append_entry("The harbor site blocks requests without a user agent.")
        wait_for(lambda: line in b.read_live(MEMORY_FILE))

Timings are short (debounce 0.2 s, max delay 1 s, pull interval 2 s) so tests wait on conditions briefly.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomli_w

from memsync.base.fsio import append_once, atomic_write
from memsync.store.access import ensure_store
from memsync.store.remotes import local_remote_path
from memsync.tracks.resolve import load_tracks
from tests.conftest import isolated_env
from tests.support.helpers import cli_main, git, wait_for
from tests.support.servers.process import in_netns

ROLE = "qa"
ROLE_STORE = f"roles/{ROLE}"
MEMORY_FILE = "memory.jsonl"
MEMORY_STORE = f"memory/{MEMORY_FILE}"
DAY = "2026-11-30"
HEADER = b'{"created_at":"2026-11-30T00:00:00Z","format":"agent-memory/0.1"}\n'


def entry_line(text: str, kind: str = "lesson", **extra: Any) -> bytes:
    """One agent-memory/0.1 entry line (with its newline) with a fresh id and the current time."""
    entry = {
        "id": secrets.token_hex(6),
        "kind": kind,
        "text": text,
        "scope": "global",
        "source": "session:test",
        "confidence": 0.9,
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        **extra,
    }
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@dataclass
class Peer:
    """One machine: ``home`` (HOME and XDG dirs), ``role_dir`` and ``memory_file`` (its live tracked
    paths), ``store`` (its store's work tree), ``config`` (its config.toml) and its daemon process."""

    name: str
    home: Path
    remote: Path
    env: dict[str, str]
    config: Path
    store: Path
    role_dir: Path
    memory_file: Path
    proc: subprocess.Popen[bytes] | None = None
    netns: str | None = None
    # The interpreter its daemon and CLI run with: another checkout's, to measure that code's design.
    python: str = sys.executable
    log_path: Path = field(init=False)
    _terminated: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.log_path = self.home / "daemon.log"

    @classmethod
    def create(
        cls,
        root: Path,
        name: str,
        remote: Path,
        *,
        debounce_s: float = 0.2,
        max_delay_s: float = 1.0,
        pull_interval_s: float = 2.0,
        extra_tracks: Mapping[str, str] = {},
        init_store: bool = True,
        memory_header: bool = True,
        url: str | None = None,
        netns: str | None = None,
    ) -> Peer:
        """Lay out a peer under ``root/name``: live role dir and memory file (with a header line), a
        config tracking both (plus ``extra_tracks``: live path -> store path), and, with ``init_store``,
        its store cloned from or initialised for ``remote``. ``url``: the remote's URL in the config when
        it is not the path ``remote`` (ssh, https; ``tests.support.servers.transport`` sets up the rest);
        ``netns``: the network namespace its daemon and CLI run in."""
        home = root / name
        env = isolated_env(home)
        config = home / ".config" / "memsync" / "config.toml"
        env["MEMSYNC_CONFIG"] = str(config)
        store = home / ".local" / "share" / "memsync" / "stores" / "main"
        role_dir = home / ".agents" / "memory" / ROLE
        memory_file = home / ".agent-memory" / MEMORY_FILE
        role_dir.mkdir(parents=True)
        memory_file.parent.mkdir(parents=True)
        if memory_header:
            memory_file.write_bytes(HEADER)
        tracks = [{"path": str(role_dir), "as": ROLE_STORE}, {"path": str(memory_file), "as": MEMORY_STORE}]
        tracks += [{"path": live, "as": as_} for live, as_ in extra_tracks.items()]
        raw = {
            "host": name,
            "debounce_s": debounce_s,
            "max_delay_s": max_delay_s,
            "pull_interval_s": pull_interval_s,
            "author": {"name": name, "email": f"{name}@example.invalid"},
            "stores": {
                "main": {"path": str(store), "remotes": {"origin": url or str(remote)}, "track": tracks}
            },
        }
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(tomli_w.dumps(raw))
        peer = cls(name, home, remote, env, config, store, role_dir, memory_file, netns=netns)
        if init_store:
            peer.init_store()
        return peer

    def init_store(self, *, own_process: bool = False) -> None:
        """Create the store the way memsync does (cloned from the remote if it has history). Over a
        network remote, or with ``own_process`` (an encrypted store: this peer's key lives in its own
        config dir), it runs in a subprocess with this peer's environment (and namespace)."""
        config = load_tracks(self.config)
        if (
            not own_process
            and self.netns is None
            and all(
                local_remote_path(url) is not None
                for cfg in config.stores.values()
                for url in cfg.remotes.values()
            )
        ):
            for store_cfg in config.stores.values():
                ensure_store(config, store_cfg)
            return
        self.run_python(
            "from pathlib import Path\n"
            "from memsync.tracks.resolve import load_tracks\n"
            "from memsync.store.access import ensure_store\n"
            f"config = load_tracks(Path({str(self.config)!r}))\n"
            "for store_cfg in config.stores.values():\n"
            "    ensure_store(config, store_cfg)\n"
        )

    @property
    def prefix(self) -> list[str]:
        """What runs a command of this peer in its network namespace (empty outside one)."""
        return in_netns(self.netns, [])

    def run_python(self, code: str) -> str:
        """Run ``code`` in a Python subprocess with this peer's env; return stdout (raise on failure)."""
        result = subprocess.run(
            [*self.prefix, self.python, "-c", code],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"{self.name}: python failed: {result.stderr}")
        return result.stdout

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``python -m memsync ARGS`` with this peer's environment (never raises on exit code)."""
        return subprocess.run(
            [*self.prefix, self.python, "-m", "memsync", *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def main(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``cli`` through the CLI's entry point in this process, with this peer's environment
        (``tests.support.helpers.cli_main``); only outside a network namespace."""
        assert self.netns is None, f"{self.name} runs in a network namespace: use cli"
        return cli_main(*args, env=self.env)

    def cli_ok(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``cli(ARGS)``, required to exit 0."""
        done = self.cli(*args)
        assert done.returncode == 0, f"{self.name}: memsync {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def main_ok(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``main(ARGS)``, required to exit 0."""
        done = self.main(*args)
        assert done.returncode == 0, f"{self.name}: memsync {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    # --- the daemon -------------------------------------------------------------------------------

    def start(self, *args: str, wait_ready: bool = True, env: Mapping[str, str] = {}) -> int:
        """Start ``python -m memsync daemon -v`` (stderr to ``log_path``, extra ``env``); with
        ``wait_ready`` wait until its start-up cycle is done. Returns the log offset where this run starts."""
        assert self.proc is None or self.proc.poll() is not None, f"{self.name}: daemon already running"
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [*self.prefix, self.python, "-m", "memsync", "daemon", "-v", *args],
                env={**os.environ, **self.env, **env},
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        if wait_ready:
            self.wait_ready(offset)
        return offset

    def wait_ready(self, offset: int = 0, timeout: float = 30) -> None:
        """Wait up to ``timeout`` seconds until the daemon started at log ``offset`` finished its start-up
        cycle."""
        wait_for(
            lambda: "start-up cycle done" in self.log(offset) or self.proc_dead(),
            timeout=timeout,
            what=f"{self.name}: daemon start",
        )
        assert not self.proc_dead(), f"{self.name}: daemon died:\n{self.log(offset)}"

    def proc_dead(self) -> bool:
        """True when the daemon process has exited (or never started)."""
        return self.proc is None or self.proc.poll() is not None

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM the daemon and wait; return its exit code."""
        assert self.proc is not None
        if self.proc.poll() is None and not self._terminated:
            self.proc.send_signal(signal.SIGTERM)
        self._terminated = False
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL the daemon (a crash) and reap it."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    @contextmanager
    def running(self, *args: str) -> Iterator[Peer]:
        """The daemon runs inside the block; stopped (and required to exit 0) after it."""
        with running(self, args=args):
            yield self

    def log(self, offset: int = 0) -> str:
        """The daemon's stderr so far (from byte ``offset``)."""
        try:
            return self.log_path.read_bytes()[offset:].decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    # --- what agents do ---------------------------------------------------------------------------

    def append_entry(self, text: str, **fields: Any) -> bytes:
        """Append one entry line to the memory file in one O_APPEND write; return the line."""
        line = entry_line(text, **fields)
        append_once(self.memory_file, line, create=True)
        return line

    def append_daily(self, text: str, day: str = DAY) -> bytes:
        """Append ``text`` (add the newline yourself) to the role's daily log of ``day``; return it."""
        data = text.encode()
        path = self.role_dir / "daily" / f"{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        append_once(path, data, create=True)
        return data

    def write_curated(
        self, slug: str, content: str, *, description: str = "test entry", type_: str = "project"
    ) -> bytes:
        """Atomically write the curated entry ``<slug>.md`` (frontmatter + content); return its bytes."""
        data = (f"---\nname: {slug}\ndescription: {description}\ntype: {type_}\n---\n\n{content}").encode()
        atomic_write(self.role_dir / f"{slug}.md", data)
        return data

    def read_live(self, rel: str) -> bytes:
        """Bytes of a live file: ``memory.jsonl`` is the memory file, anything else is role-relative."""
        path = self.memory_file if rel == MEMORY_FILE else self.role_dir / rel
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return b""

    def read_store(self, rel: str) -> bytes:
        """Bytes of a store work-tree file (store-relative path); b"" when absent."""
        try:
            return (self.store / rel).read_bytes()
        except FileNotFoundError:
            return b""

    def store_git(self, *args: str) -> str:
        """Run git in the store with this peer's environment."""
        return git(self.store, *args, env=self.env)

    def commits(self) -> int:
        """Number of commits on the store's HEAD (0 before the first)."""
        try:
            return int(self.store_git("rev-list", "--count", "HEAD").strip())
        except subprocess.CalledProcessError:
            return 0

    def status(self) -> dict[str, Any]:
        """``memsync status --json`` of this peer, parsed (exit 1 means a store is missing: still JSON);
        in this process (``main``) but for a peer in a network namespace."""
        result = self.cli("status", "--json") if self.netns else self.main("status", "--json")
        assert result.returncode in (0, 1), result.stderr
        parsed: dict[str, Any] = json.loads(result.stdout)
        return parsed

    def load_config(self) -> Any:
        """This peer's parsed config."""
        return load_tracks(self.config)

    def configure(self, remotes: Mapping[str, str] | None = None, **top: object) -> None:
        """Rewrite this peer's config: its store's ``remotes`` (name -> URL, in this order) and the
        top-level keys ``top`` (``network_timeout_s=3.0``, say)."""
        raw = tomllib.loads(self.config.read_text())
        if remotes is not None:
            raw["stores"]["main"]["remotes"] = dict(remotes)
        raw.update(top)
        self.config.write_text(tomli_w.dumps(raw))

    def add_track(self, live: Path, store_path: str | None = None) -> None:
        """Track ``live`` too, at ``store_path`` (default: memsync's default store path)."""
        raw = tomllib.loads(self.config.read_text())
        raw["stores"]["main"]["track"].append(
            {"path": str(live), **({"as": store_path} if store_path else {})}
        )
        self.config.write_text(tomli_w.dumps(raw))


def encrypted(peer: Peer, member: Peer | None = None) -> Peer:
    """``peer`` (its store not made yet) set to encrypt its remote; ``member`` (a device already syncing
    that remote) adds its key first, as `memsync join` tells a user to. Its store is then made in a
    subprocess (its own key, its own transport setup)."""
    raw = tomllib.loads(peer.config.read_text())
    raw["stores"]["main"]["encrypt"] = True
    peer.config.write_text(tomli_w.dumps(raw))
    if member is not None:
        key = re.search(r"key: (age1\w+) (ed25519:\S+)", peer.cli_ok("join", str(peer.home)).stdout)
        assert key is not None
        member.cli_ok("key", "add", key.group(1), key.group(2))
    peer.init_store(own_process=True)
    return peer


def sync(*peers: Peer, timeout: float = 600) -> None:
    """One `memsync sync` on each of ``peers`` in turn; each must exit 0. Through the CLI's entry point in
    this process (``Peer.main``), or, for a peer in a network namespace, a process bounded by ``timeout``."""
    for peer in peers:
        done = peer.cli("sync", timeout=timeout) if peer.netns else peer.main("sync")
        assert done.returncode == 0, f"{peer.name}: sync exited {done.returncode}: {done.stderr}"


@contextmanager
def running(
    *peers: Peer, args: tuple[str, ...] = (), ready: bool = True, ready_timeout: float = 30
) -> Iterator[None]:
    """Start the daemons of ``peers`` together, wait (up to ``ready_timeout`` seconds each) until all are
    ready (unless not ``ready``: a start-up cycle may wait for a dead remote); at the end stop them
    together and require exit code 0 from each."""
    offsets = [peer.start(*args, wait_ready=False) for peer in peers]
    try:
        for peer, offset in zip(peers, offsets, strict=True):
            if ready:
                peer.wait_ready(offset, timeout=ready_timeout)
        yield
    finally:
        live = [peer for peer in peers if not peer.proc_dead()]
        for peer in live:
            assert peer.proc is not None
            peer.proc.send_signal(signal.SIGTERM)
            peer._terminated = True
        for peer in live:
            code = peer.stop()
            assert code == 0, f"{peer.name}: daemon exited {code}:\n{peer.log()}"

"""A real OpenSSH server in front of bare repositories, and the ssh setup of a peer's HOME.

``SshServer.running(root)`` starts Debian's ``sshd`` on a free port of 127.0.0.1 (or on port 22 of a
network namespace) with a throwaway host key and one authorized client key; it logs in the user running
the tests, and a bare repository at ``/abs/path`` is ``server.url(path)``. ``setup_client(home)`` gives a
peer what a user would have: a key pair, ``~/.ssh/config`` naming the host and its ``known_hosts``, and
git's ``core.sshCommand`` pointing ssh at that config (ssh finds ``~/.ssh`` through the password database,
not ``$HOME``, so an isolated HOME needs ``-F``).
"""

from __future__ import annotations

import getpass
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.helpers import git
from tests.support.servers.process import free_port, require, start, stop, wait_started


def keygen(path: Path, comment: str) -> str:
    """Make an ed25519 key pair at ``path`` (no passphrase); return the public key line."""
    subprocess.run(
        [
            require("ssh-keygen", "openssh-client"),
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            comment,
            "-f",
            str(path),
        ],
        check=True,
        capture_output=True,
    )
    return Path(f"{path}.pub").read_text().strip()


@dataclass
class SshServer:
    """A running ``sshd``: ``host``:``port``, login ``user``, its host key (``host_key_pub``, the public
    line) and the authorized client key (``client_key``, a private key file)."""

    root: Path
    host: str
    port: int
    netns: str | None
    user: str = field(default_factory=getpass.getuser)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        """sshd's log (``-E``)."""
        return self.root / "sshd.log"

    @property
    def client_key(self) -> Path:
        """The private key that ``authorized_keys`` lets in."""
        return self.root / "client_ed25519"

    @property
    def host_key_pub(self) -> str:
        """The server's public host key line (``ssh-ed25519 AAAA... comment``)."""
        return (self.root / "host_ed25519.pub").read_text().strip()

    @classmethod
    @contextmanager
    def running(cls, root: Path, *, host: str = "127.0.0.1", netns: str | None = None) -> Iterator[SshServer]:
        """Lay out keys and config under ``root`` and run sshd for the block (always stopped after).
        In ``netns`` it listens on port 22 of every address there. Raises ``Unavailable``."""
        require("sshd", "openssh-server")
        root.mkdir(parents=True, exist_ok=True)
        server = cls(root, host, 22 if netns else free_port(host), netns)
        keygen(root / "host_ed25519", "memsync-test-host")
        authorized = keygen(server.client_key, "memsync-test-client")
        (root / "authorized_keys").write_text(authorized + "\n")
        if os.geteuid() == 0:
            # sshd's privilege separation needs it (Debian's service unit creates it at boot).
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        config = root / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"ListenAddress {'0.0.0.0' if netns else host}:{server.port}",
                    f"HostKey {root / 'host_ed25519'}",
                    f"AuthorizedKeysFile {root / 'authorized_keys'}",
                    f"PidFile {root / 'sshd.pid'}",
                    f"AllowUsers {server.user}",
                    "PermitRootLogin prohibit-password",
                    "AuthenticationMethods publickey",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "PrintMotd no",
                    "UseDNS no",
                    # Many peers connect at once; a session whose client vanished (a cut link) ends.
                    "MaxStartups 200",
                    "MaxSessions 200",
                    "ClientAliveInterval 5",
                    "ClientAliveCountMax 3",
                    "LogLevel INFO",
                    "",
                ]
            )
        )
        try:
            server.start()
            yield server
        finally:
            server.stop()

    def start(self) -> None:
        """Start sshd (again, after ``stop``: a host back from an outage) and wait until it listens."""
        offset = self.log.stat().st_size if self.log.exists() else 0
        command = [require("sshd", "openssh-server"), "-D", "-e", "-f", str(self.root / "sshd_config")]
        self.proc = start([*command, "-E", str(self.log)], self.log, netns=self.netns)
        wait_started(self.proc, self.log, "Server listening on", "sshd", offset=offset)

    def stop(self) -> None:
        """Kill sshd and every session it runs (a host going down)."""
        stop(self.proc)

    def url(self, repo: Path) -> str:
        """The ``ssh://`` URL of the repository at absolute path ``repo`` on this server."""
        port = "" if self.port == 22 else f":{self.port}"
        return f"ssh://{self.user}@{self.host}{port}{repo}"

    def known_hosts_line(self, key: str | None = None) -> str:
        """A ``known_hosts`` line for this server's address with ``key`` (default: its real host key)."""
        name = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
        return f"{name} {key or self.host_key_pub}"

    def setup_client(
        self, home: Path, *, key: Path | None = None, known_hosts: str | None = None
    ) -> dict[str, str]:
        """Set up ssh in ``home`` as its user would: the private ``key`` (default: the authorized one) as
        ``~/.ssh/id_ed25519``, ``~/.ssh/config`` for this host, ``known_hosts`` (default: this server's
        line; "" for an unknown host), and ``core.sshCommand`` in ``home/.gitconfig``. No
        ``StrictHostKeyChecking`` and no ``BatchMode``: keeping ssh from prompting is memsync's job.
        Returns the environment the peer needs on top (none)."""
        ssh_dir = home / ".ssh"
        ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        identity = ssh_dir / "id_ed25519"
        identity.write_bytes((key or self.client_key).read_bytes())
        identity.chmod(0o600)
        known = ssh_dir / "known_hosts"
        known.write_text(self.known_hosts_line() + "\n" if known_hosts is None else known_hosts)
        config = ssh_dir / "config"
        config.write_text(
            f"Host {self.host}\n"
            f"    Port {self.port}\n"
            f"    User {self.user}\n"
            f"    IdentityFile {identity}\n"
            "    IdentitiesOnly yes\n"
            f"    UserKnownHostsFile {known}\n"
            "    GlobalKnownHostsFile /dev/null\n"
        )
        git(home, "config", "--file", str(home / ".gitconfig"), "core.sshCommand", f"ssh -F {config}")
        return {}

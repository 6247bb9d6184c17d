"""git's smart HTTP behind a real web server: nginx with TLS and basic auth in front of fcgiwrap running
``git http-backend``, and the HTTPS setup of a peer's HOME.

``HttpsServer.running(root, projects)`` makes a test CA and a server certificate for ``host`` with
``openssl``, an htpasswd entry for one user with a random password, and serves every bare repository
under ``projects`` at ``https://HOST:PORT/git/<path under projects>`` (pushes need the login: git
http-backend enables receive-pack for an authenticated ``REMOTE_USER``). ``setup_client(home)`` does
what a user of such a host does: trust the CA (``http.<url>.sslCAInfo``) and keep the login in a
credential helper (``credential.helper store`` with a file in HOME), never in the remote's URL.
"""

from __future__ import annotations

import getpass
import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.helpers import git, wait_for
from tests.support.servers.process import Unavailable, free_port, require, start, stop, wait_started

HTTP_BACKEND = Path("/usr/lib/git-core/git-http-backend")
USER = "memsync"


def _openssl(*args: str, stdin: str | None = None) -> str:
    result = subprocess.run(
        [require("openssl", "openssl"), *args], input=stdin, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip()}")
    return result.stdout


def make_certificates(root: Path, host: str) -> None:
    """``ca.crt`` (a throwaway CA) and ``server.crt``/``server.key`` for IP ``host``, signed by it."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        "req", "-x509", *ec, "-keyout", str(root / "ca.key"), "-out", str(root / "ca.crt"), "-days", "2",
        "-subj", "/CN=memsync test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
    )  # fmt: skip
    _openssl(
        "req",
        *ec,
        "-keyout",
        str(root / "server.key"),
        "-out",
        str(root / "server.csr"),
        "-subj",
        f"/CN={host}",
    )
    (root / "server.ext").write_text(f"subjectAltName=IP:{host}\nextendedKeyUsage=serverAuth\n")
    _openssl(
        "x509", "-req", "-in", str(root / "server.csr"), "-CA", str(root / "ca.crt"),
        "-CAkey", str(root / "ca.key"), "-CAcreateserial", "-days", "2",
        "-extfile", str(root / "server.ext"), "-out", str(root / "server.crt"),
    )  # fmt: skip


@dataclass
class HttpsServer:
    """A running nginx + fcgiwrap: ``host``:``port``, the login (``user``, ``password``) and the CA
    certificate peers must trust (``ca``)."""

    root: Path
    projects: Path
    host: str
    port: int
    password: str
    netns: str | None = None
    user: str = USER
    nginx: subprocess.Popen[bytes] | None = None
    fcgiwrap: subprocess.Popen[bytes] | None = None

    @property
    def ca(self) -> Path:
        """The test CA's certificate (PEM)."""
        return self.root / "ca.crt"

    @property
    def base(self) -> str:
        """``https://HOST:PORT``."""
        return f"https://{self.host}:{self.port}"

    @classmethod
    @contextmanager
    def running(
        cls, root: Path, projects: Path, *, host: str = "127.0.0.1", netns: str | None = None
    ) -> Iterator[HttpsServer]:
        """Serve the bare repositories under ``projects`` for the block (always stopped after); in
        ``netns`` on port 443 of every address there. Raises ``Unavailable``."""
        require("nginx", "nginx")
        require("fcgiwrap", "fcgiwrap")
        if not HTTP_BACKEND.is_file():
            raise Unavailable(f"{HTTP_BACKEND} is missing: git is not installed as Debian installs it")
        root.mkdir(parents=True, exist_ok=True)
        port = 443 if netns else free_port(host)
        server = cls(root, projects, host, port, secrets.token_urlsafe(12), netns=netns)
        make_certificates(root, host)
        hashed = _openssl("passwd", "-6", "-stdin", stdin=server.password + "\n").strip()
        (root / "htpasswd").write_text(f"{server.user}:{hashed}\n")
        (root / "nginx.conf").write_text(server._nginx_conf(netns is not None))
        (root / "tmp").mkdir(exist_ok=True)
        try:
            server.start()
            yield server
        finally:
            server.stop()

    def start(self) -> None:
        """Start fcgiwrap and nginx (again, after ``stop``: a host back from an outage)."""
        root, socket = self.root, self.root / "fcgiwrap.sock"
        socket.unlink(missing_ok=True)
        command = [require("fcgiwrap", "fcgiwrap"), "-c", "4", "-s", f"unix:{socket}"]
        wrapper = self.fcgiwrap = start(command, root / "fcgiwrap.log", netns=self.netns)
        wait_for(lambda: socket.exists() or wrapper.poll() is not None, what="fcgiwrap's socket")
        log = root / "error.log"
        offset = log.stat().st_size if log.exists() else 0
        command = [require("nginx", "nginx"), "-p", str(root), "-c", str(root / "nginx.conf"), "-e", str(log)]
        self.nginx = start(command, root / "nginx.log", netns=self.netns)
        wait_started(self.nginx, log, "start worker process", "nginx", offset=offset)

    def stop(self) -> None:
        """Kill nginx and fcgiwrap with what they run (a host going down)."""
        stop(self.nginx)
        stop(self.fcgiwrap)

    def _nginx_conf(self, in_netns: bool) -> str:
        root = self.root
        # As root, nginx's workers would run as nobody, who cannot use fcgiwrap's socket.
        user = f"user {getpass.getuser()};\n" if os.geteuid() == 0 else ""
        temp = "".join(
            f"    {kind}_temp_path {root / 'tmp' / kind};\n"
            for kind in ("client_body", "fastcgi", "proxy", "scgi", "uwsgi")
        )
        return f"""{user}daemon off;
worker_processes 1;
pid {root / "nginx.pid"};
error_log {root / "error.log"} notice;
events {{ worker_connections 512; }}
http {{
    access_log {root / "access.log"};
{temp}    server {{
        listen {"0.0.0.0" if in_netns else self.host}:{self.port} ssl;
        ssl_certificate {root / "server.crt"};
        ssl_certificate_key {root / "server.key"};
        location ~ ^/git(/.*)$ {{
            auth_basic "memsync test";
            auth_basic_user_file {root / "htpasswd"};
            client_max_body_size 0;
            fastcgi_request_buffering off;
            fastcgi_buffering off;
            fastcgi_read_timeout 300s;
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME {HTTP_BACKEND};
            fastcgi_param GIT_PROJECT_ROOT {self.projects};
            fastcgi_param GIT_HTTP_EXPORT_ALL "";
            fastcgi_param PATH_INFO $1;
            fastcgi_pass unix:{root / "fcgiwrap.sock"};
        }}
    }}
}}
"""

    def url(self, repo: Path) -> str:
        """The URL of the bare repository ``repo`` (under ``projects``), without any credential."""
        return f"{self.base}/git/{repo.relative_to(self.projects).as_posix()}"

    def setup_client(self, home: Path, *, password: str | None = None) -> dict[str, str]:
        """Trust the test CA and store the login (``password``, default the right one) in git's
        credential store in ``home``, as a user of this host would (``home/.gitconfig``). Returns the
        environment the peer needs on top: ``GIT_SSL_CAINFO``, which outranks ``http.sslCAInfo`` and is
        set machine-wide on some machines (this one), names the test CA too."""
        credentials = home / ".git-credentials"
        credentials.write_text(f"https://{self.user}:{password or self.password}@{self.host}:{self.port}\n")
        credentials.chmod(0o600)
        gitconfig = str(home / ".gitconfig")
        git(home, "config", "--file", gitconfig, f"http.{self.base}/.sslCAInfo", str(self.ca))
        git(
            home,
            "config",
            "--file",
            gitconfig,
            f"credential.{self.base}.helper",
            f"store --file={credentials}",
        )
        return {"GIT_SSL_CAINFO": str(self.ca)}

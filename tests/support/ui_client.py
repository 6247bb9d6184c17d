"""A running `memsync ui` for tests and a client that talks to it as the page does: the token once, then
the session cookie; each change a same-origin POST with the page's CSRF token."""

from __future__ import annotations

import http.cookiejar
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class UiClient:
    """The server's ``origin`` and ``token``; a browser's cookie jar; the CSRF token of the last page."""

    origin: str
    token: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)
    csrf: str = ""

    @property
    def url(self) -> str:
        """The URL `memsync ui` printed."""
        return f"{self.origin}/?token={self.token}"

    def _open(self, request: urllib.request.Request) -> tuple[int, str]:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        try:
            with opener.open(request, timeout=60) as reply:
                status, page = reply.status, reply.read().decode()
        except urllib.error.HTTPError as exc:
            status, page = exc.code, exc.read().decode()
        found = re.search(r'name=csrf value="([^"]+)"', page)
        self.csrf = found.group(1) if found else self.csrf
        return status, page

    def get(self, where: str, /, **params: str) -> tuple[int, str]:
        """GET the page ``where`` with ``params`` and the token: (status, page)."""
        query = urllib.parse.urlencode({**params, "token": self.token})
        return self._open(urllib.request.Request(f"{self.origin}{where}?{query}"))

    def post(self, path: str, fields: Mapping[str, str], referer: str = "") -> tuple[int, str]:
        """POST ``fields`` (plus the CSRF token of the last page) to ``path`` from the page's origin,
        following the redirect: (status, page)."""
        data = urllib.parse.urlencode({"csrf": self.csrf, **fields}).encode()
        headers = {"Origin": self.origin, **({"Referer": f"{self.origin}{referer}"} if referer else {})}
        request = urllib.request.Request(
            f"{self.origin}{path}?token={self.token}", data=data, headers=headers, method="POST"
        )
        return self._open(request)


@contextmanager
def ui_server(env: Mapping[str, str] = {}) -> Iterator[UiClient]:
    """`memsync ui --no-browser` running with ``env`` over the environment, until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memsync", "ui", "--no-browser"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        assert found, line
        yield UiClient(found.group(1), found.group(2))
    finally:
        proc.terminate()
        proc.wait(timeout=20)

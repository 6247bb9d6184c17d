"""`memsync ui` as a real server subprocess spoken to with urllib: the token, the same-origin POST with
its CSRF token, the loopback-only socket, and a proposal approved through the page."""

from __future__ import annotations

import http.cookiejar
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import bare_remote, run_cli
from tests.support.peers import HEADER

TEXT = "The nightly job needs the cache warmed first."


def _ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def proposal(home: Path, tmp_path: Path) -> tuple[Path, str]:
    """A team store set to review tracking ~/team/shared.jsonl, and one proposal for it: (file, id)."""
    _ok("init", "--host", "ada")
    _ok("store", "add", "team", "--remote", str(bare_remote(tmp_path / "team.git")), "--review")
    live = home / "team" / "shared.jsonl"
    live.parent.mkdir()
    live.write_bytes(HEADER)
    _ok("track", str(live), "--store", "team", "--yes")
    said = _ok("remember", TEXT, "--file", str(live), "--propose", "--source", "session:agent")
    return live, said.split()[1]


@pytest.fixture
def server(proposal: tuple[Path, str]) -> Iterator[str]:
    """A running `memsync ui --no-browser`: the URL it printed (with its token)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memsync", "ui", "--no-browser"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        assert found, line
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=20) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _post(url: str, fields: dict[str, str], headers: dict[str, str]) -> int:
    data = urllib.parse.urlencode(fields).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    # A browser's cookie jar: the redirect after a decision carries the session cookie, not the token.
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        with opener.open(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _split(url: str) -> tuple[str, str]:
    origin, _, token = url.partition("/?token=")
    return origin, token


def test_a_request_without_the_token_is_refused(server: str) -> None:
    origin, token = _split(server)
    assert _get(f"{origin}/")[0] == 403
    assert _get(f"{origin}/review?token=wrong{token}")[0] == 403
    status, page = _get(server)
    assert status == 200 and "shared.jsonl" in page and "team" in page


@pytest.mark.slow  # a store, a proposal, a server and two CLI runs: about 30 s on a busy machine
def test_only_a_same_origin_post_with_the_csrf_token_decides(server: str, proposal: tuple[Path, str]) -> None:
    live, pid = proposal
    origin, token = _split(server)
    status, page = _get(f"{origin}/review?token={token}")
    assert status == 200 and TEXT in page and f'value="{pid}"' in page
    csrf = re.search(r'name=csrf value="([^"]+)"', page)
    assert csrf
    approve = f"{origin}/review/approve?token={token}"
    fields = {"id": pid, "csrf": csrf.group(1)}
    assert _post(approve, fields, {"Origin": "http://evil.example"}) == 403
    assert _post(approve, fields, {}) == 403
    assert _post(approve, {"id": pid, "csrf": "forged"}, {"Origin": origin}) == 403
    assert TEXT not in live.read_text()
    assert "approved" not in _ok("review", "--all")

    assert _post(approve, fields, {"Origin": origin}) == 200  # redirected to the review page
    assert TEXT in live.read_text()
    assert f"{pid}  approved by" in _ok("review", "--all")


def test_the_server_listens_on_loopback_only(server: str) -> None:
    origin, _ = _split(server)
    port = int(origin.rsplit(":", 1)[1])
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet sent: only picks this machine's outward address
        outward = probe.getsockname()[0]
    except OSError:
        outward = ""
    finally:
        probe.close()
    if not outward or outward.startswith("127."):
        pytest.skip("this machine has no address but loopback to try")
    with pytest.raises(OSError):
        socket.create_connection((outward, port), timeout=5).close()
    # A name other than the loopback address in the Host header (DNS rebinding) is refused too.
    assert _get(server, {"Host": f"attacker.example:{port}"})[0] == 403

"""A git host that accepts the TCP connection and never answers
(``tests.support.servers.process.Blackhole``), over
ssh and over HTTPS: `memsync sync` gives one line naming the timeout once ``network_timeout_s`` has passed,
never a prompt or a hang, and leaves no git or ssh process behind."""

from __future__ import annotations

import re
from pathlib import Path

import psutil
import pytest

from tests.support.servers.process import blackhole
from tests.support.servers.transport import CANNOT_REACH, LOG_LINE, Remote, sync_on_tty

TIMEOUT_S = 3


def _leftovers(store: Path) -> list[str]:
    """git, ssh or git-remote-https processes still working for the store at ``store``."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "cwd"]):
        text = " ".join(proc.info["cmdline"] or ())
        if proc.info["name"] in ("git", "ssh", "git-remote-https") and (
            str(store) in text or str(store) in (proc.info["cwd"] or "")
        ):
            found.append(text)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ssh", "https"])
def test_a_host_that_never_answers_is_one_line_after_network_timeout_s(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    remote: Remote = request.getfixturevalue(f"{kind}_remote")
    alice = remote.peer(tmp_path, "alice")
    entry = alice.append_entry("Written while the git host hung.")
    with blackhole() as hole:
        port = re.search(r":(\d+)/", remote.url)
        assert port is not None
        text = alice.config.read_text().replace(remote.url, remote.url.replace(port[0], f":{hole.port}/", 1))
        alice.config.write_text(f"network_timeout_s = {TIMEOUT_S}\n{text}")
        run = sync_on_tty(alice)
    assert run.terminal == "", f"something asked on the terminal: {run.terminal!r}"
    assert run.returncode == 75, run.stderr  # committed, not pushed
    assert all(LOG_LINE.match(line) for line in run.stderr.splitlines()), run.stderr
    error = alice.status()["stores"]["main"]["remotes"]["origin"]["last_error"]
    assert "\n" not in error
    assert re.fullmatch(rf"{CANNOT_REACH}.*\b{TIMEOUT_S}(\.0)? ?(s|secs?|seconds)\b.*", error), error
    assert "time" in error
    assert _leftovers(alice.store) == []
    assert entry in alice.read_store("memory/memory.jsonl")

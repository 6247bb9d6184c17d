"""The environment under which git, and the ssh it starts, never asks anything (DESIGN "One sync cycle"
step 4: git runs non-interactively with timeouts). Every git that memsync runs against a remote uses it:
the store's fetch and push, setup's questions to a remote, doctor's reachability check."""

from __future__ import annotations

import functools
import os

from memsync.config import git_config_value

# Longest a stalled HTTP transfer is waited for (seconds); ssh's own limits are below.
HTTP_STALL_CAP_S = 30


def noninteractive_env(network_timeout_s: float) -> dict[str, str]:
    """Variables to add to git's environment: no terminal or askpass prompt; ssh in batch mode (no host
    key, passphrase or password question) on top of the user's own ssh command (``GIT_SSH_COMMAND``, else
    ``core.sshCommand``, so their ``-F`` config, keys and known_hosts still count), connecting within
    10 s and giving up on a silent server after 30 s; an HTTP transfer that stalls for
    ``network_timeout_s`` seconds (at most 30) abandoned."""
    ssh = os.environ.get("GIT_SSH_COMMAND") or _user_ssh_command() or "ssh"
    return {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "SSH_ASKPASS": "true",
        "SSH_ASKPASS_REQUIRE": "never",
        "GCM_INTERACTIVE": "never",
        "GIT_SSH_COMMAND": f"{ssh} -o BatchMode=yes -o ConnectTimeout=10 "
        "-o ServerAliveInterval=15 -o ServerAliveCountMax=2",
        "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
        "GIT_HTTP_LOW_SPEED_TIME": str(max(1, min(HTTP_STALL_CAP_S, int(network_timeout_s)))),
    }


@functools.lru_cache(maxsize=1)
def _user_ssh_command() -> str | None:
    """The user's ``core.sshCommand``, read once per process (a daemon opens its store every cycle)."""
    return git_config_value("core.sshCommand")

"""Helpers shared by the tests: waiting on conditions, running git and the CLI for real."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("MEMSYNC_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
# The one credential in the corpus (file, line, detector): test users' passwords written as
# `user`/`password` with no keyword ("`secretary-test`/`Sec#Acmp2026`"); its README lists the admin
# password it replaced, not these. The scanner holds that entry back; everything else syncs.
CORPUS_CREDENTIAL = ("skill/acmp-claude/p13-recording-upload.md", 14, "User and password")


def wait_for(predicate: Callable[..., T], timeout: float = 20.0, interval: float = 0.05, what: str = "") -> T:
    """Poll ``predicate()`` until it returns a truthy value (returned), or raise AssertionError after
    ``timeout`` seconds. ``predicate`` is called without arguments; its parameters may have defaults (a
    lambda in a loop binds the loop's value as ``lambda line=line: ...``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate!r}")
        time.sleep(interval)


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run real ``git`` in ``cwd`` and return its stdout; raise CalledProcessError with stderr on failure."""
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, result.args, result.stdout, result.stderr)
    return result.stdout


def bare_remote(path: Path) -> Path:
    """Create an empty bare repository at ``path`` (branch main) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "--bare", "-q", "-b", "main", str(path))
    return path


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m memsync ARGS`` as a real subprocess and return the completed process (whatever
    its exit code)."""
    return subprocess.run(
        [sys.executable, "-m", "memsync", *args],
        cwd=cwd,
        input=input,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def cli_main(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``memsync ARGS`` through the CLI's entry point (``memsync.cli.main``) in this process and return
    what ``run_cli`` returns. It is the path a ``python -m memsync`` process takes once its interpreter has
    started (argument parsing, the command, its log lines on stderr, the one-line error edge, the exit code)
    without the half second of CPU a new interpreter spends importing memsync. ``env`` is set in
    ``os.environ`` for the call only.

    Not for what only a process shows: help text fitted to a terminal, signals, timeouts, stdin."""
    from memsync.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        _environ(env or {}),
        _fresh_caches(),
        _fresh_logging(),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(args))
    return subprocess.CompletedProcess(["memsync", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _fresh_caches() -> Iterator[None]:
    """memsync's per-process caches (its ``functools`` caches, such as the user's ``core.sshCommand``)
    empty for the call, as in a new process, and emptied again after it: a value read under one call's
    environment (its HOME) must not serve another test's call in this process."""

    def clear() -> None:
        for name, module in list(sys.modules.items()):
            if name == "memsync" or name.startswith("memsync."):
                for value in list(vars(module).values()):
                    if getattr(value, "__module__", None) == name and hasattr(value, "cache_clear"):
                        value.cache_clear()

    clear()
    try:
        yield
    finally:
        clear()


@contextlib.contextmanager
def _fresh_logging() -> Iterator[None]:
    """Logging as a new process has it for the call: the root logger without pytest's handlers, so that
    the CLI's own set-up (``logging.basicConfig`` on stderr, at the level its flags ask for) takes effect,
    and every logger's level, filters and handlers as they were before, put back after (a command sets
    the levels of memsync's loggers for its one run)."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    saved = {
        id(logger): (logger.level, logger.filters[:], logger.handlers[:], logger.disabled)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    }
    root = logging.getLogger()
    root.handlers.clear()
    try:
        yield
    finally:
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
            if isinstance(logger, logging.Logger):
                level, filters, handlers, disabled = saved.get(id(logger), (logging.NOTSET, [], [], False))
                logger.setLevel(level)
                logger.filters[:], logger.handlers[:], logger.disabled = filters, handlers, disabled


@contextlib.contextmanager
def _environ(env: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def remote_blobs(repo: Path) -> list[bytes]:
    """Every blob reachable from any ref of ``repo`` (bare or not)."""
    listing = subprocess.run(
        ["git", "rev-list", "--objects", "--all"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    shas = [word for word in listing if len(word) == 40]
    out = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo,
        capture_output=True,
        check=True,
        input="".join(f"{sha}\n" for sha in shas).encode(),
    ).stdout
    blobs, pos = [], 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        _, kind, size = out[pos:header_end].split()
        if kind == b"blob":
            blobs.append(out[header_end + 1 : header_end + 1 + int(size)])
        pos = header_end + 1 + int(size) + 1
    return blobs


def commit_messages(repo: Path) -> list[str]:
    """The message of every commit reachable from any ref of ``repo`` (bare or not)."""
    out = subprocess.run(
        ["git", "log", "--all", "--format=%B%x00"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return [message.strip() for message in out.split("\0") if message.strip()]


def reachable_paths(repo: Path) -> set[str]:
    """The path of every tree and blob reachable from any ref of ``repo``: the names git holds."""
    listing = subprocess.run(
        ["git", "rev-list", "--objects", "--all"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return {line.split(" ", 1)[1] for line in listing.splitlines() if " " in line}


def run_hook(command: str, payload: Mapping[str, object], env: Mapping[str, str], cwd: Path) -> str:
    """Run the hook ``command`` an install wrote as the host does (through a shell, in the session's
    directory, ``payload`` on stdin); it must exit 0 with nothing on stderr. Returns the
    additionalContext it printed for the payload's ``hook_event_name`` ("" for no output)."""
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    if not done.stdout:
        return ""
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == payload["hook_event_name"]
    context: str = out["hookSpecificOutput"]["additionalContext"]
    return context

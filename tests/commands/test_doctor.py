"""`memsync doctor`: one OK/WARN/FAIL line per check, exit 1 on any FAIL (issue 5)."""

from __future__ import annotations

import time
from pathlib import Path

from memsync.commands import doctor, setup
from memsync.tracks.resolve import load_tracks
from tests.support.helpers import git, run_cli


def _lines(stdout: str) -> dict[str, str]:
    """``what`` -> level, from the printed lines."""
    out = {}
    for line in stdout.splitlines():
        level, rest = line.split(None, 1)
        assert level in ("OK", "WARN", "FAIL"), line
        out[rest.split(":", 1)[0]] = level
    return out


def _levels() -> dict[str, str]:
    return _lines("\n".join(check.line() for check in doctor.run_checks()))


def _bare(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    return path


def test_doctor_without_config_fails_on_the_config_line(home: Path) -> None:
    result = run_cli("doctor")
    assert result.returncode == 1
    levels = _lines(result.stdout)
    assert levels["git"] == "OK" and levels["config"] == "FAIL"
    assert "memsync init" in result.stdout


def test_doctor_on_a_fresh_setup(home: Path, tmp_path: Path) -> None:
    remote = _bare(tmp_path / "remote.git")
    setup.init(remote=str(remote))

    result = run_cli("doctor")

    assert result.returncode == 0, result.stdout + result.stderr
    levels = _lines(result.stdout)
    assert levels == {
        "git": "OK",
        "recall": "OK",
        "config": "OK",
        "identity": "OK",
        "store personal": "OK",
        "store personal merge drivers": "OK",
        "remote personal/origin": "OK",
        "clock vs personal": "OK",
        "clock vs peers of personal": "OK",
        "future entries in personal": "OK",
        "conflicts in personal": "OK",
        "inotify": "OK",
        "agent hosts": "OK",
        "daemon": "WARN",
        "service": "WARN",
    }


def test_doctor_fails_on_unreachable_remote_and_broken_store(home: Path, tmp_path: Path) -> None:
    remote = _bare(tmp_path / "remote.git")
    setup.init(remote=str(remote))
    store = home / ".local/share/memsync/stores/personal"
    remote.rename(tmp_path / "gone.git")
    # Lose the object of the commit HEAD points at: fsck --connectivity-only must notice.
    head = git(store, "rev-parse", "HEAD").strip()
    (store / ".git" / "objects" / head[:2] / head[2:]).unlink()

    levels = _levels()

    assert levels["remote personal/origin"] == "FAIL" and levels["store personal"] == "FAIL"


def test_clock_check_warns_about_peer_commits_from_the_future(home: Path, tmp_path: Path) -> None:
    remote = _bare(tmp_path / "remote.git")
    setup.init(remote=str(remote))
    store = load_tracks().stores["personal"]
    git(store.path, "fetch", "-q", "origin")

    assert doctor.check_clock(store).level == "OK"
    # As if this machine's clock were an hour behind the peer that made the commits.
    late = doctor.check_clock(store, now=time.time() - 3600)
    assert late.level == "WARN" and "in the future" in late.detail
